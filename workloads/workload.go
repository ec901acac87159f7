// Package workloads defines what heatsink can run under monitoring: the
// Workload interface with typed, validated parameters, the built-in CPU
// workloads, and the job runner with its experiment protocol.
package workloads

import (
	"context"
)

// Workload is something `heatsink run --workload NAME` can run repeatedly.
type Workload interface {
	// Name is what users type after --workload ("stream", "dgemm", "full-w2v").
	Name() string
	// Summary is one line for `heatsink workloads`.
	Summary() string
	// Params lists the parameters --set accepts, with types and defaults.
	Params() []ParamSpec
	// Start validates nothing (ParseValues did) but prepares everything an
	// iteration needs (buffers, GPU memory, the corpus), so that a failure
	// happens before the experiment starts.
	Start(ctx context.Context, v Values) (Job, error)
}

// Job is a started workload; the runner calls Iterate until the load phase ends.
type Job interface {
	// Iterate runs one iteration and reports what it did. It honours ctx.
	Iterate(ctx context.Context) (Result, error)
	// Close releases everything Start took, on every path.
	Close() error
}

// Result is what one iteration did.
type Result struct {
	// Work done in WorkUnit ("bytes", "flop", "words", "tokens").
	Work     float64
	WorkUnit string
	// Metrics are the workload's own figures, units in the names
	// ("triad_bytes_per_s", "flop_per_s", "max_rel_err").
	Metrics map[string]float64
}
