package w2v

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// The CPU emulator of w2v.cu (internal/w2vemu, -tags w2vemu) records the
// source's hash, so that Go's build cache rebuilds it when w2v.cu changes.
//go:generate ./internal/w2vemu/stamp.sh

// gpuFunctions are the kernels of w2v.cu.
var gpuFunctions = []string{"w2v_sgns_warp1", "w2v_sgns_warp2", "w2v_sgns_warp4", "w2v_sgns_warp8", "w2v_sgns_block"}

// gpuWarps is the sentences (warps) per block of the warp kernels
// (W2V_WARPS, checked at load).
const gpuWarps = 4

// defaultShared is the dynamic shared memory a launch may use without
// asking for more.
const defaultShared = 48 << 10

// gpuDevice is what gpuEngine needs of a GPU with w2v.cu loaded: the CUDA
// driver (cudaDevice), or in tests built with -tags w2vemu, w2v.cu compiled
// for the CPU (internal/w2vemu), which runs this file's host code unchanged.
type gpuDevice interface {
	Info() cuda.DeviceInfo
	MemFree() (int64, error)
	Alloc(bytes int64) (gpuBuffer, error)
	Upload(dst gpuBuffer, src []byte) error
	Download(dst []byte, src gpuBuffer) error
	// GlobalInt32 reads a module constant; SetMaxShared allows a kernel
	// more dynamic shared memory than the default 48 KiB.
	GlobalInt32(name string) (int32, error)
	SetMaxShared(kernel string, bytes int) error
	// Launch queues a kernel; buffers are passed as gpuBuffer.
	Launch(kernel string, grid, block cuda.Dim3, shared int, args ...any) error
	// Start marks the start of timed work; Stop waits for the work since
	// and returns its device time.
	Start() error
	Stop() (time.Duration, error)
	Close() error
}

// gpuBuffer is device memory.
type gpuBuffer interface{ Free() error }

// gpuEngine trains on one GPU: the model stays in device memory; the host
// prepares batches (subsampling, negatives, learning rates) on its cores
// while the GPU trains the previous one.
type gpuEngine struct {
	t      *Trainer
	dev    gpuDevice
	kernel string
	shared int // dynamic shared memory per block
	block  int // threads per block
	// The model, the logistic table, and one batch.
	syn0, syn1, tab              gpuBuffer
	tok, neg, starts, alphas     gpuBuffer
	capTok, capSent, batchTokens int
}

func newGPUEngine(_ context.Context, t *Trainer) (*gpuEngine, error) {
	open := t.dev.open
	if open == nil {
		open = func(gpu int) (gpuDevice, error) { return openCUDADevice(gpu) }
	}
	d, err := open(t.dev.GPU)
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
	cfg := t.cfg
	g := &gpuEngine{t: t, dev: d, kernel: t.lay.kernelName(), batchTokens: t.dev.BatchTokens}
	if g.batchTokens <= 0 {
		g.batchTokens = DefaultBatchTokens
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.freeBuffers())
		}
	}()
	for name, want := range map[string]int32{"w2v_warps": gpuWarps, "w2v_group": outputGroup, "w2v_exp_table": expTableSize} {
		got, err := d.GlobalInt32(name)
		if err != nil {
			return nil, fmt.Errorf("%w (a w2v module older than this build? regenerate it with kernels/scripts/gen.sh)", err)
		}
		if got != want {
			return nil, fmt.Errorf("module w2v: %s is %d, the host expects %d: the kernels do not match this build", name, got, want)
		}
	}
	ring := 2 * (2*cfg.WindowFixed() + 1) * cfg.Dim * 4
	if t.lay.warps > 1 {
		g.shared, g.block = ring+2*outputGroup*32*4, 32*t.lay.warps
	} else {
		g.shared, g.block = gpuWarps*ring, 32*gpuWarps
	}
	info := d.Info()
	if g.shared > info.SharedPerBlockBytes {
		return nil, fmt.Errorf("GPU %d (%s): kernel %s keeps 2 x %d context vectors of dimension %d in %d bytes of shared memory per block, above the %d a block may have; use a smaller window",
			info.Ordinal, info.Name, g.kernel, 2*cfg.WindowFixed()+1, cfg.Dim, g.shared, info.SharedPerBlockBytes)
	}
	if g.shared > defaultShared {
		if err := d.SetMaxShared(g.kernel, g.shared); err != nil {
			return nil, err
		}
	}
	// A batch covers at most batchTokens corpus tokens, and at least one
	// sentence.
	c := t.c
	longest := 0
	for i := 0; i < c.Sentences(); i++ {
		longest = max(longest, len(c.Sentence(i)))
	}
	g.capTok = max(min(g.batchTokens, int(c.Tokens())), longest)
	g.capSent = min(c.Sentences(), g.capTok)
	v := c.Vocab.Size()
	need := int64(8*v*cfg.Dim) + 4*expTableSize + int64(4*g.capTok*(1+cfg.Negatives)) + int64(8*g.capSent+4)
	free, err := d.MemFree()
	if err != nil {
		return nil, err
	}
	if need > free {
		return nil, fmt.Errorf("training %d words of dimension %d needs %.2f GiB on GPU %d (%s), which has %.2f GiB free",
			v, cfg.Dim, float64(need)/(1<<30), info.Ordinal, info.Name, float64(free)/(1<<30))
	}
	for _, b := range []struct {
		dst  *gpuBuffer
		size int
	}{
		{&g.syn0, 4 * v * cfg.Dim}, {&g.syn1, 4 * v * cfg.Dim}, {&g.tab, 4 * expTableSize},
		{&g.tok, 4 * g.capTok}, {&g.neg, 4 * g.capTok * cfg.Negatives},
		{&g.starts, 4 * (g.capSent + 1)}, {&g.alphas, 4 * g.capSent},
	} {
		if *b.dst, err = d.Alloc(int64(b.size)); err != nil {
			return nil, err
		}
	}
	if err := d.Upload(g.tab, bytesOf(newExpTable())); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *gpuEngine) name() string {
	info := g.dev.Info()
	return fmt.Sprintf("GPU %d (%s), kernel %s", info.Ordinal, info.Name, g.kernel)
}

// bytesOf views a slice of plain numbers as its bytes.
func bytesOf[T cuda.Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

func (g *gpuEngine) reset(syn0, syn1 []float32) error {
	if err := g.dev.Upload(g.syn0, bytesOf(syn0)); err != nil {
		return err
	}
	return g.dev.Upload(g.syn1, bytesOf(syn1))
}

func (g *gpuEngine) vectors(context.Context) ([]float32, error) {
	out := make([]float32, g.t.c.Vocab.Size()*g.t.cfg.Dim)
	return out, g.dev.Download(bytesOf(out), g.syn0)
}

func (g *gpuEngine) weights() (syn0, syn1 []float32, err error) {
	n := g.t.c.Vocab.Size() * g.t.cfg.Dim
	syn0, syn1 = make([]float32, n), make([]float32, n)
	err = errors.Join(g.dev.Download(bytesOf(syn0), g.syn0), g.dev.Download(bytesOf(syn1), g.syn1))
	return syn0, syn1, err
}

// plan cuts an epoch into batches: consecutive sentences of at most
// capTok tokens and capSent sentences.
func (g *gpuEngine) plan() [][2]int {
	c := g.t.c
	var out [][2]int
	for lo := 0; lo < c.Sentences(); {
		hi := lo + 1
		for hi < c.Sentences() && hi-lo < g.capSent && int(c.starts[hi+1]-c.starts[lo]) <= g.capTok {
			hi++
		}
		out = append(out, [2]int{lo, hi})
		lo = hi
	}
	return out
}

// epoch streams the epoch's batches through the GPU: a goroutine prepares
// batch k+1 (on every core) while the GPU trains batch k.
func (g *gpuEngine) epoch(ctx context.Context, e int) (epochStats, error) {
	t := g.t
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	plan := g.plan()
	free := make(chan *batch, 2)
	ready := make(chan *batch)
	free <- &batch{}
	free <- &batch{}
	go func() {
		defer close(ready)
		for _, r := range plan {
			var b *batch
			select {
			case b = <-free:
			case <-ctx.Done():
				return
			}
			t.s.prepareBatch(t.c, e, r[0], r[1], t.dev.threads(), b)
			select {
			case ready <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	var st epochStats
	for {
		wait := time.Now()
		b, ok := <-ready
		if !ok {
			break
		}
		st.hostWait += time.Since(wait)
		if err := workloads.Checkpoint(ctx); err != nil {
			return epochStats{}, err
		}
		k, err := g.run(b)
		if err != nil {
			return epochStats{}, err
		}
		st.kernel += k
		st.kept += int64(len(b.tokens))
		free <- b
	}
	return st, ctx.Err()
}

// run uploads a batch, trains it and waits for the GPU.
func (g *gpuEngine) run(b *batch) (time.Duration, error) {
	cfg := g.t.cfg
	for _, up := range []struct {
		dst gpuBuffer
		src []byte
	}{{g.tok, bytesOf(b.tokens)}, {g.neg, bytesOf(b.negs)}, {g.starts, bytesOf(b.starts)}, {g.alphas, bytesOf(b.alphas)}} {
		if len(up.src) == 0 {
			continue
		}
		if err := g.dev.Upload(up.dst, up.src); err != nil {
			return 0, err
		}
	}
	if err := g.dev.Start(); err != nil {
		return 0, err
	}
	var lerr error
	n := b.sentences()
	step := n
	if g.t.dev.sequential {
		step = 1
	}
	for first := 0; first < n && lerr == nil; first += step {
		lerr = g.launch(b, first, min(first+step, n), cfg)
	}
	k, err := g.dev.Stop()
	if lerr != nil || err != nil {
		return 0, fmt.Errorf("%s: %w", g.name(), errors.Join(lerr, err))
	}
	return k, nil
}

// launch trains sentences [lo, hi) of the uploaded batch.
func (g *gpuEngine) launch(b *batch, lo, hi int, cfg Config) error {
	nsent := hi - lo
	grid, per := nsent, 1
	if g.t.lay.warps == 1 {
		per = gpuWarps
		grid = (nsent + per - 1) / per
	}
	if c := g.t.dev.Concurrency; c > 0 {
		// Fewer blocks, each looping over sentences: at most c at once.
		grid = min(grid, max(1, c/per))
	}
	starts, alphas := g.starts, g.alphas
	if lo > 0 {
		// One sentence at a time (sequential): its own starts and rate.
		if err := g.dev.Upload(g.starts, bytesOf(b.starts[lo:hi+1])); err != nil {
			return err
		}
		if err := g.dev.Upload(g.alphas, bytesOf(b.alphas[lo:hi])); err != nil {
			return err
		}
	}
	return g.dev.Launch(g.kernel, cuda.Dim1(grid), cuda.Dim1(g.block), g.shared,
		g.syn0, g.syn1, g.tok, g.neg, starts, alphas, g.tab,
		int32(nsent), int32(cfg.Dim), int32(cfg.WindowFixed()), int32(cfg.Negatives))
}

func (g *gpuEngine) freeBuffers() error {
	var errs []error
	for _, b := range []*gpuBuffer{&g.syn0, &g.syn1, &g.tab, &g.tok, &g.neg, &g.starts, &g.alphas} {
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

// cudaDevice is a GPU through the CUDA driver, with w2v.cu loaded.
type cudaDevice struct {
	ctx         *cuda.Context
	mod         *cuda.Module
	fn          map[string]*cuda.Function
	start, stop *cuda.Event
}

func openCUDADevice(gpu int) (_ *cudaDevice, err error) {
	drv, err := cuda.Load()
	if err != nil {
		return nil, err
	}
	ctx, err := drv.Open(gpu)
	if err != nil {
		return nil, err
	}
	d := &cudaDevice{ctx: ctx, fn: map[string]*cuda.Function{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, d.Close())
		}
	}()
	if d.mod, err = kernels.LoadModule(ctx, "w2v"); err != nil {
		return nil, err
	}
	for _, name := range gpuFunctions {
		if d.fn[name], err = d.mod.Function(name); err != nil {
			return nil, err
		}
	}
	if d.start, err = ctx.NewEvent(); err != nil {
		return nil, err
	}
	if d.stop, err = ctx.NewEvent(); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *cudaDevice) Info() cuda.DeviceInfo { return d.ctx.Device() }

func (d *cudaDevice) MemFree() (int64, error) {
	free, _, err := d.ctx.MemInfo()
	return free, err
}

func (d *cudaDevice) Alloc(bytes int64) (gpuBuffer, error) { return d.ctx.Alloc(bytes) }

func (d *cudaDevice) Upload(dst gpuBuffer, src []byte) error {
	return cuda.Upload(dst.(*cuda.Buffer), src)
}

func (d *cudaDevice) Download(dst []byte, src gpuBuffer) error {
	return cuda.Download(dst, src.(*cuda.Buffer))
}

func (d *cudaDevice) GlobalInt32(name string) (int32, error) { return d.mod.GlobalInt32(name) }

func (d *cudaDevice) SetMaxShared(kernel string, bytes int) error {
	return d.fn[kernel].SetMaxDynamicShared(bytes)
}

func (d *cudaDevice) Launch(kernel string, grid, block cuda.Dim3, shared int, args ...any) error {
	return d.fn[kernel].Launch(grid, block, shared, args...)
}

func (d *cudaDevice) Start() error { return d.start.Record() }

func (d *cudaDevice) Stop() (time.Duration, error) {
	if err := d.stop.Record(); err != nil {
		return 0, err
	}
	if err := d.stop.Synchronize(); err != nil {
		return 0, err
	}
	return d.stop.Since(d.start)
}

func (d *cudaDevice) Close() error {
	err := errors.Join(d.start.Destroy(), d.stop.Destroy(), d.mod.Unload())
	d.start, d.stop, d.mod = nil, nil, nil
	if d.ctx != nil {
		err = errors.Join(err, d.ctx.Close())
		d.ctx = nil
	}
	return err
}
