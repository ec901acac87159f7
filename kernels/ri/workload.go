package ri

import (
	"context"
	"fmt"
	"strings"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Workload is random indexing as a heatsink workload: every iteration
// computes the vectors of one corpus from scratch (index vectors, term
// vectors checked against their row sums, retraining, normalisation) and
// reports tokens/s per stage. The GPU's load is integer and shared-memory
// bound in the term vectors and memory bound in retraining.
type Workload struct{}

// Name implements workloads.Workload.
func (Workload) Name() string { return "ri" }

// Summary implements workloads.Workload.
func (Workload) Summary() string {
	return "random indexing word vectors (term vectors, retraining, normalisation) on a GPU or the CPU; tokens/s per stage"
}

// Params implements workloads.Workload.
func (Workload) Params() []workloads.ParamSpec {
	def := DefaultConfig()
	i := func(v int) string { return fmt.Sprint(v) }
	return []workloads.ParamSpec{
		{Name: "corpus", Type: workloads.String, Default: "zipf:tokens=10M",
			Help: "a plain-text file (scripts/corpus-kjv.sh writes the King James Bible), or a synthetic Zipf corpus " +
				"zipf:tokens=N[,vocab=V][,s=S][,doc=L][,seed=X]"},
		{Name: "documents", Type: workloads.String, Default: "line", Choices: []string{"line", "paragraph"},
			Help: "what a document of a text corpus is: a line, or lines up to a blank line"},
		{Name: "dim", Type: workloads.Int, Default: i(def.Dim), Min: workloads.Bound(2), Max: workloads.Bound(MaxDim),
			Help: "dimension d of the vectors"},
		{Name: "nonzeros", Type: workloads.Int, Default: i(def.Nonzeros), Min: workloads.Bound(1), Max: workloads.Bound(MaxNonzeros),
			Help: "nonzero entries (+1/-1) of an index vector, at most dim/2"},
		{Name: "window", Type: workloads.Int, Default: i(def.Window), Min: workloads.Bound(1), Max: workloads.Bound(MaxWindow),
			Help: "half-width of the context window (contexts=window)"},
		{Name: "permute", Type: workloads.Bool, Default: "false",
			Help: "rotate each neighbour's vector by its offset, so word order is kept (Sahlgren et al. 2008)"},
		{Name: "contexts", Type: workloads.String, Default: "window", Choices: []string{"window", "document"},
			Help: "a term's context: the words around it, or the document it is in"},
		{Name: "retrain", Type: workloads.Int, Default: i(def.Retrain), Min: workloads.Bound(0), Max: workloads.Bound(MaxRetrain),
			Help: "retraining passes (the previous vectors, unit length, as dense seeds)"},
		{Name: "normalise", Type: workloads.Bool, Default: "true", Help: "scale the final vectors to unit length"},
		{Name: "seed", Type: workloads.Int, Default: "1", Min: workloads.Bound(0), Help: "seed of the index vectors"},
		{Name: "slice", Type: workloads.Int, Default: i(def.Slice), Min: workloads.Bound(1), Max: workloads.Bound(MaxSlice),
			Help: "occurrences per unit of parallel work (frequent terms are cut into slices)"},
		{Name: "device", Type: workloads.String, Default: "0", Help: "GPU index (see heatsink gpus) or cpu"},
		{Name: "threads", Type: workloads.Int, Default: "0", Min: workloads.Bound(0), Max: workloads.Bound(1 << 16),
			Help: "goroutines for device=cpu and for preparing the corpus (0: one per core)"},
		{Name: "kernel", Type: workloads.String, Default: KernelBlock, Choices: []string{KernelBlock, KernelWarp, KernelThread},
			Help: "GPU term-vector kernel: a block per slice summing in shared memory with a warp (or a thread) per occurrence, or the paper's thread per slice"},
	}
}

// Devices implements workloads.DeviceLister.
func (Workload) Devices(ctx context.Context) ([]string, error) {
	inv := kernels.Discover()
	out := []string{"cpu"}
	for _, d := range inv.Devices {
		out = append(out, fmt.Sprintf("%d: %s (%d SMs, %.1f GiB)", d.Ordinal, d.Name, d.SMs, float64(d.MemoryBytes)/(1<<30)))
	}
	return out, inv.DriverErr
}

// ConfigFromValues reads the computation's parameters.
func ConfigFromValues(v workloads.Values) (Config, error) {
	ctxs, err := ParseContexts(v.String("contexts"))
	if err != nil {
		return Config{}, err
	}
	cfg := Config{
		Dim: int(v.Int("dim")), Nonzeros: int(v.Int("nonzeros")), Window: int(v.Int("window")),
		Permute: v.Bool("permute"), Contexts: ctxs, Retrain: int(v.Int("retrain")),
		Normalise: v.Bool("normalise"), Seed: uint64(v.Int("seed")), Slice: int(v.Int("slice")),
	}
	return cfg, cfg.Validate()
}

// OpenCorpus reads a corpus parameter: a synthetic spec (zipf:...) or a
// plain-text file.
func OpenCorpus(spec string, split Split, threads int) (*Corpus, error) {
	if strings.HasPrefix(spec, ZipfPrefix) {
		z, err := ParseZipf(spec)
		if err != nil {
			return nil, err
		}
		return z.Generate(threads)
	}
	if spec == "" {
		return nil, fmt.Errorf("parameter corpus is empty: give a text file or %stokens=N", ZipfPrefix)
	}
	return LoadCorpus(spec, split)
}

// Start implements workloads.Workload: it reads or generates the corpus
// and prepares the device, so a bad corpus or too little GPU memory fails
// before the experiment starts.
func (Workload) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
	cfg, err := ConfigFromValues(v)
	if err != nil {
		return nil, err
	}
	gpu, err := kernels.ParseDevice(v.String("device"))
	if err != nil {
		return nil, err
	}
	split, err := ParseSplit(v.String("documents"))
	if err != nil {
		return nil, err
	}
	dev := Device{GPU: gpu, Threads: int(v.Int("threads")), Kernel: v.String("kernel")}
	c, err := OpenCorpus(v.String("corpus"), split, dev.Threads)
	if err != nil {
		return nil, err
	}
	tr, err := NewTrainer(ctx, c, cfg, dev)
	if err != nil {
		return nil, err
	}
	return &job{tr: tr, passes: 1 + cfg.Retrain}, nil
}

type job struct {
	tr     *Trainer
	passes int
}

// Iterate implements workloads.Job.
func (j *job) Iterate(ctx context.Context) (workloads.Result, error) {
	st, err := j.tr.Run(ctx)
	if err != nil {
		return workloads.Result{}, err
	}
	return workloads.Result{Work: float64(st.Tokens) * float64(j.passes), WorkUnit: "tokens", Metrics: st.Metrics()}, nil
}

// Close implements workloads.Job.
func (j *job) Close() error { return j.tr.Close() }

// Train computes the vectors the workload parameters v describe, once, and
// returns them with the run's stats: what `heatsink ri train` does.
func Train(ctx context.Context, v workloads.Values) (*Vectors, Stats, error) {
	j, err := Workload{}.Start(ctx, v)
	if err != nil {
		return nil, Stats{}, err
	}
	tr := j.(*job).tr
	defer tr.Close()
	st, err := tr.Run(ctx)
	if err != nil {
		return nil, st, err
	}
	data, err := tr.Vectors(ctx)
	if err != nil {
		return nil, st, err
	}
	vecs, err := NewVectors(tr.sh.c.Terms, tr.sh.cfg.Dim, data)
	return vecs, st, err
}
