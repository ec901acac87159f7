package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/analysis/report"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

func newRunCmd() *cobra.Command {
	var (
		configPath, out, stdout, workload, cooldown string
		sets                                        []string
		baseline, load, grace                       time.Duration
		waitNominal, withReport                     bool
		launcher, partition                         string
		nodes                                       int
	)
	cmd := &cobra.Command{
		Use:   "run [flags] [--workload NAME [--set key=value]... | -- CMD ARGS...]",
		Short: "Run a job under thermal monitoring: idle baseline, load, cooldown, recorded as one run",
		Long: `run starts the collector and performs the protocol of the reference study,
recording each phase as events (points of measurement "event" and entries in
run.json):

  baseline   the node idles for --baseline (skipped when 0)
  wait       with --wait-nominal, until every watched temperature is back within
             runner.tolerance_c of its baseline mean (or under runner.nominal's
             absolute limits) for runner.hold
  load       the job, once, or repeated until --load has passed; every
             iteration's start, end, exit status, runtime and metrics recorded
  cooldown   recorded for --cooldown, or with --cooldown auto until every watched
             temperature has been within runner.tolerance_c (default 2 °C) of its
             baseline mean for runner.hold (default 60s), at most
             runner.cooldown_max (default 1h)

The job is a built-in workload (see heatsink workloads) or any command given
after --. A command runs in its own process group with HEATSINK_RUN_ID,
HEATSINK_RUN_DIR and HEATSINK_ITERATION in its environment; its output is shown
and saved as job.stdout and job.stderr in the run directory. SIGINT or SIGTERM
stops the job (SIGTERM to its group, SIGKILL after runner.grace, default 10s;
a second signal kills it at once), finishes the records and flushes every
sink. heatsink exits with the job's exit status.

With --launcher slurm --nodes N [--partition P], heatsink allocates N nodes
(salloc, job name heatsink-RUN_ID) for the whole run, baseline and cooldown
included, and runs the command once per node with srun in the load phase. The
nodes' agents (heatsink collect --jobs-dir, with the Prolog of deploy/slurm)
record the sensors into InfluxDB, which this needs; at the end their readings
are gathered into the run directory, so heatsink report covers every node, and
the job's thermal summary is written there as job-ID-thermal.json.

With --report, once the run is closed, heatsink analyses it as heatsink report
does (default thresholds): the text report on stdout (stderr when stdout
carries points), and report.html with its figures (SVG and PNG) in the run
directory. It is off by default: the run directory is the record, stdout
belongs to the job, and heatsink report RUN_DIR re-analyses a run at any time
with other thresholds.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, configPath)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("grace") {
				cfg.Runner.Grace = grace
			}
			if err := applyInfluxFlags(cmd, cfg); err != nil {
				return err
			}
			if out == "" && stdout == "" && cfg.Sinks.Stdout == "" && !cfg.Sinks.Influx.Enabled() {
				return fmt.Errorf("nowhere to write: give --out DIR, --stdout, --influx-url, or a sink in the config")
			}
			if withReport && out == "" {
				return errors.New("--report analyses the run directory: give --out DIR too")
			}
			if out != "" {
				if err := checkNewRunDir(out); err != nil {
					return err
				}
			}
			// --stdout alone means lp, so "--stdout json" leaves json as the
			// command to run: say what was meant instead of running it.
			if f := cmd.Flags().Lookup("stdout"); f.Changed && stdout == f.NoOptDefVal && len(args) > 0 &&
				cmd.ArgsLenAtDash() != 0 && (args[0] == "lp" || args[0] == "json") {
				return fmt.Errorf("--stdout takes its format after '=': --stdout=%s", args[0])
			}
			// Everything that can be wrong with the job is found now, before
			// the run directory exists and before the baseline.
			opts, err := jobOptions(workload, sets, args)
			if err != nil {
				return err
			}
			if opts.Command != nil {
				opts.Command.DropEnv = cfg.SecretEnv()
			}
			// With --launcher slurm the job becomes an srun over an allocation.
			launch, err := newSlurmLaunch(launcher, nodes, partition, cfg, &opts)
			if err != nil {
				return err
			}
			cd, auto, err := workloads.ParseCooldown(cooldown)
			if err != nil {
				return err
			}
			opts.Protocol = workloads.Protocol{Baseline: baseline, Load: load, Cooldown: cd, CooldownAuto: auto, WaitNominal: waitNominal}
			opts.Config = cfg.Runner
			opts.Stdout, opts.Stderr = io.Writer(os.Stdout), io.Writer(os.Stderr)
			if stdout != "" || cfg.Sinks.Stdout != "" {
				opts.Stdout = os.Stderr // stdout carries the points,
				cmd.SetOut(os.Stderr)   // and so not the report either
			}

			// Signals are caught from here on: the first stops the job in
			// order, a second cuts its grace period short.
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)

			r, err := workloads.NewRunner(ctx, opts)
			if err != nil {
				return err
			}
			defer r.Close()
			// The alert engine's guard acts on the job through the runner,
			// which records its firings and actions with the phase they fell in.
			var c *collection
			extra, engine, err := alertSinks(cfg, func(ps ...point.Point) { c.collector.Emit(ps...) }, r.Event)
			if err != nil {
				return err
			}
			if engine != nil {
				engine.SetJob(r)
			}
			sinks := append([]collectors.Sink{r.Latest()}, extra...)
			c, err = startCollection(cfg, collectionOptions{outDir: out, stdout: stdout, sinks: sinks})
			if err != nil {
				return err
			}

			var signo atomic.Int32
			go func() {
				n := 0
				for s := range sigs {
					if n++; n == 1 {
						signo.Store(int32(s.(syscall.Signal)))
						fmt.Fprintf(os.Stderr, "heatsink: %v: stopping the job (again to kill it now)\n", s)
						cancel()
						continue
					}
					r.Kill()
				}
			}()
			if launch != nil {
				if err := launch.allocate(ctx, c); err != nil {
					c.finish(workloads.StatusFailed)
					return err
				}
			}
			res := r.Run(ctx, workloads.Recording{Collector: c.collector, RunID: c.runID, Dir: c.runDir, Meta: c.meta})
			var launchErr error
			if launch != nil {
				launchErr = launch.release()
			}
			finishErr := c.finish(res.Status)
			if launch != nil {
				finishErr = errors.Join(finishErr, launchErr, launch.complete(context.WithoutCancel(ctx), c))
			}

			code := 0
			if res.JobStatus != nil {
				code = *res.JobStatus
			}
			if res.Status == workloads.StatusInterrupted && code == 0 {
				code = 128 + int(signo.Load())
			}
			summary := fmt.Sprintf("heatsink: run %s: %s, %s", c.runID, res.Status, count(res.Iterations, "iteration"))
			if res.JobStatus != nil {
				summary += fmt.Sprintf(", job exit status %d", *res.JobStatus)
			}
			if c.runDir != "" {
				summary += " -> " + absDir(c.runDir)
			}
			fmt.Fprintln(cmd.ErrOrStderr(), summary)
			var reportErr error
			if withReport && c.runDir != "" {
				signal.Stop(sigs) // the job is over: a signal now ends heatsink at once
				reportErr = reportRun(cmd, c.runDir)
			}
			if err := errors.Join(res.Err, finishErr, reportErr); err != nil {
				return &exitError{code: max(code, 1), err: err}
			}
			if code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // heatsink run [flags] CMD ARGS...: the command's own flags stay its own
	f.StringVar(&configPath, "config", "", "configuration file (YAML)")
	f.StringVar(&out, "out", "", "write a run directory here")
	f.StringVar(&stdout, "stdout", "", "also print points: lp (line protocol) or json")
	f.Lookup("stdout").NoOptDefVal = "lp"
	f.StringVar(&workload, "workload", "", "built-in workload to run (see heatsink workloads)")
	f.StringArrayVar(&sets, "set", nil, "workload parameter key=value (repeatable)")
	f.DurationVar(&baseline, "baseline", 0, "idle baseline before the load (the reference study used 30m)")
	f.DurationVar(&load, "load", 0, "repeat the job until this much time has passed (default: run it once)")
	f.StringVar(&cooldown, "cooldown", "", "record this long after the load, or auto: until temperatures are back to baseline (default: no cooldown)")
	f.BoolVar(&waitNominal, "wait-nominal", false, "before the load, wait until temperatures are back to the baseline or the configured limits")
	f.StringVar(&launcher, "launcher", "local", "local, or slurm: run the command with srun on --nodes nodes of an allocation held for the whole run, recorded by the nodes' agents")
	f.IntVar(&nodes, "nodes", 1, "with --launcher slurm, the number of nodes")
	f.StringVar(&partition, "partition", "", "with --launcher slurm, the partition")
	f.BoolVar(&withReport, "report", false, "after the run, print its report and write report.html and its figures into the run directory (needs --out)")
	f.DurationVar(&grace, "grace", workloads.DefaultGrace, "time between SIGTERM and SIGKILL when the job is stopped (overrides runner.grace)")
	f.Duration("interval", time.Second, "sampling interval")
	f.Duration("deadline", 0, "per-source deadline (default half the interval)")
	addRootFlags(cmd)
	addInfluxFlags(cmd)
	return cmd
}

// checkNewRunDir refuses a directory that already holds a run: the new run's
// points would be appended to the old one's and its run.json replaced.
func checkNewRunDir(dir string) error {
	for _, name := range []string{rundir.MetaFile, rundir.PointsFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("--out %s already holds a run (%s): give a new directory", dir, name)
		}
	}
	return nil
}

// reportRun analyses the run just recorded in dir: the text report on the
// command's output, report.html and its figures in dir.
func reportRun(cmd *cobra.Command, dir string) error {
	rep, err := analyseRun(dir, analysis.DefaultOptions())
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := writeReport(cmd, rep, report.Text, ""); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return writeReport(cmd, rep, report.HTML, dir)
}

// jobOptions resolves the job: a built-in workload with validated
// parameters, or a command found on PATH.
func jobOptions(workload string, sets, args []string) (workloads.Options, error) {
	var o workloads.Options
	switch {
	case workload != "" && len(args) > 0:
		return o, fmt.Errorf("give either --workload %s or a command, not both", workload)
	case workload == "" && len(args) == 0:
		return o, errors.New("nothing to run: give --workload NAME (see heatsink workloads) or a command after --")
	case workload == "" && len(sets) > 0:
		return o, errors.New("--set applies to a built-in workload: give --workload NAME")
	}
	if len(args) > 0 {
		c, err := workloads.NewCommand(args)
		if err != nil {
			return o, err
		}
		o.Command = c
		return o, nil
	}
	w, err := workloads.Find(builtinWorkloads(), workload)
	if err != nil {
		return o, err
	}
	set, err := workloads.ParseSet(sets)
	if err != nil {
		return o, err
	}
	v, err := workloads.ParseValues(w.Params(), set)
	if err != nil {
		return o, fmt.Errorf("workload %s: %w", w.Name(), err)
	}
	o.Workload, o.Params = w, v
	return o, nil
}
