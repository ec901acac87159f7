package w2v

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// The CPU emulator of w2v.cu (internal/w2vemu, -tags w2vemu) records the
// source's hash, so that Go's build cache rebuilds it when w2v.cu changes.
//go:generate ./internal/w2vemu/stamp.sh

// gpuFunctions are the kernels of w2v.cu.
var gpuFunctions = []string{"w2v_draw", "w2v_sgns_warp1", "w2v_sgns_warp2", "w2v_sgns_warp4", "w2v_sgns_warp8", "w2v_sgns_block",
	"wombat_tiles", "wombat_pairs", "wombat_windows", "wombat_negatives"}

// gpuWarps is the sentences (warps) per block of the warp kernels and of
// w2v_draw (W2V_WARPS, checked at load).
const gpuWarps = 4

// defaultShared is the dynamic shared memory a launch may use without
// asking for more.
const defaultShared = 48 << 10

// gpuDevice is a GPU with w2v.cu loaded: the CUDA driver
// (kernels.ModuleDevice), or in tests built with -tags w2vemu, w2v.cu
// compiled for the CPU (internal/w2vemu), which runs this file's host code
// unchanged.
type gpuDevice = kernels.Device

// gpuBuffer is device memory.
type gpuBuffer = kernels.Buffer

// gpuEngine trains on one GPU. The corpus and the sampler's tables are
// uploaded once; an epoch is a few launches, each drawing its sentences
// on the GPU (w2v_draw: the Go sampler's numbers) and training them, with
// nothing from the host but the sentences' learning rates.
type gpuEngine struct {
	deviceModel
	kernel string
	ring   int // bytes of one sentence's ring and its values at read time
	per    int // sentences per block of the training kernel at full width
	// The logistic table.
	tab gpuBuffer
	// The corpus (its tokens and sentence starts) and the sampler's tables
	// (keep thresholds, unigram table).
	corpus, starts, keep, unigram gpuBuffer
	// One launch's draws: kept tokens and negatives at the sentences' raw
	// offsets, kept lengths, rates, and the kept tokens' count.
	tok, neg, lens, alphas, kept gpuBuffer
	launches                     [][2]int // sentence ranges
	capTok, capSent              int
}

// openDevice opens the trainer's GPU, or the device a test gave it.
func (t *Trainer) openDevice() (gpuDevice, error) {
	if t.dev.open != nil {
		return t.dev.open(t.dev.GPU)
	}
	return openCUDADevice(t.dev.GPU)
}

func newGPUEngine(_ context.Context, t *Trainer) (*gpuEngine, error) {
	d, err := t.openDevice()
	if err != nil {
		return nil, err
	}
	g, err := newGPUEngineOn(t, d)
	if err != nil {
		return nil, errors.Join(err, d.Close())
	}
	return g, nil
}

// newGPUEngineOn prepares training on d, which it closes with the engine.
func newGPUEngineOn(t *Trainer, d gpuDevice) (_ *gpuEngine, err error) {
	cfg, c := t.cfg, t.c
	g := &gpuEngine{deviceModel: deviceModel{t: t, dev: d}, kernel: t.lay.kernelName()}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.freeBuffers())
		}
	}()
	for name, want := range map[string]int32{"w2v_warps": gpuWarps, "w2v_exp_table": expTableSize, "w2v_neg_tries": negativeTries} {
		got, err := d.GlobalInt32(name)
		if err != nil {
			return nil, fmt.Errorf("%w (a w2v module older than this build? regenerate it with kernels/scripts/gen.sh)", err)
		}
		if got != want {
			return nil, fmt.Errorf("module w2v: %s is %d, the host expects %d: the kernels do not match this build", name, got, want)
		}
	}
	if c.Tokens() >= 1<<31 {
		return nil, fmt.Errorf("a corpus of %d tokens: the GPU indexes at most 2^31", c.Tokens())
	}
	g.ring = 2 * (2*cfg.WindowFixed() + 1) * cfg.Dim * 4
	g.per = gpuWarps
	if t.lay.warps > 1 {
		g.per = 1
	}
	full := g.sharedBytes(g.per)
	info := d.Info()
	if full > info.SharedPerBlockBytes {
		return nil, fmt.Errorf("GPU %d (%s): kernel %s keeps 2 x %d context vectors of dimension %d in %d bytes of shared memory per block, above the %d a block may have; use a smaller window",
			info.Ordinal, info.Name, g.kernel, 2*cfg.WindowFixed()+1, cfg.Dim, full, info.SharedPerBlockBytes)
	}
	if full > defaultShared {
		if err := d.SetMaxShared(g.kernel, full); err != nil {
			return nil, err
		}
	}
	g.plan(t.dev.BatchTokens)
	v, T, S := c.Vocab.Size(), int(c.Tokens()), c.Sentences()
	s := t.s
	err = allocAll(d, []gpuAlloc{
		{&g.syn0, 4 * v * cfg.Dim}, {&g.syn1, 4 * v * cfg.Dim}, {&g.tab, 4 * expTableSize},
		{&g.corpus, 4 * T}, {&g.starts, 4 * (S + 1)}, {&g.keep, 8 * v}, {&g.unigram, 4 * len(s.table)},
		{&g.tok, 4 * g.capTok}, {&g.neg, 4 * g.capTok * cfg.Negatives},
		{&g.lens, 4 * g.capSent}, {&g.alphas, 4 * g.capSent}, {&g.kept, 8},
	}, func(need, free int64) error {
		return fmt.Errorf("training %d words of dimension %d on %d tokens needs %.2f GiB on GPU %d (%s), which has %.2f GiB free (a smaller batch_tokens needs less)",
			v, cfg.Dim, T, float64(need)/(1<<30), info.Ordinal, info.Name, float64(free)/(1<<30))
	})
	if err != nil {
		return nil, err
	}
	starts := make([]int32, S+1)
	for i := range starts {
		starts[i] = int32(c.starts[i])
	}
	for _, up := range []struct {
		dst gpuBuffer
		src []byte
	}{
		{g.tab, kernels.Bytes(newExpTable())}, {g.corpus, kernels.Bytes(c.tokens)}, {g.starts, kernels.Bytes(starts)},
		{g.keep, kernels.Bytes(s.keep)}, {g.unigram, kernels.Bytes(s.table)},
	} {
		if err := d.Upload(up.dst, up.src); err != nil {
			return nil, fmt.Errorf("upload the corpus and the sampler's tables: %w", err)
		}
	}
	return g, nil
}

// sharedBytes is the training kernel's dynamic shared memory for a block
// of sentences sentences (warp kernels) or one (the block kernel): the
// logistic table, the reduction slots (block kernel) and the rings.
func (g *gpuEngine) sharedBytes(sentences int) int {
	if g.t.lay.warps > 1 {
		return 4*expTableSize + 2*32*4 + g.ring
	}
	return 4*expTableSize + sentences*g.ring
}

// plan cuts an epoch into launches of consecutive sentences of at most
// batchTokens raw tokens (and at least one sentence).
func (g *gpuEngine) plan(batchTokens int) {
	c := g.t.c
	if batchTokens <= 0 {
		batchTokens = DefaultBatchTokens
	}
	longest := 0
	for i := 0; i < c.Sentences(); i++ {
		longest = max(longest, len(c.Sentence(i)))
	}
	g.capTok = max(min(batchTokens, int(c.Tokens())), longest)
	g.launches, g.capSent = nil, 0
	for lo := 0; lo < c.Sentences(); {
		hi := lo + 1
		for hi < c.Sentences() && int(c.starts[hi+1]-c.starts[lo]) <= g.capTok {
			hi++
		}
		g.launches = append(g.launches, [2]int{lo, hi})
		g.capSent = max(g.capSent, hi-lo)
		lo = hi
	}
}

func (g *gpuEngine) name() string {
	info := g.dev.Info()
	return fmt.Sprintf("GPU %d (%s), kernel %s", info.Ordinal, info.Name, g.kernel)
}

// deviceModel is a trainer's model on a GPU: the word vectors (syn0) and
// the output weights (syn1), which the SGNS and Wombat engines reset, read
// and checkpoint alike.
type deviceModel struct {
	t          *Trainer
	dev        gpuDevice
	syn0, syn1 gpuBuffer
}

func (m *deviceModel) reset(syn0, syn1 []float32) error {
	return errors.Join(m.dev.Upload(m.syn0, kernels.Bytes(syn0)), m.dev.Upload(m.syn1, kernels.Bytes(syn1)))
}

func (m *deviceModel) vectors(context.Context) ([]float32, error) {
	out := make([]float32, m.t.c.Vocab.Size()*m.t.cfg.Dim)
	return out, m.dev.Download(kernels.Bytes(out), m.syn0)
}

func (m *deviceModel) weights() (syn0, syn1 []float32, err error) {
	n := m.t.c.Vocab.Size() * m.t.cfg.Dim
	syn0, syn1 = make([]float32, n), make([]float32, n)
	err = errors.Join(m.dev.Download(kernels.Bytes(syn0), m.syn0), m.dev.Download(kernels.Bytes(syn1), m.syn1))
	return syn0, syn1, err
}

// epoch runs the epoch's launches, each drawing then training its
// sentences; between them it honours workloads.Checkpoint. The host's
// share is the learning rates, counted as hostWait.
func (g *gpuEngine) epoch(ctx context.Context, e int) (epochStats, error) {
	t := g.t
	var st epochStats
	alphas := make([]float32, g.capSent)
	var kept [1]uint64
	for _, r := range g.launches {
		if err := workloads.Checkpoint(ctx); err != nil {
			return epochStats{}, err
		}
		host := time.Now()
		lo, hi := r[0], r[1]
		n := hi - lo
		for i := lo; i < hi; i++ {
			alphas[i-lo] = t.s.alpha(e, i)
		}
		kept[0] = 0
		if err := errors.Join(g.dev.Upload(g.alphas, kernels.Bytes(alphas[:n])), g.dev.Upload(g.kept, kernels.Bytes(kept[:]))); err != nil {
			return epochStats{}, fmt.Errorf("%s: %w", g.name(), err)
		}
		st.hostWait += time.Since(host)
		if err := g.dev.Start(); err != nil {
			return epochStats{}, err
		}
		lerr := g.draw(e, lo, hi)
		if lerr == nil {
			lerr = g.launch(lo, n, int32(t.c.starts[lo]), g.tok, g.neg, g.starts, g.lens, g.alphas)
		}
		k, err := g.dev.Stop()
		if lerr != nil || err != nil {
			return epochStats{}, fmt.Errorf("%s: %w", g.name(), errors.Join(lerr, err))
		}
		if err := g.dev.Download(kernels.Bytes(kept[:]), g.kept); err != nil {
			return epochStats{}, fmt.Errorf("%s: %w", g.name(), err)
		}
		st.kernel += k
		st.kept += int64(kept[0])
	}
	return st, ctx.Err()
}

// draw queues w2v_draw for sentences lo .. hi-1 of epoch e: their kept
// tokens and negatives to tok and neg (at their raw offsets from sentence
// lo's), kept lengths to lens, and their sum added to kept.
func (g *gpuEngine) draw(e, lo, hi int) error {
	s, n := g.t.s, hi-lo
	return g.dev.Launch("w2v_draw", cuda.Dim1((n+gpuWarps-1)/gpuWarps), cuda.Dim1(32*gpuWarps), 0,
		g.corpus, g.starts, g.keep, g.unigram, g.tok, g.neg, g.lens, g.kept,
		int32(len(s.table)), int32(s.vocab), boolInt32(s.eos), int32(s.cfg.Negatives),
		int32(uint32(s.cfg.Seed)), int32(uint32(s.cfg.Seed>>32)), int32(e), int32(lo), int32(n), int32(g.t.c.starts[lo]))
}

func boolInt32(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// launch queues the training of sentences first .. first+n-1: at most
// Device.Concurrency at once (one, in order, when sequential).
func (g *gpuEngine) launch(first, n int, base int32, tok, neg, starts, lens, alphas gpuBuffer) error {
	cfg := g.t.cfg
	per := g.per
	grid := (n + per - 1) / per
	c := g.t.dev.Concurrency
	if g.t.dev.sequential {
		c = 1
	}
	if c > 0 {
		// Fewer blocks, each looping over sentences: at most c at once.
		if c < per {
			per = c
		}
		grid = min(grid, max(1, c/per))
	}
	block := 32 * g.t.lay.warps
	if g.t.lay.warps == 1 {
		block = 32 * per
	}
	return g.dev.Launch(g.kernel, cuda.Dim1(grid), cuda.Dim1(block), g.sharedBytes(per),
		g.syn0, g.syn1, tok, neg, starts, lens, alphas, g.tab,
		int32(first), int32(n), base, int32(cfg.Dim), int32(cfg.WindowFixed()), int32(cfg.Negatives), boolInt32(cfg.Fresh))
}

// runBatch trains explicitly given sentences (the reference tests) and
// waits for the GPU: all at once (up to Device.Concurrency), or one per
// launch when sequential.
func (g *gpuEngine) runBatch(b *batch) (time.Duration, error) {
	d := g.dev
	lens := b.lens()
	var bufs [5]gpuBuffer
	defer func() {
		for _, x := range bufs {
			if x != nil {
				x.Free()
			}
		}
	}()
	for i, src := range [][]byte{kernels.Bytes(b.tokens), kernels.Bytes(b.negs), kernels.Bytes(b.starts), kernels.Bytes(lens), kernels.Bytes(b.alphas)} {
		var err error
		if bufs[i], err = d.Alloc(int64(max(len(src), 4))); err != nil {
			return 0, err
		}
		if err := d.Upload(bufs[i], src); err != nil {
			return 0, err
		}
	}
	tok, neg, starts, lbuf, abuf := bufs[0], bufs[1], bufs[2], bufs[3], bufs[4]
	if err := d.Start(); err != nil {
		return 0, err
	}
	var lerr error
	n := b.sentences()
	if !g.t.dev.sequential {
		lerr = g.launch(0, n, 0, tok, neg, starts, lbuf, abuf)
	}
	for i := 0; g.t.dev.sequential && i < n && lerr == nil; i++ {
		// One sentence per launch: its own length and rate first.
		lerr = errors.Join(d.Upload(lbuf, kernels.Bytes(lens[i:i+1])), d.Upload(abuf, kernels.Bytes(b.alphas[i:i+1])))
		if lerr == nil {
			lerr = g.launch(i, 1, 0, tok, neg, starts, lbuf, abuf)
		}
	}
	k, err := d.Stop()
	if lerr != nil || err != nil {
		return 0, fmt.Errorf("%s: %w", g.name(), errors.Join(lerr, err))
	}
	return k, nil
}

func (g *gpuEngine) freeBuffers() error {
	var errs []error
	for _, b := range []*gpuBuffer{&g.syn0, &g.syn1, &g.tab, &g.corpus, &g.starts, &g.keep, &g.unigram,
		&g.tok, &g.neg, &g.lens, &g.alphas, &g.kept} {
		if *b != nil {
			errs = append(errs, (*b).Free())
			*b = nil
		}
	}
	return errors.Join(errs...)
}

func (g *gpuEngine) close() error {
	err := g.freeBuffers()
	if g.dev != nil {
		err = errors.Join(err, g.dev.Close())
		g.dev = nil
	}
	return err
}

// openCUDADevice opens GPU gpu with w2v.cu loaded.
func openCUDADevice(gpu int) (*kernels.ModuleDevice, error) {
	return kernels.OpenModuleDevice(gpu, "w2v", gpuFunctions)
}

// gpuAlloc is one device buffer to allocate and its size in bytes.
type gpuAlloc struct {
	dst  *gpuBuffer
	size int
}

// allocAll allocates every buffer, or none when together they need more
// than the GPU has free, which tooBig then explains. A buffer allocated
// before a later allocation fails stays in its dst for the caller to free.
func allocAll(d gpuDevice, bufs []gpuAlloc, tooBig func(need, free int64) error) error {
	var need int64
	for _, b := range bufs {
		need += int64(b.size)
	}
	free, err := d.MemFree()
	if err != nil {
		return err
	}
	if need > free {
		return tooBig(need, free)
	}
	for _, b := range bufs {
		if *b.dst, err = d.Alloc(int64(max(b.size, 4))); err != nil {
			return err
		}
	}
	return nil
}
