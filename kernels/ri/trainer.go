package ri

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// Device says where a Trainer computes.
type Device struct {
	// GPU is the GPU's index, or -1 for the CPU.
	GPU int
	// Threads is the goroutines of the CPU computation and of the host's
	// preparation (occurrence lists); 0 means GOMAXPROCS.
	Threads int
	// Kernel picks the GPU's term-vector kernel: KernelBlock (default),
	// KernelWarp or KernelThread.
	Kernel string

	// open, when set, opens the GPU instead of the CUDA driver (the tests'
	// CPU emulation of ri.cu).
	open func(gpu int) (gpuDevice, error)
}

// GPU term-vector kernels.
const (
	// KernelWarp gives each slice of a term's occurrence list a thread
	// block that accumulates the term vector in shared memory, a warp per
	// occurrence (its lanes over the contexts' index-vector entries).
	KernelWarp = "warp"
	// KernelBlock is KernelWarp with a thread per occurrence. It is the
	// default: on the H100 it ran term vectors at 2.7-3.2 G tokens/s against
	// 1.5-1.7 G for KernelWarp (bench/ri-gpu.sh, KJV and 100 M Zipf tokens).
	KernelBlock = "block"
	// KernelThread is the paper's design: one thread per slice, adding
	// straight into its own row of global memory, no atomics.
	KernelThread = "thread"
)

// CPU is the CPU device with threads goroutines (0: GOMAXPROCS).
func CPU(threads int) Device { return Device{GPU: -1, Threads: threads} }

func (d Device) String() string {
	if d.GPU < 0 {
		return "cpu"
	}
	return fmt.Sprintf("gpu %d", d.GPU)
}

// engine computes the stages on one device. Each stage returns the time
// its computation took on the device.
type engine interface {
	name() string
	indexVectors(ctx context.Context) (time.Duration, error)
	termVectors(ctx context.Context) (time.Duration, error)
	// normalise sets the seeds (or the final vectors) to the unit-length
	// term vectors (fromInts) or retrained vectors.
	normalise(ctx context.Context, fromInts bool) (time.Duration, error)
	retrain(ctx context.Context) (time.Duration, error)
	termVectorInts(ctx context.Context) ([]int32, error)
	retrained(ctx context.Context) ([]float32, error)
	unit(ctx context.Context) ([]float32, error)
	// rowSums is each term vector's sum of elements.
	rowSums(ctx context.Context) ([]int64, error)
	close() error
}

// shared is what every engine computes from: the corpus, the plans and the
// host's own index tables.
type shared struct {
	c   *Corpus
	cfg Config
	occ occurrences
	// termPlan cuts the occurrence lists; docPlan the documents (reflective
	// retraining with document contexts).
	termPlan, docPlan plan
	// idx and docIdx are the host's index tables (terms; documents).
	idx, docIdx []int32
	// pairs is the number of (occurrence, context) pairs a pass sums.
	pairs int64
	// expect is every term vector's sum of elements, the invariant each
	// run's term vectors are checked against.
	expect []int64
}

func newShared(ctx context.Context, c *Corpus, cfg Config, threads int) (*shared, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if c.Vocab() == 0 {
		return nil, errors.New("empty corpus")
	}
	// An element of a term vector is at most the term's number of context
	// pairs in absolute value (a neighbour adds at most 1 to an element).
	per := int64(1)
	if cfg.Contexts == Window {
		per = 2 * int64(cfg.Window)
	}
	if bound := int64(c.Counts[0]) * per; bound > math.MaxInt32 {
		return nil, fmt.Errorf("term %q occurs %d times: its term vector could reach %d, beyond int32; use a smaller window",
			c.Terms[0], c.Counts[0], bound)
	}
	sh := &shared{c: c, cfg: cfg}
	sh.occ = buildOccurrences(c, threads, cfg.Contexts == Document)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sh.termPlan = newPlan(c.Vocab(), func(t int) (int32, int32) { return sh.occ.start[t], sh.occ.start[t+1] }, cfg.Slice)
	if cfg.Contexts == Document {
		sh.docPlan = newPlan(c.Docs(), func(j int) (int32, int32) { return c.Bounds[j] + 1, c.Bounds[j+1] }, cfg.Slice)
	}
	keys := make([]uint64, c.Vocab())
	for t, term := range c.Terms {
		keys[t] = TermKey(term)
	}
	sh.idx = IndexTable(keys, cfg.Seed, cfg.Dim, cfg.Nonzeros)
	if cfg.Contexts == Document {
		sh.docIdx = docTable(c.Docs(), cfg)
	}
	sh.countPairs(threads)
	return sh, ctx.Err()
}

// docTable is the index table of documents 0..n-1.
func docTable(n int, cfg Config) []int32 {
	keys := make([]uint64, n)
	for j := range keys {
		keys[j] = DocKey(j)
	}
	return IndexTable(keys, cfg.Seed, cfg.Dim, cfg.Nonzeros)
}

// countPairs computes pairs and the expected row sums: term t's vector sums
// to the sum, over its context pairs, of the context's index vector's sign
// sum (rotation moves elements but keeps their sum).
func (sh *shared) countPairs(threads int) {
	k := sh.cfg.Nonzeros
	signSums := func(table []int32) []int64 {
		s := make([]int64, len(table)/k)
		for i := range s {
			for _, e := range table[i*k : (i+1)*k] {
				_, sg := entry(e)
				s[i] += int64(sg)
			}
		}
		return s
	}
	v := sh.c.Vocab()
	sh.expect = make([]int64, v)
	pairs := make([]int64, v)
	if sh.cfg.Contexts == Document {
		ds := signSums(sh.docIdx)
		parallel(v, threads, func(_, lo, hi int) {
			for t := lo; t < hi; t++ {
				for _, j := range sh.occ.doc[sh.occ.start[t]:sh.occ.start[t+1]] {
					sh.expect[t] += ds[j]
				}
				pairs[t] = int64(sh.occ.start[t+1] - sh.occ.start[t])
			}
		})
	} else {
		ts := signSums(sh.idx)
		tok, w := sh.c.Stream, int32(sh.cfg.Window)
		parallel(v, threads, func(_, lo, hi int) {
			for t := lo; t < hi; t++ {
				for _, p := range sh.occ.pos[sh.occ.start[t]:sh.occ.start[t+1]] {
					a, b := window(tok, p, w)
					for q := a; q <= b; q++ {
						if q != p {
							sh.expect[t] += ts[tok[q]]
						}
					}
					pairs[t] += int64(b - a)
				}
			}
		})
	}
	for _, n := range pairs {
		sh.pairs += n
	}
}

// retrainBytes is the effective memory traffic of one retraining pass: one
// seed (or document) row read per context pair, plus the rows the units
// write and the combine reads and writes, 4*d bytes each.
func (sh *shared) retrainBytes() int64 {
	rows := sh.pairs + sh.termPlan.rowTraffic()
	if sh.cfg.Contexts == Document {
		rows += int64(sh.c.Tokens()) + sh.docPlan.rowTraffic()
	}
	return rows * 4 * int64(sh.cfg.Dim)
}

// Trainer runs random indexing on one corpus, configuration and device;
// Run may be called repeatedly (the workload's iterations).
type Trainer struct {
	sh    *shared
	eng   engine
	dev   Device
	ran   bool
	Setup time.Duration // preparing the corpus's lists and the device
}

// NewTrainer prepares c for cfg on dev: occurrence lists, plans and, on a
// GPU, the corpus in device memory.
func NewTrainer(ctx context.Context, c *Corpus, cfg Config, dev Device) (*Trainer, error) {
	t0 := time.Now()
	threads := dev.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	sh, err := newShared(ctx, c, cfg, threads)
	if err != nil {
		return nil, err
	}
	t := &Trainer{sh: sh, dev: dev}
	if dev.GPU < 0 {
		if t.eng, err = newCPUEngine(sh, threads); err != nil {
			return nil, err
		}
	} else if t.eng, err = newGPUEngine(ctx, sh, dev); err != nil {
		return nil, err
	}
	t.Setup = time.Since(t0)
	return t, nil
}

// Stats is what one Run did and how long each stage took on the device.
type Stats struct {
	Tokens, Pairs int64
	Vocab, Dim    int
	// Index, TermVectors, Retrain and Normalise are the stages' device
	// times; Retrain and Normalise add up every pass.
	Index, TermVectors, Retrain, Normalise time.Duration
	RetrainPasses, Normalisations          int
	// RetrainBytes and NormaliseBytes are the effective memory traffic of
	// those stages (see shared.retrainBytes).
	RetrainBytes, NormaliseBytes int64
}

// Metrics are the stats as workload metrics, units in the names.
func (s Stats) Metrics() map[string]float64 {
	m := map[string]float64{
		"tokens":         float64(s.Tokens),
		"vocab":          float64(s.Vocab),
		"pairs":          float64(s.Pairs),
		"index_s":        s.Index.Seconds(),
		"term_vectors_s": s.TermVectors.Seconds(),
	}
	rate := func(name string, x float64, d time.Duration) {
		if d > 0 {
			m[name] = x / d.Seconds()
		}
	}
	rate("index_vectors_per_s", float64(s.Vocab), s.Index)
	rate("term_vectors_tokens_per_s", float64(s.Tokens), s.TermVectors)
	rate("term_vectors_pairs_per_s", float64(s.Pairs), s.TermVectors)
	if s.RetrainPasses > 0 {
		m["retrain_s"] = s.Retrain.Seconds()
		rate("retrain_tokens_per_s", float64(s.Tokens)*float64(s.RetrainPasses), s.Retrain)
		rate("retrain_bytes_per_s", float64(s.RetrainBytes), s.Retrain)
	}
	if s.Normalisations > 0 {
		m["normalise_s"] = s.Normalise.Seconds()
		rate("normalise_vectors_per_s", float64(s.Vocab)*float64(s.Normalisations), s.Normalise)
		rate("normalise_bytes_per_s", float64(s.NormaliseBytes), s.Normalise)
	}
	return m
}

// Run computes the vectors once: index vectors, term vectors (checked
// against their row sums), the retraining passes and the final
// normalisation. Between stages it honours workloads.Checkpoint.
func (t *Trainer) Run(ctx context.Context) (Stats, error) {
	sh := t.sh
	st := Stats{Tokens: int64(sh.c.Tokens()), Pairs: sh.pairs, Vocab: sh.c.Vocab(), Dim: sh.cfg.Dim}
	stage := func(dst *time.Duration, f func(context.Context) (time.Duration, error)) error {
		if err := workloads.Checkpoint(ctx); err != nil {
			return err
		}
		d, err := f(ctx)
		*dst += d
		return err
	}
	if err := stage(&st.Index, t.eng.indexVectors); err != nil {
		return st, err
	}
	if err := stage(&st.TermVectors, t.eng.termVectors); err != nil {
		return st, err
	}
	if err := t.check(ctx); err != nil {
		return st, err
	}
	norm := func(fromInts bool) error {
		st.Normalisations++
		st.NormaliseBytes += int64(sh.c.Vocab()) * int64(sh.cfg.Dim) * 8
		return stage(&st.Normalise, func(ctx context.Context) (time.Duration, error) { return t.eng.normalise(ctx, fromInts) })
	}
	for r := 0; r < sh.cfg.Retrain; r++ {
		if err := norm(r == 0); err != nil {
			return st, err
		}
		if err := stage(&st.Retrain, t.eng.retrain); err != nil {
			return st, err
		}
		st.RetrainPasses++
		st.RetrainBytes += sh.retrainBytes()
	}
	if sh.cfg.Normalise {
		if err := norm(sh.cfg.Retrain == 0); err != nil {
			return st, err
		}
	}
	t.ran = true
	return st, nil
}

// check compares every term vector's sum of elements with the sum the
// corpus predicts: a lost, doubled or misplaced context shows.
func (t *Trainer) check(ctx context.Context) error {
	got, err := t.eng.rowSums(ctx)
	if err != nil {
		return err
	}
	bad, first := 0, -1
	for i, s := range got {
		if s != t.sh.expect[i] {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("term vectors on %s are wrong: %d of %d sum to other than their contexts' signs (first: %q, %d, expected %d)",
			t.eng.name(), bad, len(got), t.sh.c.Terms[first], got[first], t.sh.expect[first])
	}
	return nil
}

// TermVectors returns pass one's term vectors, V x d, row t for term t.
func (t *Trainer) TermVectors(ctx context.Context) ([]int32, error) {
	if !t.ran {
		return nil, errors.New("term vectors: Run has not completed")
	}
	return t.eng.termVectorInts(ctx)
}

// Retrained returns the last retraining pass's vectors (before the final
// normalisation).
func (t *Trainer) Retrained(ctx context.Context) ([]float32, error) {
	if !t.ran || t.sh.cfg.Retrain == 0 {
		return nil, errors.New("retrained vectors: no retraining pass has run")
	}
	return t.eng.retrained(ctx)
}

// Vectors returns the final vectors, V x d: normalised if the
// configuration says so, else the last pass's.
func (t *Trainer) Vectors(ctx context.Context) ([]float32, error) {
	switch {
	case !t.ran:
		return nil, errors.New("vectors: Run has not completed")
	case t.sh.cfg.Normalise:
		return t.eng.unit(ctx)
	case t.sh.cfg.Retrain > 0:
		return t.eng.retrained(ctx)
	}
	ints, err := t.eng.termVectorInts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(ints))
	for i, x := range ints {
		out[i] = float32(x)
	}
	return out, nil
}

// Pairs is the number of (occurrence, context) pairs one pass sums.
func (t *Trainer) Pairs() int64 { return t.sh.pairs }

// Close frees what the trainer holds (device memory included).
func (t *Trainer) Close() error { return t.eng.close() }
