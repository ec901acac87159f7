package lda

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"time"
	"unsafe"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// Constants of lda.cu, checked against the module at load.
const (
	gpuThreads   = 256 // LDA_THREADS: the largest block, and the default
	gpuScales    = numScales
	gpuSmallRow  = smallRow
	defaultSmem  = 48 << 10
	gpuPersist   = 8 // sparse-sampling blocks per SM (persistent grid)
	gpuHistPerSM = 2 // topic-histogram blocks per SM
)

// The CPU emulator of lda.cu (internal/ldaemu, -tags ldaemu) records the
// source's hash, so that Go's build cache rebuilds it when lda.cu changes.
//go:generate ./internal/ldaemu/stamp.sh

// gpuFunctions are the kernels of lda.cu.
var gpuFunctions = []string{
	"lda_init", "lda_topics", "lda_tables", "lda_prep_dense", "lda_prep_sparse", "lda_sample_dense",
	"lda_sample_sparse", "lda_count_topics", "lda_count_dense", "lda_rows_small", "lda_rows_large",
	"lda_ll_dense", "lda_ll_rows", "lda_check_dense", "lda_check_rows", "lda_check_topics", "lda_philox_kat",
}

// gpuDevice is a GPU with lda.cu loaded: the CUDA driver
// (kernels.ModuleDevice), or in tests built with -tags ldaemu, lda.cu
// compiled for the CPU (internal/ldaemu), which runs this file's host code
// unchanged.
type gpuDevice = kernels.Device

// gpuBuffer is device memory.
type gpuBuffer = kernels.Buffer

// gpuEngine runs lda.cu on one GPU. The corpus, the counts and the
// per-iteration rows stay in device memory; results come back on request.
type gpuEngine struct {
	cfg   Config
	l     *layout
	dev   gpuDevice
	block int // threads per block (a power of two, at most gpuThreads)
	iter  uint32
	// twoBranch turns the max-topic shortcut off.
	twoBranch bool
	// lastShortcuts is how many of this GPU's tokens the shortcut decided
	// in the last sampling, which picks the next one's shortcut mode;
	// forceShortcut, when nonzero, is the mode every sampling uses (tests).
	lastShortcuts int64
	forceShortcut uint32
	// mode is the shortcut mode of the sampling under way.
	mode      uint32
	allocated int64
	// part is the units this GPU samples: all of them, or its share
	// when several GPUs sample one chain (multiGPU).
	part share

	// The layout.
	wordOff, tokDoc, tokIdx, docOff, docTok      gpuBuffer
	denseUnits, mediumUnits, sparseUnits         gpuBuffer
	smallDocs, largeDocs, smallWords, largeWords gpuBuffer
	// The state: topics and counts.
	z, znew, t, wd, wTop, wCnt, wLen, dRow, dLen gpuBuffer
	// Per iteration.
	denom, consts, zphi, gpre, zphiMax, nscales gpuBuffer
	ws32, ws64, phiD, epreD, phiS, epreS        gpuBuffer
	// Scratch.
	counter, nshort, partial, colW, colD, errs gpuBuffer
	partialLen                                 int
}

func newGPUEngine(_ context.Context, cfg Config, dev Device, l *layout) (engine, error) {
	open := dev.open
	if open == nil {
		open = func(gpu int) (gpuDevice, error) { return openCUDADevice(gpu) }
	}
	if dev.GPUs > 1 {
		var devs []gpuDevice
		for i := range dev.GPUs {
			d, err := open(dev.GPU + i)
			if err != nil {
				for _, d := range devs {
					err = errors.Join(err, d.Close())
				}
				return nil, err
			}
			devs = append(devs, d)
		}
		m, err := newMultiGPU(cfg, l, devs, gpuThreads)
		if err != nil {
			return nil, err
		}
		m.setTwoBranch(dev.Options.TwoBranch)
		return m, nil
	}
	d, err := open(dev.GPU)
	if err != nil {
		return nil, err
	}
	g, err := newGPUEngineOn(cfg, l, d, gpuThreads)
	if err != nil {
		return nil, errors.Join(err, d.Close())
	}
	g.twoBranch = dev.Options.TwoBranch
	return g, nil
}

// newGPUEngineOn prepares the sampler on d, which it closes with the
// engine; block is the threads per block.
func newGPUEngineOn(cfg Config, l *layout, d gpuDevice, block int) (_ *gpuEngine, err error) {
	if block < 32 || block > gpuThreads || block&(block-1) != 0 {
		return nil, fmt.Errorf("GPU block of %d threads: want a power of two from 32 to %d", block, gpuThreads)
	}
	g := &gpuEngine{cfg: cfg, l: l, dev: d, block: block, part: wholeShare(l)}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.freeBuffers())
		}
	}()
	if l.maxDocLen >= 1<<g.docShift() {
		return nil, fmt.Errorf("a document of %d tokens is too long for the GPU at K=%d: its rows pack a topic and a count into 32 bits, which leaves %d bits, counts below %d; use fewer topics, split the document, or use device=cpu",
			l.maxDocLen, l.k, g.docShift(), 1<<g.docShift())
	}
	info := d.Info()
	for name, want := range map[string]int32{"lda_threads": gpuThreads, "lda_small_row": gpuSmallRow, "lda_scales": gpuScales} {
		got, err := d.GlobalInt32(name)
		if err != nil {
			return nil, err
		}
		if got != want {
			return nil, fmt.Errorf("module lda: %s is %d, the host expects %d: the kernels do not match this build", name, got, want)
		}
	}
	// The rebuild keeps a histogram of K counters in shared memory (beside
	// lda_rows_large's 2 KiB of static scan buffer).
	hist := 4 * l.k
	if hist+gpuThreads*8 > info.SharedPerBlockBytes {
		return nil, fmt.Errorf("GPU %d (%s): %d topics need %d bytes of shared memory a block, above its %d; use fewer topics or device=cpu",
			info.Ordinal, info.Name, l.k, hist+gpuThreads*8, info.SharedPerBlockBytes)
	}
	if hist > defaultSmem {
		for _, k := range []string{"lda_count_topics", "lda_count_dense", "lda_rows_large", "lda_sample_dense"} {
			if err := d.SetMaxShared(k, hist); err != nil {
				return nil, err
			}
		}
	}
	free, err := d.MemFree()
	if err != nil {
		return nil, err
	}
	if need := gpuBytes(l, info.SMs); need > free {
		return nil, fmt.Errorf("LDA of %d tokens at K=%d (%s word-topic rows) needs %.2f GiB on GPU %d (%s), which has %.2f GiB free",
			l.n, l.k, formatOf(l), float64(need)/(1<<30), info.Ordinal, info.Name, float64(free)/(1<<30))
	}
	return g, g.upload()
}

// docShift is where a packed document-row entry's topic begins: the bits
// below hold its count (topic << docShift | count), as many as K's
// topic numbers leave.
func (g *gpuEngine) docShift() uint32 {
	return uint32(min(31, 32-bits.Len32(uint32(g.l.k-1))))
}

func formatOf(l *layout) string {
	return fmt.Sprintf("%d dense, %d sparse", l.dense, l.v-l.dense)
}

// gpuBytes is the device memory the sampler takes for layout l (with
// the default block size on a GPU of sms multiprocessors): what upload
// allocates, computed without allocating, for the comparison with a
// dense-W sampler and to fail early when it does not fit.
func gpuBytes(l *layout, sms int) int64 {
	g := &gpuEngine{l: l, block: gpuThreads}
	g.partialLen = partialBlocks(l, g.block, max(1, sms*4))
	n := int64(0)
	for _, b := range g.buffers() {
		n += int64(max(b.n, 1)) * int64(b.size)
	}
	return n
}

// partialBlocks is the most blocks a log-likelihood launch uses.
func partialBlocks(l *layout, block, llGrid int) int {
	return max(1, llGrid, (l.v-l.dense+block-1)/block, (l.d+block-1)/block)
}

func (g *gpuEngine) llGrid() int { return max(1, g.dev.Info().SMs*4) }

func (g *gpuEngine) alloc(dst *gpuBuffer, n, size int) error {
	bytes := int64(max(n, 1)) * int64(size)
	b, err := g.dev.Alloc(bytes)
	if err != nil {
		return err
	}
	*dst = b
	g.allocated += bytes
	return nil
}

func uploadNew[T cuda.Element](g *gpuEngine, dst *gpuBuffer, data []T) error {
	var zero T
	if err := g.alloc(dst, len(data), int(unsafe.Sizeof(zero))); err != nil {
		return err
	}
	if len(data) == 0 {
		return nil
	}
	return g.dev.Upload(*dst, kernels.Bytes(data))
}

func download[T cuda.Element](g *gpuEngine, dst []T, src gpuBuffer) error {
	if len(dst) == 0 {
		return nil
	}
	return g.dev.Download(kernels.Bytes(dst), src)
}

// bufSpec is one device buffer: n elements of size bytes, uploaded from
// data when not nil.
type bufSpec struct {
	dst     *gpuBuffer
	n, size int
	data    []uint32
}

// buffers lists every buffer the engine allocates.
func (g *gpuEngine) buffers() []bufSpec {
	l := g.l
	k, n, v, d := l.k, l.n, l.v, l.d
	ns := n - int(l.sparseBase)
	up := func(dst *gpuBuffer, data []uint32) bufSpec { return bufSpec{dst, len(data), 4, data} }
	return []bufSpec{
		up(&g.wordOff, l.wordOff), up(&g.tokDoc, l.tokDoc), up(&g.tokIdx, l.tokIdx), up(&g.docOff, l.docOff),
		up(&g.docTok, l.docTok), up(&g.denseUnits, l.denseUnits), up(&g.mediumUnits, l.mediumUnits),
		up(&g.sparseUnits, l.sparseUnits), up(&g.smallDocs, l.smallDocs), up(&g.largeDocs, l.largeDocs),
		up(&g.smallWords, l.smallWords), up(&g.largeWords, l.largeWords),
		{&g.z, n, 4, nil}, {&g.znew, n, 4, nil}, {&g.t, k, 4, nil}, {&g.wd, l.dense * k, 4, nil},
		{&g.wTop, ns, 4, nil}, {&g.wCnt, ns, 4, nil}, {&g.wLen, v, 4, nil}, {&g.dRow, n, 4, nil}, {&g.dLen, d, 4, nil},
		{&g.denom, k, 8, nil}, {&g.consts, 2, 8, nil}, {&g.zphi, gpuScales * k, 4, nil}, {&g.gpre, gpuScales * k, 8, nil},
		{&g.zphiMax, gpuScales, 4, nil}, {&g.nscales, 1, 4, nil},
		{&g.ws32, 4 * v, 4, nil}, {&g.ws64, 3 * v, 8, nil}, {&g.phiD, l.dense * k, 4, nil}, {&g.epreD, l.dense * k, 8, nil},
		{&g.phiS, ns, 4, nil}, {&g.epreS, ns, 8, nil},
		{&g.counter, 1, 4, nil}, {&g.nshort, 1, 8, nil}, {&g.partial, g.partialLen, 8, nil}, {&g.colW, k, 4, nil},
		{&g.colD, k, 4, nil}, {&g.errs, 3, 4, nil},
	}
}

func (g *gpuEngine) upload() error {
	g.partialLen = partialBlocks(g.l, g.block, g.llGrid())
	for _, b := range g.buffers() {
		if b.data != nil {
			if err := uploadNew(g, b.dst, b.data); err != nil {
				return err
			}
		} else if err := g.alloc(b.dst, b.n, b.size); err != nil {
			return err
		}
	}
	// The rebuild writes the lengths of rows with tokens only: words and
	// documents without any have rows of length zero throughout. Rows'
	// unused room is never read by a kernel, but state copies it out:
	// zero it too.
	for _, b := range []gpuBuffer{g.wLen, g.dLen, g.wTop, g.wCnt, g.dRow} {
		if err := g.dev.Memset(b, 0); err != nil {
			return err
		}
	}
	return nil
}

func (g *gpuEngine) name() string {
	info := g.dev.Info()
	return fmt.Sprintf("GPU %d (%s)", info.Ordinal, info.Name)
}

func (g *gpuEngine) bytes() int64 { return g.allocated }

func (g *gpuEngine) launch(name string, grid int, shared int, args ...any) error {
	if grid == 0 {
		return nil
	}
	return g.dev.Launch(name, cuda.Dim1(grid), cuda.Dim1(g.block), shared, args...)
}

// blocksFor is the grid that gives one thread to each of n items.
func (g *gpuEngine) blocksFor(n int) int { return (n + g.block - 1) / g.block }

// timed runs f's launches as one stage and returns its device time.
func (g *gpuEngine) timed(ctx context.Context, f func() error) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := g.dev.Start(); err != nil {
		return 0, err
	}
	ferr := f()
	d, err := g.dev.Stop()
	if ferr != nil || err != nil {
		return 0, fmt.Errorf("%s: %w", g.name(), errors.Join(ferr, err))
	}
	return d, nil
}

func (g *gpuEngine) initialise(ctx context.Context) error {
	l := g.l
	_, err := g.timed(ctx, func() error {
		grid := max(1, min(g.blocksFor(l.n), g.dev.Info().SMs*32))
		if err := g.launch("lda_init", grid, 0, g.tokIdx, uint32(l.n), g.cfg.Seed, uint32(l.k), g.z); err != nil {
			return err
		}
		return g.rebuild()
	})
	g.iter = 0
	return err
}

func (g *gpuEngine) step(ctx context.Context) (stepStats, error) {
	g.iter++
	var st stepStats
	var err error
	if st.sample, err = g.timed(ctx, g.sample); err != nil {
		return st, err
	}
	g.z, g.znew = g.znew, g.z
	if st.rebuild, err = g.timed(ctx, g.rebuild); err != nil {
		return st, err
	}
	st.shortcuts, err = g.shortcuts()
	return st, err
}

// sample queues iteration g.iter's per-iteration tables and the sampling
// of g.part's units into znew.
func (g *gpuEngine) sample() error {
	if err := g.prep(); err != nil {
		return err
	}
	return g.draw()
}

// prep queues the per-iteration tables of every word.
func (g *gpuEngine) prep() error {
	l, cfg := g.l, g.cfg
	k := uint32(l.k)
	vbeta := float64(float64(l.v) * cfg.Beta)
	if err := g.launch("lda_topics", 1, 0, g.t, k, vbeta, cfg.Beta, g.denom, g.consts); err != nil {
		return err
	}
	if err := g.launch("lda_tables", gpuScales, 0, g.denom, g.consts, k, cfg.Alpha, cfg.Beta, g.zphi, g.gpre, g.zphiMax, g.nscales); err != nil {
		return err
	}
	if err := g.launch("lda_prep_dense", l.dense, 0, g.wd, k, g.denom, g.consts, cfg.Alpha, cfg.Beta,
		g.zphiMax, g.gpre, g.phiD, g.epreD, g.ws32, g.ws64); err != nil {
		return err
	}
	if err := g.launch("lda_prep_sparse", g.blocksFor(l.v-l.dense), 0, uint32(l.dense), uint32(l.v), g.wordOff, l.sparseBase,
		g.wTop, g.wCnt, g.wLen, k, g.denom, g.consts, cfg.Alpha, cfg.Beta, g.zphiMax, g.gpre, g.phiS, g.epreS, g.ws32, g.ws64); err != nil {
		return err
	}
	return nil
}

// draw queues the sampling of g.part's units into znew.
func (g *gpuEngine) draw() error {
	if err := g.drawStart(); err != nil {
		return err
	}
	for li := range numLists {
		if err := g.drawList(li); err != nil {
			return err
		}
	}
	return nil
}

// drawStart zeroes the sampling's counters and picks its shortcut mode,
// before the first drawList.
func (g *gpuEngine) drawStart() error {
	if err := g.dev.Memset(g.counter, 0); err != nil {
		return err
	}
	if err := g.dev.Memset(g.nshort, 0); err != nil {
		return err
	}
	g.mode = g.shortcutMode()
	return nil
}

// drawList queues the sampling of g.part's units of list li (listDense,
// listMedium, listSparse) into znew.
func (g *gpuEngine) drawList(li int) error {
	l, cfg := g.l, g.cfg
	k := uint32(l.k)
	r := *g.part.list(li)
	switch li {
	case listDense, listMedium:
		units, medium := g.denseUnits, uint32(0)
		if li == listMedium {
			units, medium = g.mediumUnits, 1
		}
		return g.launch("lda_sample_dense", r.n(), 4*l.k, units, uint32(r.lo), medium, g.phiD, g.epreD, g.wordOff,
			l.sparseBase, g.wTop, g.wLen, g.phiS, g.epreS, g.ws32, g.ws64, g.zphi, g.gpre, k, g.tokDoc, g.tokIdx, g.docOff,
			g.dRow, g.docShift(), g.dLen, cfg.Seed, g.iter, g.mode, g.znew, g.nshort)
	}
	persist := min(r.n(), g.dev.Info().SMs*gpuPersist*gpuThreads/g.block)
	return g.launch("lda_sample_sparse", persist, 0, g.sparseUnits, uint32(r.lo), uint32(r.n()), g.counter,
		g.wordOff, l.sparseBase, g.wTop, g.wLen, g.phiS, g.epreS, g.ws32, g.ws64, g.zphi, g.gpre, k,
		g.tokDoc, g.tokIdx, g.docOff, g.dRow, g.docShift(), g.dLen, cfg.Seed, g.iter, g.mode, g.znew, g.nshort)
}

// The kernels' shortcut modes (lda.cu's LDA_SHORTCUT_*).
const (
	shortcutOff   = 0 // two-branch sampling
	shortcutFirst = 1 // the bound test, then the document branch
	shortcutAfter = 2 // the document branch, then the bound test
)

// shortcutFirstAbove is the share of tokens the shortcut must have decided
// in the previous iteration for the sampler to test it first. Testing first
// costs every token a warp search of its document row for b1 and saves the
// document branch of the tokens the test decides; the document branch
// yields b1 anyway, so while the test rarely fires (the first iterations
// at large K: under 3 % of tokens in the first 100 of the NYTimes-shaped
// corpus at K=1024) running it after gives the same topics and counts for
// less. Measured on the H100 (nytimes-tenth, 300 iterations, each mode
// forced with LDA_BENCH_SHORTCUT): with the test deciding 15 % of tokens,
// testing first was 25 % slower at K=128 and 17 % slower at K=1024; a
// cost linear in the decided share puts the crossing at 34-40 %.
const shortcutFirstAbove = 0.4

// shortcutMode is the mode of the next sampling.
func (g *gpuEngine) shortcutMode() uint32 {
	switch {
	case g.twoBranch:
		return shortcutOff
	case g.forceShortcut != 0:
		return g.forceShortcut
	}
	var n int64
	for _, r := range tokenRanges(g.l, g.part) {
		n += int64(r[1] - r[0])
	}
	if n > 0 && float64(g.lastShortcuts) >= shortcutFirstAbove*float64(n) {
		return shortcutFirst
	}
	return shortcutAfter
}

// shortcuts reads the tokens of the last sampling that took the
// max-topic shortcut.
func (g *gpuEngine) shortcuts() (int64, error) {
	var n [1]uint64
	if err := download(g, n[:], g.nshort); err != nil {
		return 0, err
	}
	g.lastShortcuts = int64(n[0])
	return int64(n[0]), nil
}

// rebuild counts T, W and D from z on the GPU.
func (g *gpuEngine) rebuild() error {
	for _, st := range g.rebuildStages(nil) {
		if err := st.run(); err != nil {
			return err
		}
	}
	return nil
}

// stage is a named part of an iteration's launches, timed apart by the
// multi-GPU phase benchmark.
type stage struct {
	name string
	run  func() error
}

// rebuildStages are the rebuild's launches in order: the document rows,
// the dense word rows, the topic totals and the sparse word rows; with
// shard set, only its documents' and dense words' rows (the dense rows
// all zeroed). The shared-out rows come first, so that their copies to
// the other GPUs overlap the rest.
func (g *gpuEngine) rebuildStages(shard *recount) []stage {
	l := g.l
	k := uint32(l.k)
	rows := func(small, large gpuBuffer, nsmall, nlarge int, off, idx gpuBuffer, indirect, base uint32, top, cnt, count gpuBuffer, pack uint32) func() error {
		return func() error {
			if err := g.launch("lda_rows_small", g.blocksFor(nsmall), 0, small, uint32(nsmall), off, idx, indirect,
				g.z, base, top, cnt, count, pack); err != nil {
				return err
			}
			return g.launch("lda_rows_large", nlarge, 4*l.k, large, off, idx, indirect, g.z, k, base,
				top, cnt, count, pack)
		}
	}
	docs := rows(g.smallDocs, g.largeDocs, len(l.smallDocs), len(l.largeDocs), g.docOff, g.docTok, 1, 0, g.dRow, g.dRow, g.dLen, g.docShift())
	units, nunits := g.denseUnits, l.nDenseUnits()
	if r := shard; r != nil {
		docs = rows(r.smallDocs, r.largeDocs, r.nSmallDocs, r.nLargeDocs, g.docOff, g.docTok, 1, 0, g.dRow, g.dRow, g.dLen, g.docShift())
		units, nunits = r.denseUnits, r.nUnits
	}
	return []stage{
		{stageDocs, docs},
		{stageDense, func() error {
			if err := g.dev.Memset(g.wd, 0); err != nil {
				return err
			}
			return g.launch("lda_count_dense", nunits, 4*l.k, units, g.z, k, g.wd)
		}},
		{"topics", func() error {
			if err := g.dev.Memset(g.t, 0); err != nil {
				return err
			}
			grid := max(1, min(g.blocksFor(l.n), g.dev.Info().SMs*gpuHistPerSM))
			return g.launch("lda_count_topics", grid, 4*l.k, g.z, uint32(l.n), k, g.t)
		}},
		{"sparse W", rows(g.smallWords, g.largeWords, len(l.smallWords), len(l.largeWords), g.wordOff, g.wordOff, 0, l.sparseBase, g.wTop, g.wCnt, g.wLen, 0)},
	}
}

// The stages whose rows multiGPU shares out (recount).
const (
	stageDocs  = "D"
	stageDense = "dense W"
)

// state downloads the counts and topics.
func (g *gpuEngine) state(ctx context.Context) (*counts, []uint32, error) {
	l := g.l
	c := newCounts(l)
	z := make([]uint32, l.n)
	for _, x := range []struct {
		dst []uint32
		src gpuBuffer
	}{
		{z, g.z}, {c.t, g.t}, {c.wd, g.wd}, {c.wTop, g.wTop}, {c.wCnt, g.wCnt}, {c.wLen, g.wLen},
		{c.dTop, g.dRow}, {c.dLen, g.dLen},
	} {
		if err := download(g, x.dst, x.src); err != nil {
			return nil, nil, err
		}
	}
	// Unpack the document rows (unused room is zero, and stays so).
	shift := g.docShift()
	for i, e := range c.dTop {
		c.dTop[i], c.dCnt[i] = e>>shift, e&(1<<shift-1)
	}
	return c, z, nil
}

// logLikelihood sums the lnΓ terms on the GPU, block by block, and adds
// the blocks' sums and the topic terms here.
func (g *gpuEngine) logLikelihood(ctx context.Context) (float64, error) {
	l, cfg := g.l, g.cfg
	total := 0.0
	sum := func(blocks int, launch func() error) error {
		if blocks == 0 {
			return nil
		}
		if err := launch(); err != nil {
			return err
		}
		p := make([]float64, blocks)
		if err := download(g, p, g.partial); err != nil {
			return err
		}
		for _, x := range p {
			total += x
		}
		return nil
	}
	lgb, lga := lgamma(cfg.Beta), lgamma(cfg.Alpha)
	_, err := g.timed(ctx, func() error {
		n := l.dense * l.k
		grid := 0
		if n > 0 {
			grid = min(g.llGrid(), g.blocksFor(n))
		}
		if err := sum(grid, func() error {
			return g.launch("lda_ll_dense", grid, 0, g.wd, uint64(n), cfg.Beta, lgb, g.partial)
		}); err != nil {
			return err
		}
		grid = g.blocksFor(l.v - l.dense)
		if err := sum(grid, func() error {
			return g.launch("lda_ll_rows", grid, 0, uint32(l.dense), uint32(l.v), g.wordOff, l.sparseBase, g.wLen, g.wTop, g.wCnt, uint32(0), cfg.Beta, lgb, g.partial)
		}); err != nil {
			return err
		}
		grid = g.blocksFor(l.d)
		return sum(grid, func() error {
			return g.launch("lda_ll_rows", grid, 0, uint32(0), uint32(l.d), g.docOff, uint32(0), g.dLen, g.dRow, g.dRow, g.docShift(), cfg.Alpha, lga, g.partial)
		})
	})
	if err != nil {
		return 0, err
	}
	t := make([]uint32, l.k)
	if err := download(g, t, g.t); err != nil {
		return 0, err
	}
	return total - topicTerms(t, l.v, cfg.Beta), nil
}

// check runs the invariant kernels: row sums, sorted sparse rows with
// positive counts, column sums equal to T, and T summing to the tokens.
func (g *gpuEngine) check(ctx context.Context) error {
	l := g.l
	k := uint32(l.k)
	_, err := g.timed(ctx, func() error {
		for _, b := range []gpuBuffer{g.colW, g.colD, g.errs} {
			if err := g.dev.Memset(b, 0); err != nil {
				return err
			}
		}
		if err := g.launch("lda_check_dense", l.dense, 0, g.wd, g.wordOff, k, g.colW, g.errs); err != nil {
			return err
		}
		if err := g.launch("lda_check_rows", g.blocksFor(l.v-l.dense), 0, uint32(l.dense), uint32(l.v), g.wordOff, l.sparseBase,
			g.wLen, g.wTop, g.wCnt, uint32(0), k, g.colW, g.errs, uint32(0)); err != nil {
			return err
		}
		if err := g.launch("lda_check_rows", g.blocksFor(l.d), 0, uint32(0), uint32(l.d), g.docOff, uint32(0),
			g.dLen, g.dRow, g.dRow, g.docShift(), k, g.colD, g.errs, uint32(1)); err != nil {
			return err
		}
		return g.launch("lda_check_topics", 1, 0, g.t, g.colW, g.colD, k, uint32(l.n), g.errs)
	})
	if err != nil {
		return err
	}
	var e [3]uint32
	if err := download(g, e[:], g.errs); err != nil {
		return err
	}
	if e != [3]uint32{} {
		return fmt.Errorf("count invariants broken on the GPU: %d word rows, %d document rows, %d topic totals", e[0], e[1], e[2])
	}
	return nil
}

// philoxKAT runs Philox4x32-10 on the device for each (counter, key).
func (g *gpuEngine) philoxKAT(ctx context.Context, in [][6]uint32) ([][4]uint32, error) {
	flat := make([]uint32, 0, 6*len(in))
	for _, x := range in {
		flat = append(flat, x[:]...)
	}
	var inBuf, outBuf gpuBuffer
	defer func() {
		for _, b := range []gpuBuffer{inBuf, outBuf} {
			if b != nil {
				b.Free()
			}
		}
	}()
	if err := uploadNew(g, &inBuf, flat); err != nil {
		return nil, err
	}
	if err := g.alloc(&outBuf, 4*len(in), 4); err != nil {
		return nil, err
	}
	if _, err := g.timed(ctx, func() error {
		return g.launch("lda_philox_kat", g.blocksFor(len(in)), 0, inBuf, uint32(len(in)), outBuf)
	}); err != nil {
		return nil, err
	}
	out := make([]uint32, 4*len(in))
	if err := download(g, out, outBuf); err != nil {
		return nil, err
	}
	res := make([][4]uint32, len(in))
	for i := range res {
		copy(res[i][:], out[4*i:])
	}
	return res, nil
}

func (g *gpuEngine) close() error {
	err := g.freeBuffers()
	if g.dev != nil {
		err = errors.Join(err, g.dev.Close())
		g.dev = nil
	}
	return err
}

func (g *gpuEngine) freeBuffers() error {
	var errs []error
	for _, b := range []*gpuBuffer{
		&g.wordOff, &g.tokDoc, &g.tokIdx, &g.docOff, &g.docTok, &g.denseUnits, &g.mediumUnits, &g.sparseUnits,
		&g.smallDocs, &g.largeDocs, &g.smallWords, &g.largeWords,
		&g.z, &g.znew, &g.t, &g.wd, &g.wTop, &g.wCnt, &g.wLen, &g.dRow, &g.dLen,
		&g.denom, &g.consts, &g.zphi, &g.gpre, &g.zphiMax, &g.nscales,
		&g.ws32, &g.ws64, &g.phiD, &g.epreD, &g.phiS, &g.epreS,
		&g.counter, &g.nshort, &g.partial, &g.colW, &g.colD, &g.errs,
	} {
		if *b != nil {
			errs = append(errs, (*b).Free())
			*b = nil
		}
	}
	g.allocated = 0
	return errors.Join(errs...)
}

// openCUDADevice opens GPU gpu with lda.cu loaded.
func openCUDADevice(gpu int) (*kernels.ModuleDevice, error) {
	return kernels.OpenModuleDevice(gpu, "lda", gpuFunctions)
}
