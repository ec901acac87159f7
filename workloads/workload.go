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
	// Params lists the parameters --set accepts, with types and defaults:
	// the fields of the workload's parameter struct (embed Typed).
	Params() []ParamSpec
	// Decode checks values by key into the parameter struct, defaults for
	// the rest; Resolve calls it with every source merged.
	Decode(set map[string]string) (Values, error)
	// Start reads its struct from v (Typed.Of), checks what the struct's
	// tags cannot (one field against another), and prepares everything an
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

// registered is written only by Register, from init functions, before
// main runs; after that it is read-only.
var registered = map[string]Workload{}

// Register makes w a built-in workload: `heatsink workloads` lists it and
// `heatsink run --workload NAME`, --tuned and tune run it. Adding a workload
// is its package, registering itself in init, and one blank import in
// cmd/heatsink/builtin.go. A second workload of the same name, or
// parameters whose tags or defaults do not decode, panic at init: every
// command, and so every test of the CLI, finds them before a user does.
func Register(w Workload) {
	if _, dup := registered[w.Name()]; dup {
		panic(fmt.Sprintf("workloads: %s registered twice", w.Name()))
	}
	if err := Check(w); err != nil {
		panic(err)
	}
	registered[w.Name()] = w
}

// Check is what Register checks: the parameters' tags are well formed,
// the defaults decode, and the workload declares its metrics as float
// fields of point/schema's iteration measurement.
func Check(w Workload) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("workload %s: %v", w.Name(), r)
		}
	}()
	specs := w.Params()
	if _, err := w.Decode(nil); err != nil {
		return fmt.Errorf("workload %s: the defaults: %w", w.Name(), err)
	}
	md, ok := w.(MetricDeclarer)
	if !ok {
		return fmt.Errorf("workload %s declares no metrics: it needs a Metrics method (workloads.MetricDeclarer)", w.Name())
	}
	if err := CheckMetrics(md.Metrics(), nil); err != nil {
		return fmt.Errorf("workload %s: %w", w.Name(), err)
	}
	seen := map[string]bool{}
	for _, s := range specs {
		if seen[s.Name] {
			return fmt.Errorf("workload %s: parameter %s listed twice", w.Name(), s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// Registered returns the built-in workloads, by name.
func Registered() []Workload {
	out := make([]Workload, 0, len(registered))
	for _, w := range registered {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
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
