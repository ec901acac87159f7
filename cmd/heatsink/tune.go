package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/tune"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

type tuneFlags struct {
	config, space, workload, out, objective, budget, methods, launcher, partition, nodeConfig string
	parallel                                                                                  int
	sources, tasks, constraints, gc                                                           []string
	seed                                                                                      uint64
	quantile                                                                                  float64
	baseline                                                                                  time.Duration
}

func newTuneCmd() *cobra.Command {
	var fl tuneFlags
	cmd := &cobra.Command{
		Use:   "tune --space SPACE.yaml --task k=v --out DIR [--workload NAME | -- CMD {param}...]",
		Short: "Tune a workload's or command's parameters for a task, with a Gaussian copula fitted on earlier tuning runs",
		Long: `tune evaluates configurations of a tuning space (YAML: see docs/tune.md) as
heatsink runs: the node back at the thermal baseline the first evaluation
measured (--baseline), the job run 3 times, the first discarded, thermals
recorded; each a run directory under --out with a tune.json (a source later).

--method gc (the default) fits a Gaussian copula on the best 30% of the
evaluations found under --sources and samples it conditioned on --task; its
budget (eq. 5.1 of the dissertation's chapter 5) is printed before it is
spent; --gc picks its variant. random, tpe and default are baselines, run
one after another with the same budget and seed. --constraint score>=0.62:
an evaluation under a floor is recorded with why and never recommended.`,
		RunE: func(cmd *cobra.Command, args []string) error { return runTune(cmd, fl, args) },
	}
	f := cmd.Flags()
	f.SetInterspersed(false)
	f.StringVar(&fl.config, "config", "", "configuration file (YAML)")
	f.StringVar(&fl.space, "space", "", "tuning space (YAML)")
	f.StringVar(&fl.workload, "workload", "", "built-in workload whose --set parameters the space names")
	f.StringVar(&fl.out, "out", "", "directory of this tuning run: one run directory per evaluation, and the report")
	f.StringArrayVar(&fl.sources, "sources", nil, "directory of earlier tuning runs, or influx[:BUCKET] for those in the configured InfluxDB (repeatable)")
	f.StringArrayVar(&fl.tasks, "task", nil, "task feature k=v (repeatable)")
	f.StringVar(&fl.budget, "budget", "auto", "evaluations per method, or auto: the copula's estimate")
	f.StringVar(&fl.methods, "method", "gc", "gc, random, tpe, default, or several comma-separated")
	f.StringVar(&fl.objective, "objective", "runtime_s", "runtime_s, energy_per_work, min:|max: METRIC, re:REGEXP or json:PATH")
	f.StringArrayVar(&fl.constraints, "constraint", nil, "no-throttle, margin_c=N (peak N °C under the slowdown limit), or METRIC>=X, METRIC<=X (a floor or ceiling on a metric the workload reports); repeatable")
	f.StringArrayVar(&fl.gc, "gc", nil, "the copula's variant: marginals=space|data, order=frequent|drawn, rest=local|stop, local=N|-1, model=quad|none (docs/tune.md)")
	f.Uint64Var(&fl.seed, "seed", 1, "seed of the methods")
	f.Float64Var(&fl.quantile, "quantile", 0.3, "best share of the source evaluations the copula is fitted on")
	f.DurationVar(&fl.baseline, "baseline", 30*time.Second, "idle baseline the first evaluation records; later ones wait to be back to it")
	f.StringVar(&fl.launcher, "launcher", "local", "local, or slurm: each evaluation a job step on a node of an allocation of --parallel nodes, judged by that node's sensors")
	f.IntVar(&fl.parallel, "parallel", 1, "with --launcher slurm, evaluations at once, one per node")
	f.StringVar(&fl.partition, "partition", "", "with --launcher slurm, the partition")
	f.StringVar(&fl.nodeConfig, "node-config", "", "with --launcher slurm, the configuration the nodes load, {node} their name (default --config)")
	f.Duration("interval", time.Second, "sampling interval")
	f.Duration("deadline", 0, "per-source deadline")
	addRootFlags(cmd)
	return cmd
}

// tuneInputs are the flags' files and expressions, parsed.
type tuneInputs struct {
	space  *tune.Space
	obj    tune.Objective
	limits tune.Limits
	task   tune.Task
	budget int // 0: auto
	gc     tune.GCOptions
}

func parseTuneInputs(fl tuneFlags) (in tuneInputs, err error) {
	if fl.out == "" || fl.space == "" {
		return in, errors.New("give --space SPACE.yaml and --out DIR")
	}
	if in.space, err = tune.LoadSpace(fl.space); err != nil {
		return in, err
	}
	if in.obj, err = tune.ParseObjective(fl.objective); err != nil {
		return in, err
	}
	if in.limits, err = tune.ParseLimits(fl.constraints); err != nil {
		return in, err
	}
	if in.task, err = tune.ParseTask(fl.tasks); err != nil {
		return in, err
	}
	if in.budget, err = tune.ParseBudget(fl.budget); err != nil {
		return in, err
	}
	in.gc, err = tune.ParseGCOptions(fl.gc)
	return in, err
}

func runTune(cmd *cobra.Command, fl tuneFlags, args []string) error {
	cfg, err := loadConfig(cmd, fl.config)
	if err != nil {
		return err
	}
	in, err := parseTuneInputs(fl)
	if err != nil {
		return err
	}
	s, obj, limits, task, budget := in.space, in.obj, in.limits, in.task, in.budget
	sources, err := loadTuneSources(cmd.Context(), cfg, s, obj.Spec, fl.sources)
	if err != nil {
		return err
	}
	ev := &tune.RunEvaluator{Space: s, Argv: args, Objective: obj, Limits: limits, Dir: fl.out,
		Run: tuneRunJob(cfg), Config: *workloads.RunnerConfigOf(cfg), Baseline: fl.baseline}
	runArgs := append([]string{"--"}, args...)
	if fl.workload != "" {
		if ev.Workload, err = workloads.Find(builtinWorkloads(), fl.workload); err != nil {
			return err
		}
		runArgs = tune.WorkloadRunArgs(ev.Workload, s)
	} else if len(args) == 0 {
		return errors.New("nothing to tune: give --workload NAME or a command after --")
	}
	// SIGINT or SIGTERM ends the search; the report of what ran is still written.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	launched, release, err := tuneLauncher(ctx, cmd, fl, s, ev)
	if err != nil {
		return err
	}
	defer release()
	// Published from here, whichever node evaluated: the record is in the shared tuning directory.
	evaluator, closePub, err := publishTune(cmd.Context(), cfg, launched, fl.out)
	if err != nil {
		return err
	}
	defer closePub()
	rep, err := tune.Tune(ctx, tune.Options{Space: s, Task: task, Methods: strings.Split(fl.methods, ","),
		Budget: budget, Seed: fl.seed, Fit: tune.FitOptions{Quantile: fl.quantile, GC: in.gc}, Sources: sources, Parallel: fl.parallel,
		Evaluator: evaluator, Maximize: obj.Maximize, Out: fl.out, Log: cmd.ErrOrStderr(), RunArgs: runArgs})
	if rep != nil && rep.Best != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "recommended: heatsink run %s\n  the same: heatsink run --tuned %s\nreport: %s/report.md\n",
			rep.RunCommandLine(), fl.out, fl.out)
	}
	return err
}
