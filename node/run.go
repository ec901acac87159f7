package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// RunOptions shape `heatsink run` beyond its configuration.
type RunOptions struct {
	Options
	// Runner is the job and its protocol, checked before anything starts.
	Runner workloads.Options
	// Launch runs the job through Slurm; nil runs it here.
	Launch *SlurmLaunch
	// Hold, when set, holds a component at a set point by pacing the job
	// over the load (heatsink run --hold).
	Hold *HoldOptions
	// Watch, when set, is called as the job starts with the runner, whose
	// Progress a live display may show; the func it returns is called as
	// the job ends.
	Watch func(ctx context.Context, r *workloads.Runner) (stop func())
}

// RunResult is how a run ended.
type RunResult struct {
	workloads.Outcome
	RunID string
	Dir   string // "" without a run directory
	// Signal is the first SIGINT, SIGTERM or SIGHUP received; 0 for none.
	Signal syscall.Signal
	// Err joins what went wrong closing the records (run.json, sinks,
	// the Slurm allocation and the gathering of its readings).
	Err error
}

// Run is `heatsink run`: the job under the experiment protocol while the
// collection records. SIGINT, SIGTERM and SIGHUP are caught while it runs
// (a hang-up of the terminal must not kill heatsink and leave run.json
// "running" and the job orphaned): the
// first stops the job in order, a second cuts its grace period short.
// The error is for what failed before the job could start.
func Run(ctx context.Context, cfg *configs.Config, o RunOptions) (RunResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	holds := &holdSet{}
	o.Runner.OnLoad = holds.phase
	r, err := workloads.NewRunner(ctx, o.Runner)
	if err != nil {
		return RunResult{}, err
	}
	defer r.Close()
	if err := holds.prepare(cfg, o, r); err != nil {
		return RunResult{}, err
	}
	o.Sinks = append(o.Sinks, holds)
	// The alert engine's guard acts on the job through the runner, which
	// records its firings and actions with the phase they fell in.
	o.Sinks = append([]collectors.Sink{r.Latest()}, o.Sinks...)
	o.Job, o.OnEvent = guardJob{r, holds}, r.Event
	c, err := Start(cfg, o.Options)
	if err != nil {
		return RunResult{}, err
	}
	holds.setRun(c.runID, c.collector.Emit)
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
	if o.Launch != nil {
		if err := o.Launch.Allocate(ctx, c); err != nil {
			c.Finish(workloads.StatusFailed)
			return RunResult{}, err
		}
	}
	stopWatch := func() {}
	if o.Watch != nil {
		stopWatch = o.Watch(ctx, r)
	}
	res := r.Run(ctx, workloads.Recording{Collector: c.collector, RunID: c.runID, Dir: c.runDir, Meta: c.meta})
	stopWatch()
	var launchErr error
	if o.Launch != nil {
		launchErr = o.Launch.Release()
	}
	finishErr := c.Finish(res.Status)
	if o.Launch != nil {
		finishErr = errors.Join(finishErr, launchErr, o.Launch.Complete(context.WithoutCancel(ctx), c))
	}
	return RunResult{Outcome: res, RunID: c.runID, Dir: c.runDir, Signal: syscall.Signal(signo.Load()),
		Err: errors.Join(res.Err, finishErr)}, nil
}
