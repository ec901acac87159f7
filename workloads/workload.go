// Package workloads defines what heatsink can run under monitoring: the
// Workload interface with typed, validated parameters, the built-in CPU
// workloads, and the job runner with its experiment protocol.
package workloads

import (
	"context"
	"fmt"
	"sort"
	"strings"
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
	// Iterate runs one iteration and reports what it did. It honours ctx,
	// and calls Checkpoint(ctx) between kernels or batches so that the alert
	// guard can pause it within an iteration.
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
	// ("triad_bytes_per_s", "flop_per_s", "max_rel_err"): fields of
	// point/schema's iteration measurement, which a built-in declares
	// (MetricDeclarer). None may take an iteration's own name (n,
	// runtime_s, exit_status; see schema.FixedKeys): the runner fails
	// such an iteration.
	Metrics map[string]float64
}

// DeviceLister is implemented by workloads that run on devices found at run
// time (CPUs, GPUs), so `heatsink workloads` can say what this machine offers.
type DeviceLister interface {
	Devices(ctx context.Context) ([]string, error)
}

// Find returns the workload called name from list; an unknown name is an
// error listing the known ones.
func Find(list []Workload, name string) (Workload, error) {
	names := make([]string, 0, len(list))
	for _, w := range list {
		if w.Name() == name {
			return w, nil
		}
		names = append(names, w.Name())
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown workload %q (known: %s; see heatsink workloads)", name, strings.Join(names, ", "))
}
