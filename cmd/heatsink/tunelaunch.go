package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/tune"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

// tuneLauncher returns what evaluates: the local evaluator, or with
// --launcher slurm one running each evaluation on a node of an allocation
// of --parallel nodes, and what gives the nodes back.
func tuneLauncher(ctx context.Context, cmd *cobra.Command, fl tuneFlags, s *tune.Space, local *tune.RunEvaluator) (tune.Evaluator, func(), error) {
	switch {
	case fl.parallel < 1:
		return nil, nil, fmt.Errorf("--parallel %d: at least 1", fl.parallel)
	case fl.launcher == "" || fl.launcher == "local":
		if fl.parallel > 1 || fl.partition != "" {
			return nil, nil, errors.New("--parallel and --partition run evaluations on separate nodes: give --launcher slurm")
		}
		return local, func() {}, nil
	case fl.launcher != "slurm":
		return nil, nil, fmt.Errorf("--launcher %q: want local or slurm", fl.launcher)
	}
	tmpl, worker, err := tuneRequest(cmd, fl, local)
	if err != nil {
		return nil, nil, err
	}
	var client slurm.Client
	if err := client.Check(); err != nil {
		return nil, nil, err
	}
	a, err := client.Allocate(ctx, slurm.AllocOptions{Nodes: fl.parallel, Partition: fl.partition, Name: "heatsink-tune"})
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		a.Release(ctx)
	}
	ev, err := tune.NewSlurmEvaluator(a, worker, tmpl, s, cmd.ErrOrStderr())
	if err != nil {
		release()
		return nil, nil, err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "heatsink tune: slurm job %s holds %v, one evaluation on each at a time\n", a.Job.ID, a.Job.Nodes)
	return ev, release, nil
}

// tuneRequest is what every node is told, and the heatsink it runs: this
// binary, with the flags that shape its collection passed on.
func tuneRequest(cmd *cobra.Command, fl tuneFlags, ev *tune.RunEvaluator) (tune.Request, []string, error) {
	dir, err := filepath.Abs(fl.out)
	if err != nil {
		return tune.Request{}, nil, err
	}
	space, err := filepath.Abs(fl.space)
	if err != nil {
		return tune.Request{}, nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return tune.Request{}, nil, fmt.Errorf("find the heatsink binary to run on the nodes: %w", err)
	}
	worker := []string{exe, "tune-eval"}
	if conf := cmp.Or(fl.nodeConfig, fl.config); conf != "" {
		c, err := filepath.Abs(conf)
		if err != nil {
			return tune.Request{}, nil, err
		}
		worker = append(worker, "--config", c)
	}
	for _, name := range []string{"sysfs-root", "proc-root", "interval", "deadline"} {
		if f := cmd.Flags().Lookup(name); f.Changed {
			worker = append(worker, "--"+name+"="+f.Value.String())
		}
	}
	r := tune.Request{Dir: dir, Space: space, Argv: ev.Argv, Objective: fl.objective, Constraints: fl.constraints,
		Repeat: ev.Repeat, BaselineS: fl.baseline.Seconds()}
	if ev.Workload != nil {
		r.Workload = ev.Workload.Name()
	}
	return r, worker, nil
}

func newTuneEvalCmd() *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:    "tune-eval REQUEST.json",
		Short:  "Run one evaluation of heatsink tune --launcher slurm on this node (what the job step runs)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A site may keep one configuration per node (its sensors, its limits).
			cfg, err := loadConfig(cmd, strings.ReplaceAll(config, "{node}", os.Getenv("SLURMD_NODENAME")))
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			find := func(name string) (workloads.Workload, error) { return workloads.Find(builtinWorkloads(), name) }
			return tune.Serve(ctx, args[0], os.Getenv, find, tuneRunJob(cfg), *workloads.RunnerConfigOf(cfg))
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "configuration file (YAML)")
	cmd.Flags().Duration("interval", time.Second, "sampling interval")
	cmd.Flags().Duration("deadline", 0, "per-source deadline")
	addRootFlags(cmd)
	return cmd
}

// tuneRunJob records one evaluation as heatsink run records a run.
func tuneRunJob(cfg *configs.Config) tune.RunJob {
	return func(ctx context.Context, o workloads.Options, dir string) (workloads.Outcome, error) {
		o.Stderr = os.Stderr
		r, err := workloads.NewRunner(ctx, o)
		if err != nil {
			return workloads.Outcome{}, err
		}
		defer r.Close()
		c, err := node.Start(cfg, node.Options{OutDir: dir, Sinks: []collectors.Sink{r.Latest()}, Job: r, OnEvent: r.Event,
			Command: os.Args, Versions: versions()})
		if err != nil {
			return workloads.Outcome{}, err
		}
		out := r.Run(ctx, workloads.Recording{Collector: c.Collector(), RunID: c.RunID(), Dir: c.Dir(), Meta: c.Meta()})
		return out, errors.Join(out.Err, c.Finish(out.Status))
	}
}
