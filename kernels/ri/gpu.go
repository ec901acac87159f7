package ri

//go:generate ./internal/riemu/stamp.sh

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// gpuThreads is the block size of ri.cu's dense kernels (RI_THREADS) and
// of the warp and block term-vector kernels; gpuChunk the elements a dense
// block covers (RI_CHUNK). The module's own values are checked at load.
const (
	gpuThreads       = 256
	gpuChunk         = 2048
	gpuThreadKernelB = 128 // block size of ri_tv_thread
	defaultShared    = 48 << 10
)

// gpuFunctions are the kernels of ri.cu.
var gpuFunctions = []string{
	"ri_index_vectors", "ri_tv_block", "ri_tv_warp", "ri_tv_thread", "ri_combine_i32", "ri_combine_f32",
	"ri_retrain_window", "ri_retrain_hot", "ri_retrain_hot64",
	"ri_gather", "ri_normalise_i32", "ri_normalise_f32", "ri_row_sums",
}

// hotList and hotBatch are ri.cu's RI_HOT_LIST and RI_HOT_BATCH: a group's
// pair-list capacity and the rows its inner loop loads at once. The
// hot-row kernels need 2w <= hotList - hotBatch.
const (
	hotList  = 1024
	hotBatch = 8
)

// hotKernel describes a hot-row retraining kernel of ri.cu: threads per
// group (4 elements each) and the most groups a block may have (its named
// barriers, and 1024 threads).
type hotKernel struct{ group, maxGroups int }

var hotKernels = map[string]hotKernel{
	"ri_retrain_hot":   {128, 8},
	"ri_retrain_hot64": {64, 15},
}

// groups is the groups of a hot-row kernel's block.
func (k hotKernel) groups() int { return min(k.maxGroups, 1024/k.group) }

// slices is the number of slices of a hot-row kernel's vectors.
func (k hotKernel) slices(d int) int { return (d + 4*k.group - 1) / (4 * k.group) }

// gpuDevice is a GPU with ri.cu loaded: the CUDA driver
// (kernels.ModuleDevice), or in tests built with -tags riemu, ri.cu
// compiled for the CPU (internal/riemu), which runs this file's host code
// unchanged.
type gpuDevice = kernels.Device

// gpuBuffer is device memory.
type gpuBuffer = kernels.Buffer

// gpuEngine runs ri.cu on one GPU. Everything stays in device memory from
// stage to stage; results are copied back only when asked for.
type gpuEngine struct {
	sh     *shared
	kernel string
	dev    gpuDevice
	// retrainKernel is the window-context retraining kernel:
	// ri_retrain_window, a hot-row kernel (hotKernels) with hotStagger, or
	// "" for hotChoice's (the default where the hot-row kernels apply).
	// hotShared remembers the hot-row kernels allowed their shared memory.
	retrainKernel string
	hotStagger    int
	hotShared     map[string]int

	// The corpus and plans.
	tok, occPos, occDoc, termBytes, termOffsets gpuBuffer
	termUnits, termComb, docUnits, docComb      gpuBuffer
	// The computed tables and vectors (rows as in cpuEngine).
	idx, docIdx, ints, seeds, floats, docVecs, sums gpuBuffer
	// queue holds the hot-row kernels' unit counters, one per slice.
	queue gpuBuffer
}

func newGPUEngine(_ context.Context, sh *shared, dev Device) (*gpuEngine, error) {
	open := dev.open
	if open == nil {
		open = func(gpu int) (gpuDevice, error) { return openCUDADevice(gpu) }
	}
	d, err := open(dev.GPU)
	if err != nil {
		return nil, err
	}
	g, err := newGPUEngineOn(sh, d, dev.Kernel)
	if err != nil {
		return nil, errors.Join(err, d.Close())
	}
	return g, nil
}

// newGPUEngineOn prepares the computation on d, which it closes with the
// engine.
func newGPUEngineOn(sh *shared, d gpuDevice, kernel string) (_ *gpuEngine, err error) {
	if kernel == "" {
		kernel = KernelBlock
	}
	if kernel != KernelBlock && kernel != KernelWarp && kernel != KernelThread {
		return nil, fmt.Errorf("GPU kernel %q: want %s, %s or %s", kernel, KernelWarp, KernelBlock, KernelThread)
	}
	g := &gpuEngine{sh: sh, kernel: kernel, dev: d, retrainKernel: "ri_retrain_window", hotShared: map[string]int{}}
	if cfg := sh.cfg; cfg.Contexts == Window && !cfg.Permute && cfg.Dim%4 == 0 && 2*cfg.Window <= hotList-hotBatch &&
		int64(sh.c.Vocab())*int64(cfg.Dim) <= math.MaxInt32 {
		g.retrainKernel = ""
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.freeBuffers())
		}
	}()
	info := d.Info()
	dim := sh.cfg.Dim
	if kernel != KernelThread && dim*4 > info.SharedPerBlockBytes {
		return nil, fmt.Errorf("GPU %d (%s): the %s kernel keeps a term vector of dimension %d in %d bytes of shared memory, above the %d a block may have; use kernel=%s",
			info.Ordinal, info.Name, kernel, dim, dim*4, info.SharedPerBlockBytes, KernelThread)
	}
	free, err := d.MemFree()
	if err != nil {
		return nil, err
	}
	if need := g.bytesNeeded(); need > free {
		return nil, fmt.Errorf("random indexing of %d tokens at dimension %d needs %.2f GiB on GPU %d (%s), which has %.2f GiB free",
			sh.c.Tokens(), dim, float64(need)/(1<<30), info.Ordinal, info.Name, float64(free)/(1<<30))
	}
	for name, want := range map[string]int32{"ri_threads": gpuThreads, "ri_chunk": gpuChunk, "ri_hot_list": hotList, "ri_hot_batch": hotBatch} {
		got, err := d.GlobalInt32(name)
		if err != nil {
			return nil, err
		}
		if got != want {
			return nil, fmt.Errorf("module ri: %s is %d, the host expects %d: the kernels do not match this build", name, got, want)
		}
	}
	if dim*4 > defaultShared && kernel != KernelThread {
		if err := d.SetMaxShared("ri_tv_"+kernel, dim*4); err != nil {
			return nil, err
		}
	}
	return g, g.upload()
}

// bytesNeeded is the device memory the computation takes.
func (g *gpuEngine) bytesNeeded() int64 {
	sh := g.sh
	c, cfg := sh.c, sh.cfg
	d, k, v := int64(cfg.Dim), int64(cfg.Nonzeros), int64(c.Vocab())
	n := int64(len(c.Stream)) + int64(c.Tokens()) + int64(len(sh.termPlan.units)+len(sh.termPlan.combine))
	n += int64(termBytes(c)) / 4
	rows := int64(sh.termPlan.rows) * d // ints
	if cfg.Contexts == Document {
		n += int64(c.Tokens()) + int64(c.Docs())*k + int64(len(sh.docPlan.units)+len(sh.docPlan.combine))
	} else {
		n += v*k + v + 1
	}
	if cfg.Retrain > 0 || cfg.Normalise {
		rows += v * d
	}
	if cfg.Retrain > 0 {
		rows += int64(sh.termPlan.rows) * d
		if cfg.Contexts == Document {
			rows += int64(sh.docPlan.rows) * d
		}
	}
	return 4*(n+rows) + 8*v + 4*int64(cfg.Dim)
}

func termBytes(c *Corpus) int {
	n := 0
	for _, t := range c.Terms {
		n += len(t)
	}
	return n
}

// alloc allocates n elements of size bytes (at least one, so that an empty
// list still has an address).
func (g *gpuEngine) alloc(dst *gpuBuffer, n, size int) error {
	b, err := g.dev.Alloc(int64(max(n, 1)) * int64(size))
	if err != nil {
		return err
	}
	*dst = b
	return nil
}

// uploadNew allocates a buffer for data and copies it there.
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

// download copies the start of src into dst.
func download[T cuda.Element](g *gpuEngine, dst []T, src gpuBuffer) error {
	return g.dev.Download(kernels.Bytes(dst), src)
}

// upload copies the corpus and the plans to the GPU and allocates the
// tables and vectors.
func (g *gpuEngine) upload() error {
	sh := g.sh
	c, cfg := sh.c, sh.cfg
	d, k, v := cfg.Dim, cfg.Nonzeros, c.Vocab()
	if err := uploadNew(g, &g.tok, c.Stream); err != nil {
		return err
	}
	if err := uploadNew(g, &g.termUnits, sh.termPlan.units); err != nil {
		return err
	}
	if err := uploadNew(g, &g.termComb, sh.termPlan.combine); err != nil {
		return err
	}
	if cfg.Contexts == Document {
		if err := uploadNew(g, &g.occDoc, sh.occ.doc); err != nil {
			return err
		}
		if err := uploadNew(g, &g.docUnits, sh.docPlan.units); err != nil {
			return err
		}
		if err := uploadNew(g, &g.docComb, sh.docPlan.combine); err != nil {
			return err
		}
		if err := g.alloc(&g.docIdx, c.Docs()*k, 4); err != nil {
			return err
		}
	} else {
		if err := uploadNew(g, &g.occPos, sh.occ.pos); err != nil {
			return err
		}
		bytes := make([]byte, 0, termBytes(c))
		offsets := make([]int32, 0, v+1)
		for _, t := range c.Terms {
			offsets = append(offsets, int32(len(bytes)))
			bytes = append(bytes, t...)
		}
		offsets = append(offsets, int32(len(bytes)))
		if err := uploadNew(g, &g.termBytes, bytes); err != nil {
			return err
		}
		if err := uploadNew(g, &g.termOffsets, offsets); err != nil {
			return err
		}
		if err := g.alloc(&g.idx, v*k, 4); err != nil {
			return err
		}
	}
	if err := g.alloc(&g.ints, sh.termPlan.rows*d, 4); err != nil {
		return err
	}
	if err := g.alloc(&g.sums, v, 8); err != nil {
		return err
	}
	if cfg.Retrain > 0 || cfg.Normalise {
		if err := g.alloc(&g.seeds, v*d, 4); err != nil {
			return err
		}
	}
	if cfg.Retrain > 0 {
		if err := g.alloc(&g.floats, sh.termPlan.rows*d, 4); err != nil {
			return err
		}
		if err := g.alloc(&g.queue, d, 4); err != nil {
			return err
		}
		if cfg.Contexts == Document {
			if err := g.alloc(&g.docVecs, sh.docPlan.rows*d, 4); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *gpuEngine) name() string {
	info := g.dev.Info()
	return fmt.Sprintf("GPU %d (%s)", info.Ordinal, info.Name)
}

// timed runs f's launches as one stage and returns its device time, once
// the GPU has finished it.
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

func (g *gpuEngine) launch(name string, grid, block cuda.Dim3, shared int, args ...any) error {
	return g.dev.Launch(name, grid, block, shared, args...)
}

// grid1 is a one-dimensional grid of ceil(n/block) blocks.
func grid1(n, block int) cuda.Dim3 { return cuda.Dim1(max(1, (n+block-1)/block)) }

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

func (g *gpuEngine) indexVectors(ctx context.Context) (time.Duration, error) {
	sh := g.sh
	cfg := sh.cfg
	return g.timed(ctx, func() error {
		if cfg.Contexts == Document {
			n := sh.c.Docs()
			return g.launch("ri_index_vectors", grid1(n, gpuThreads), cuda.Dim1(gpuThreads), 0,
				g.tok, g.tok, int32(n), int32(1), cfg.Seed, int32(cfg.Nonzeros), int32(cfg.Dim), g.docIdx)
		}
		n := sh.c.Vocab()
		return g.launch("ri_index_vectors", grid1(n, gpuThreads), cuda.Dim1(gpuThreads), 0,
			g.termBytes, g.termOffsets, int32(n), int32(0), cfg.Seed, int32(cfg.Nonzeros), int32(cfg.Dim), g.idx)
	})
}

// combine launches the combine kernel of plan p's partial rows.
func (g *gpuEngine) combine(name string, comb gpuBuffer, p plan, rows gpuBuffer) error {
	if p.ncombine() == 0 {
		return nil
	}
	d := g.sh.cfg.Dim
	grid := cuda.Dim3{X: uint32(p.ncombine()), Y: uint32((d + gpuThreads - 1) / gpuThreads), Z: 1}
	return g.launch(name, grid, cuda.Dim1(gpuThreads), 0, comb, int32(d), rows)
}

func (g *gpuEngine) termVectors(ctx context.Context) (time.Duration, error) {
	sh := g.sh
	cfg := sh.cfg
	p := sh.termPlan
	list, idx, window := g.occPos, g.idx, int32(1)
	if cfg.Contexts == Document {
		list, idx, window = g.occDoc, g.docIdx, 0
	}
	args := []any{g.tok, idx, int32(cfg.Nonzeros), int32(cfg.Dim), int32(cfg.Window), b2i(cfg.Permute), window, g.ints}
	return g.timed(ctx, func() error {
		if g.kernel == KernelThread {
			if err := g.dev.Memset(g.ints, 0); err != nil {
				return err
			}
			a := append([]any{g.termUnits, int32(p.nunits()), list}, args...)
			if err := g.launch("ri_tv_thread", grid1(p.nunits(), gpuThreadKernelB), cuda.Dim1(gpuThreadKernelB), 0, a...); err != nil {
				return err
			}
		} else {
			a := append([]any{g.termUnits, list}, args...)
			if err := g.launch("ri_tv_"+g.kernel, cuda.Dim1(p.nunits()), cuda.Dim1(gpuThreads), 4*cfg.Dim, a...); err != nil {
				return err
			}
		}
		return g.combine("ri_combine_i32", g.termComb, p, g.ints)
	})
}

func (g *gpuEngine) normalise(ctx context.Context, fromInts bool) (time.Duration, error) {
	v, d := g.sh.c.Vocab(), int32(g.sh.cfg.Dim)
	return g.timed(ctx, func() error {
		if fromInts {
			return g.launch("ri_normalise_i32", cuda.Dim1(v), cuda.Dim1(gpuThreads), 0, g.ints, d, g.seeds)
		}
		return g.launch("ri_normalise_f32", cuda.Dim1(v), cuda.Dim1(gpuThreads), 0, g.floats, d, g.seeds)
	})
}

// denseGrid is the grid of a dense kernel over p's units.
func (g *gpuEngine) denseGrid(p plan) cuda.Dim3 {
	return cuda.Dim3{X: uint32(p.nunits()), Y: uint32((g.sh.cfg.Dim + gpuChunk - 1) / gpuChunk), Z: 1}
}

func (g *gpuEngine) retrain(ctx context.Context) (time.Duration, error) {
	sh := g.sh
	cfg := sh.cfg
	d := int32(cfg.Dim)
	p := sh.termPlan
	return g.timed(ctx, func() error {
		if cfg.Contexts == Window {
			if err := g.retrainWindow(); err != nil {
				return err
			}
			return g.combine("ri_combine_f32", g.termComb, p, g.floats)
		}
		dp := sh.docPlan
		if err := g.launch("ri_gather", g.denseGrid(dp), cuda.Dim1(gpuThreads), 0,
			g.docUnits, g.tok, g.seeds, d, g.docVecs); err != nil {
			return err
		}
		if err := g.combine("ri_combine_f32", g.docComb, dp, g.docVecs); err != nil {
			return err
		}
		if err := g.launch("ri_gather", g.denseGrid(p), cuda.Dim1(gpuThreads), 0,
			g.termUnits, g.occDoc, g.docVecs, d, g.floats); err != nil {
			return err
		}
		return g.combine("ri_combine_f32", g.termComb, p, g.floats)
	})
}

// retrainWindow launches g.retrainKernel over the term plan's units.
func (g *gpuEngine) retrainWindow() error {
	sh := g.sh
	cfg := sh.cfg
	d, w := int32(cfg.Dim), int32(cfg.Window)
	p := sh.termPlan
	if g.retrainKernel == "ri_retrain_window" {
		return g.launch("ri_retrain_window", g.denseGrid(p), cuda.Dim1(gpuThreads), 0,
			g.termUnits, g.occPos, g.tok, g.seeds, d, w, b2i(cfg.Permute), g.floats)
	}
	info := g.dev.Info()
	blocks := max(1, info.SMs)
	name, stagger := g.retrainKernel, g.hotStagger
	if name == "" {
		name, stagger = hotChoice(p, cfg, blocks, sh.pairs)
	}
	k, ok := hotKernels[name]
	if !ok {
		return fmt.Errorf("no retraining kernel %s", name)
	}
	groups := k.groups()
	perGroup := 4 * (hotList + k.group + 1)
	rowBytes := 4 * 4 * k.group
	// As many hot rows as shared memory holds, and a row of zeros.
	hot := max(0, min(sh.c.Vocab(), (info.SharedPerBlockBytes-groups*perGroup)/rowBytes-1))
	shared := (hot+1)*rowBytes + groups*perGroup
	if g.hotShared[name] < shared {
		if err := g.dev.SetMaxShared(name, shared); err != nil {
			return err
		}
		g.hotShared[name] = shared
	}
	if err := g.dev.Memset(g.queue, 0); err != nil {
		return err
	}
	// One block per SM (it takes most of the shared memory), taking units
	// from the queues until every slice is done.
	return g.launch(name, cuda.Dim1(blocks), cuda.Dim1(groups*k.group), shared,
		g.termUnits, int32(p.nunits()), g.occPos, g.tok, g.seeds, d, w, int32(hot), int32(stagger), g.queue, g.floats)
}

// hotChoice picks the hot-row kernel and its stagger for plan p on blocks
// blocks. Mostly the grid does one slice at a time with ri_retrain_hot64:
// its narrower slices hold twice the hot rows, and the cold rows' slices
// the grid reads at a time fit in L2 twice as well. But where a slice's
// largest unit is over a quarter of a group's share of the slice's pairs
// (a small corpus: its most frequent terms' slices of Config.Slice
// occurrences dominate), each slice would wait for its largest units at
// the end; then every slice runs side by side, with ri_retrain_hot (half
// the slices: each unit's neighbours are listed half as often). On the
// H100 (bench/ri-gpu.sh's corpora, TestGPURetrainKernelTimes) these were
// the faster pairings, by 3-4%, and staggering the 100M-token corpus cost
// 40%.
func hotChoice(p plan, cfg Config, blocks int, pairs int64) (string, int) {
	longest := 0
	for u := 0; u < p.nunits(); u++ {
		longest = max(longest, int(p.units[3*u+1]-p.units[3*u]))
	}
	groups := int64(blocks * hotKernels["ri_retrain_hot64"].groups())
	if int64(longest)*int64(2*cfg.Window)*4 <= pairs/groups {
		return "ri_retrain_hot64", 1
	}
	return "ri_retrain_hot", hotKernels["ri_retrain_hot"].slices(cfg.Dim)
}

func (g *gpuEngine) termVectorInts(ctx context.Context) ([]int32, error) {
	out := make([]int32, g.sh.c.Vocab()*g.sh.cfg.Dim)
	return out, download(g, out, g.ints)
}

func (g *gpuEngine) retrained(ctx context.Context) ([]float32, error) {
	out := make([]float32, g.sh.c.Vocab()*g.sh.cfg.Dim)
	return out, download(g, out, g.floats)
}

func (g *gpuEngine) unit(ctx context.Context) ([]float32, error) {
	out := make([]float32, g.sh.c.Vocab()*g.sh.cfg.Dim)
	return out, download(g, out, g.seeds)
}

func (g *gpuEngine) rowSums(ctx context.Context) ([]int64, error) {
	v := g.sh.c.Vocab()
	if _, err := g.timed(ctx, func() error {
		return g.launch("ri_row_sums", cuda.Dim1(v), cuda.Dim1(gpuThreads), 0, g.ints, int32(g.sh.cfg.Dim), g.sums)
	}); err != nil {
		return nil, err
	}
	out := make([]int64, v)
	return out, download(g, out, g.sums)
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
	for _, b := range []*gpuBuffer{&g.tok, &g.occPos, &g.occDoc, &g.termBytes, &g.termOffsets,
		&g.termUnits, &g.termComb, &g.docUnits, &g.docComb,
		&g.idx, &g.docIdx, &g.ints, &g.seeds, &g.floats, &g.docVecs, &g.sums, &g.queue} {
		if *b != nil {
			errs = append(errs, (*b).Free())
			*b = nil
		}
	}
	return errors.Join(errs...)
}

// openCUDADevice opens GPU gpu with ri.cu loaded.
func openCUDADevice(gpu int) (*kernels.ModuleDevice, error) {
	return kernels.OpenModuleDevice(gpu, "ri", gpuFunctions)
}
