// Package sleepworkload is a workload that sleeps, for the test that adding
// a workload takes its package and one import: cmd/heatsink's
// sleep_workload.go, built with -tags heatsink_sleep, imports it.
package sleepworkload

import (
	"context"
	"time"

	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Params are the workload's parameters.
type Params struct {
	For  time.Duration `param:"for" default:"10ms" min:"1ms" max:"1m" help:"how long an iteration sleeps"`
	Mode string        `param:"mode" default:"timer" choices:"timer,spin" help:"sleep on a timer or spin"`
}

// Workload sleeps.
type Workload struct{ workloads.Typed[Params] }

func init() { workloads.Register(Workload{}) }

// Name implements workloads.Workload.
func (Workload) Name() string { return "sleep" }

// Summary implements workloads.Workload.
func (Workload) Summary() string { return "sleeps (a test of adding a workload)" }

// Start implements workloads.Workload.
func (w Workload) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
	p, err := w.Of(v)
	if err != nil {
		return nil, err
	}
	return job(p), nil
}

type job Params

// Iterate implements workloads.Job.
func (j job) Iterate(ctx context.Context) (workloads.Result, error) {
	end := time.Now().Add(j.For)
	for time.Now().Before(end) {
		if err := workloads.Checkpoint(ctx); err != nil {
			return workloads.Result{}, err
		}
		if j.Mode == "timer" {
			time.Sleep(time.Until(end))
		}
	}
	return workloads.Result{Work: j.For.Seconds(), WorkUnit: "s"}, nil
}

// Metrics implements workloads.MetricDeclarer: an iteration reports none
// of its own.
func (Workload) Metrics() []schema.Field { return nil }

// Close implements workloads.Job.
func (job) Close() error { return nil }
