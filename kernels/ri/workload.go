package ri

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Workload is random indexing as a heatsink workload: every iteration
// computes the vectors of one corpus from scratch (index vectors, term
// vectors checked against their row sums, retraining, normalisation) and
// reports tokens/s per stage. The GPU's load is integer and shared-memory
// bound in the term vectors and memory bound in retraining.
type Workload struct{ workloads.Typed[Params] }

func init() { workloads.Register(Workload{}) }

// Name implements workloads.Workload.
func (Workload) Name() string { return "ri" }

// Summary implements workloads.Workload.
func (Workload) Summary() string {
	return "random indexing word vectors (term vectors, retraining, normalisation) on a GPU or the CPU; tokens/s per stage"
}

// Params are the workload's parameters. The bounds are config.go's Max
// constants (TestParamsBoundsAreTheConfigs checks them).
type Params struct {
	Corpus    string `param:"corpus" default:"zipf:tokens=10M" help:"a plain-text file (scripts/corpus-kjv.sh writes the King James Bible), or a synthetic Zipf corpus zipf:tokens=N[,vocab=V][,s=S][,doc=L][,seed=X]"`
	Documents string `param:"documents" default:"line" choices:"line,paragraph" help:"what a document of a text corpus is: a line, or lines up to a blank line"`
	// Dim, Nonzeros, Window, Retrain and Slice default to DefaultConfig's.
	Dim       int    `param:"dim" min:"2" max:"65536" help:"dimension d of the vectors"`
	Nonzeros  int    `param:"nonzeros" min:"1" max:"1024" help:"nonzero entries (+1/-1) of an index vector, at most dim/2"`
	Window    int    `param:"window" min:"1" max:"1024" help:"half-width of the context window (contexts=window)"`
	Permute   bool   `param:"permute" default:"false" help:"rotate each neighbour's vector by its offset, so word order is kept (Sahlgren et al. 2008)"`
	Contexts  string `param:"contexts" default:"window" choices:"window,document" help:"a term's context: the words around it, or the document it is in"`
	Retrain   int    `param:"retrain" min:"0" max:"16" help:"retraining passes (the previous vectors, unit length, as dense seeds)"`
	Normalise bool   `param:"normalise" default:"true" help:"scale the final vectors to unit length"`
	Seed      int64  `param:"seed" default:"1" min:"0" help:"seed of the index vectors"`
	Slice     int    `param:"slice" min:"1" max:"16777216" help:"occurrences per unit of parallel work (frequent terms are cut into slices)"`
	Device    string `param:"device" default:"0" help:"GPU index (see heatsink gpus) or cpu"`
	Threads   int    `param:"threads" default:"0" min:"0" max:"65536" help:"goroutines for device=cpu and for preparing the corpus (0: one per core)"`
	Kernel    string `param:"kernel" default:"block" choices:"block,warp,thread" help:"GPU term-vector kernel: a block per slice summing in shared memory with a warp (or a thread) per occurrence, or the paper's thread per slice"`
	// Check makes correctness a metric a tuning floor can hold
	// (--constraint reference_agreement>=1).
	Check bool `param:"check" default:"false" help:"compute the exact CPU reference of the same configuration once, at the start, and report every iteration's agreement with it: reference_agreement (the share of vectors within 1e-6 relative) and max_rel_err"`
}

// SetDefaults implements workloads.Defaulter: DefaultConfig is the one
// place the computation's defaults are.
func (p *Params) SetDefaults() {
	def := DefaultConfig()
	p.Dim, p.Nonzeros, p.Window, p.Retrain, p.Slice = def.Dim, def.Nonzeros, def.Window, def.Retrain, def.Slice
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

// ConfigFromParams reads the computation's parameters.
func ConfigFromParams(p Params) (Config, error) {
	ctxs, err := ParseContexts(p.Contexts)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{
		Dim: p.Dim, Nonzeros: p.Nonzeros, Window: p.Window,
		Permute: p.Permute, Contexts: ctxs, Retrain: p.Retrain,
		Normalise: p.Normalise, Seed: uint64(p.Seed), Slice: p.Slice,
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
func (w Workload) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
	p, err := w.Of(v)
	if err != nil {
		return nil, err
	}
	cfg, err := ConfigFromParams(p)
	if err != nil {
		return nil, err
	}
	gpu, err := kernels.ParseDevice(p.Device)
	if err != nil {
		return nil, err
	}
	split, err := ParseSplit(p.Documents)
	if err != nil {
		return nil, err
	}
	dev := Device{GPU: gpu, Threads: p.Threads, Kernel: p.Kernel}
	c, err := OpenCorpus(p.Corpus, split, dev.Threads)
	if err != nil {
		return nil, err
	}
	var ref []float32
	if p.Check {
		if ref, err = reference(ctx, c, cfg, dev.Threads); err != nil {
			return nil, err
		}
	}
	tr, err := NewTrainer(ctx, c, cfg, dev)
	if err != nil {
		return nil, err
	}
	return &job{tr: tr, passes: 1 + cfg.Retrain, ref: ref, dim: cfg.Dim}, nil
}

// reference is the configuration's vectors computed in Go: the kernels'
// exact reference (see the package comment).
func reference(ctx context.Context, c *Corpus, cfg Config, threads int) ([]float32, error) {
	tr, err := NewTrainer(ctx, c, cfg, CPU(threads))
	if err != nil {
		return nil, fmt.Errorf("the CPU reference: %w", err)
	}
	defer tr.Close()
	if _, err := tr.Run(ctx); err != nil {
		return nil, fmt.Errorf("the CPU reference: %w", err)
	}
	return tr.Vectors(ctx)
}

type job struct {
	tr     *Trainer
	passes int
	ref    []float32 // the CPU reference's vectors (check); nil without
	dim    int
}

// Iterate implements workloads.Job.
func (j *job) Iterate(ctx context.Context) (workloads.Result, error) {
	st, err := j.tr.Run(ctx)
	if err != nil {
		return workloads.Result{}, err
	}
	m := st.Metrics()
	if j.ref != nil {
		v, err := j.tr.Vectors(ctx)
		if err != nil {
			return workloads.Result{}, err
		}
		m[schema.FieldReferenceAgreement], m[schema.FieldMaxRelErr] = Agreement(v, j.ref, j.dim)
	}
	return workloads.Result{Work: float64(st.Tokens) * float64(j.passes), WorkUnit: "tokens", Metrics: m}, nil
}

// agreementTol is the kernels' contract with the reference: 1e-6 relative,
// per vector.
const agreementTol = 1e-6

// Agreement compares vectors with a reference, row by row of dim: the share
// of rows within 1e-6 relative (Euclidean norm of the difference over the
// reference's; a zero reference row agrees only with zero), and the largest
// relative difference. Vectors of another shape than the reference agree
// nowhere (share 0, difference 1).
func Agreement(v, ref []float32, dim int) (share, maxRel float64) {
	if len(v) != len(ref) || dim <= 0 || len(ref) == 0 {
		return 0, 1
	}
	rows, ok := len(ref)/dim, 0
	for r := 0; r < rows; r++ {
		var d2, n2 float64
		for i := r * dim; i < (r+1)*dim; i++ {
			d := float64(v[i]) - float64(ref[i])
			d2 += d * d
			n2 += float64(ref[i]) * float64(ref[i])
		}
		rel := math.Sqrt(d2 / math.Max(n2, 1)) // a zero reference row: the difference's own norm
		if rel <= agreementTol {
			ok++
		}
		maxRel = math.Max(maxRel, rel)
	}
	return float64(ok) / float64(rows), maxRel
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
