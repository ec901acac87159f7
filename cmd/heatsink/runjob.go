package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/console"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/heatsink-hpc/heatsink/tune"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

// runJob is heatsink run: the flags checked, one call, the outcome printed.
func runJob(cmd *cobra.Command, rf *runFlags, args []string) error {
	cfg, err := runConfig(cmd, rf, args)
	if err != nil {
		return err
	}
	ro, err := runOptions(cmd, rf, cfg, args)
	if err != nil {
		return err
	}
	res, err := node.Run(cmd.Context(), cfg, ro)
	if err != nil {
		return err
	}
	code := 0
	if res.JobStatus != nil {
		code = *res.JobStatus
	}
	if res.Status == workloads.StatusInterrupted && code == 0 {
		code = 128 + int(res.Signal)
	}
	summary := fmt.Sprintf("heatsink: run %s: %s, %s", res.RunID, res.Status, count(res.Iterations, "iteration"))
	if res.JobStatus != nil {
		summary += fmt.Sprintf(", job exit status %d", *res.JobStatus)
	}
	if res.Dir != "" {
		summary += " -> " + absDir(res.Dir)
	}
	if console.IsTerminal(os.Stderr) {
		fmt.Fprintln(cmd.ErrOrStderr(), summary)
	} else { // one format on a logged stream
		attrs := []any{"run", res.RunID, "status", res.Status, "iterations", res.Iterations}
		if res.JobStatus != nil {
			attrs = append(attrs, "job_exit_status", *res.JobStatus)
		}
		if res.Dir != "" {
			attrs = append(attrs, "out", absDir(res.Dir))
		}
		slog.Info("run finished", attrs...)
	}
	var reportErr error
	if rf.withReport && res.Dir != "" {
		reportErr = reportRun(cmd, res.Dir)
	}
	if err := errors.Join(res.Err, reportErr); err != nil {
		return &exitError{code: max(code, 1), err: err}
	}
	if code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// runConfig loads the configuration with the flags over it and refuses
// what cannot make a run.
func runConfig(cmd *cobra.Command, rf *runFlags, args []string) (*configs.Config, error) {
	cfg, err := loadConfig(cmd, rf.configPath)
	if err != nil {
		return nil, err
	}
	if cmd.Flags().Changed("grace") {
		workloads.RunnerConfigOf(cfg).Grace = rf.grace
	}
	if err := applyInfluxFlags(cmd, cfg); err != nil {
		return nil, err
	}
	if err := applyStdoutFlag(cmd, cfg); err != nil {
		return nil, err
	}
	if rf.out == "" && !node.HasSinks(cfg) {
		return nil, fmt.Errorf("nowhere to write: give --out DIR, --stdout, --influx-url, or a sink in the config")
	}
	if rf.withReport && rf.out == "" {
		return nil, errors.New("--report analyses the run directory: give --out DIR too")
	}
	if rf.out != "" {
		if err := checkNewRunDir(rf.out); err != nil {
			return nil, err
		}
	}
	// --stdout alone means lp, so "--stdout json" leaves json as the
	// command to run: say what was meant instead of running it.
	if f := cmd.Flags().Lookup("stdout"); f.Changed && rf.stdout == f.NoOptDefVal && len(args) > 0 &&
		cmd.ArgsLenAtDash() != 0 && (args[0] == "lp" || args[0] == "json") {
		return nil, fmt.Errorf("--stdout takes its format after '=': --stdout=%s", args[0])
	}
	return cfg, nil
}

// runOptions resolves the job: everything that can be wrong with it is
// found now, before the run directory exists and before the baseline.
func runOptions(cmd *cobra.Command, rf *runFlags, cfg *configs.Config, args []string) (node.RunOptions, error) {
	ro := node.RunOptions{Options: node.Options{OutDir: rf.out, Command: os.Args, Versions: versions()}}
	job, err := tune.TunedJob(rf.tuned, rf.workload, rf.sets, args)
	if err != nil {
		return ro, err
	}
	opts, err := jobOptions(job, cmd.ErrOrStderr())
	if err != nil {
		return ro, err
	}
	if opts.Command != nil { // the job does not inherit the {env: NAME} secrets
		opts.Command.DropEnv = cfg.SecretEnv()
	}
	// With --launcher slurm the job becomes an srun over an allocation.
	if ro.Launch, err = node.NewSlurmLaunch(rf.launcher, rf.nodes, rf.partition, cfg, &opts); err != nil {
		return ro, err
	}
	cd, auto, err := workloads.ParseCooldown(rf.cooldown)
	if err != nil {
		return ro, err
	}
	opts.Protocol = workloads.Protocol{Baseline: rf.baseline, Load: rf.load, Cooldown: cd, CooldownAuto: auto, WaitNominal: rf.waitNominal}
	opts.Config = *workloads.RunnerConfigOf(cfg)
	disp := newProgress(cmd)
	opts.Stdout, opts.Stderr = io.Writer(os.Stdout), disp.LogWriter()
	if *collectors.StdoutOf(cfg) != "" {
		opts.Stdout = os.Stderr // stdout carries the points,
		cmd.SetOut(os.Stderr)   // and so not the report either
	}
	ro.Runner = opts
	if ro.Hold, err = holdOptions(rf); err != nil {
		return ro, err
	}
	ro.Sinks = append(ro.Sinks, disp)
	ro.Watch = func(ctx context.Context, r *workloads.Runner) func() { return showProgress(ctx, disp, r.Progress) }
	return ro, nil
}
