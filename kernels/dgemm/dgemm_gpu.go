package dgemm

import (
	"context"
	"errors"
	"fmt"
	"github.com/heatsink-hpc/heatsink/kernels"
	"log/slog"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cublas"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// gpuDGEMM multiplies on one GPU with cuBLAS or the built-in kernel of
// dgemm.cu; either way the matrices are filled and sampled by dgemm.cu's
// helpers.
type gpuDGEMM struct {
	ctx   *cuda.Context
	mod   *cuda.Module
	n, ld int
	seeds [3]uint64

	fill, gatherFn *cuda.Function
	builtinGEMM    *builtinDGEMM
	blas           *cublas.Handle
	blasVersion    int
	blasPath       string

	a, b, c, idx, out *cuda.Buffer
	slots             [gemmSlots]gemmSlot
}

// gemmSlots is how many GEMMs run may have queued at once: enough to keep
// the GPU busy while the host waits, few enough that a pause by the runner's
// guard takes effect within a GEMM or two. Under a hold's duty cycle
// (workloads.Paced) run keeps one: the GPU runs on whatever is queued when
// the gate shuts, which at a 0.1 s period was most of the off time.
const gemmSlots = 3

// pacedRows is the height of the row blocks a paced run splits each GEMM
// into: 1024 rows of an order-8192 product take about 2.5 ms on an H100.
// An H100's die follows its power within some 20 ms (the hold of
// 2026-11-28 sawed 8 °C peak to peak at a 50 ms duty-cycle period with
// whole 20 ms GEMMs), so the duty cycle needs kernels well under that to
// hold a temperature rather than saw about it. The blocks do the same
// work; each entry's rounding may differ from the whole product's, which
// the sampled check allows.
const pacedRows = 1024

// gemmSlot times one queued GEMM.
type gemmSlot struct {
	start, stop *cuda.Event
	queued      bool
}

// builtinDGEMM is dgemm.cu's dgemm_nn with its launch shape, read from the
// module's globals.
type builtinDGEMM struct {
	fn                          *cuda.Function
	threads, smem, tileM, tileN int
}

func loadBuiltinDGEMM(mod *cuda.Module) (*builtinDGEMM, error) {
	fn, err := mod.Function("dgemm_nn")
	if err != nil {
		return nil, err
	}
	k := &builtinDGEMM{fn: fn}
	for _, g := range []struct {
		name string
		dst  *int
	}{{"dgemm_threads", &k.threads}, {"dgemm_smem_bytes", &k.smem}, {"dgemm_tile_m", &k.tileM}, {"dgemm_tile_n", &k.tileN}} {
		v, err := mod.GlobalInt32(g.name)
		if err != nil {
			return nil, err
		}
		*g.dst = int(v)
	}
	if err := fn.SetMaxDynamicShared(k.smem); err != nil {
		return nil, err
	}
	return k, nil
}

// gemm queues C = alpha*A*B + beta*C for column-major M x K A, K x N B and
// M x N C with even leading dimensions.
func (k *builtinDGEMM) gemm(m, n, kk int, alpha float64, a cuda.DevicePtr, lda int, b cuda.DevicePtr, ldb int, beta float64, c cuda.DevicePtr, ldc int) error {
	if lda%2 != 0 || ldb%2 != 0 {
		return fmt.Errorf("built-in dgemm: leading dimensions %d and %d must be even", lda, ldb)
	}
	if m == 0 || n == 0 {
		return nil
	}
	blocks := ((m + k.tileM - 1) / k.tileM) * ((n + k.tileN - 1) / k.tileN)
	return k.fn.Launch(cuda.Dim1(blocks), cuda.Dim1(k.threads), k.smem,
		int32(m), int32(n), int32(kk), alpha, a, int64(lda), b, int64(ldb), beta, c, int64(ldc))
}

// newGPUDGEMM opens GPU gpu, picks the implementation (impl auto, cublas or
// builtin), allocates and fills A, B and C; on failure it releases whatever
// it took.
func newGPUDGEMM(gpu, n int, seeds [3]uint64, impl string) (_ *gpuDGEMM, err error) {
	ctx, err := kernels.OpenGPU(gpu)
	if err != nil {
		return nil, err
	}
	g := &gpuDGEMM{ctx: ctx, n: n, ld: dgemmStride(n), seeds: seeds}
	defer func() {
		if err != nil {
			err = joinClose(err, g.close())
		}
	}()
	matrix := int64(8 * g.ld * n)
	free, _, err := ctx.MemInfo()
	if err != nil {
		return nil, err
	}
	if 3*matrix > free {
		return nil, fmt.Errorf("dgemm n=%d needs %.2f GiB on GPU %d (%s), which has %.2f GiB free",
			n, float64(3*matrix)/(1<<30), gpu, ctx.Device().Name, float64(free)/(1<<30))
	}
	if g.mod, err = kernels.LoadModule(ctx, "dgemm"); err != nil {
		return nil, err
	}
	if g.fill, err = g.mod.Function("dgemm_fill"); err != nil {
		return nil, err
	}
	if g.gatherFn, err = g.mod.Function("dgemm_gather"); err != nil {
		return nil, err
	}
	if impl != "builtin" {
		lib, lerr := cublas.Open()
		if lerr == nil {
			g.blas, lerr = lib.NewHandle(ctx)
		}
		if lerr == nil {
			g.blasPath = lib.Path()
			g.blasVersion, lerr = g.blas.Version()
		}
		switch {
		case lerr != nil && impl == "cublas":
			return nil, fmt.Errorf("impl=cublas: %w", lerr)
		case lerr != nil:
			slog.Info("dgemm: cuBLAS unavailable, using the built-in kernel", "reason", lerr)
			if err := g.blas.Destroy(); err != nil {
				return nil, err
			}
			g.blas = nil
		}
	}
	if g.blas == nil {
		if g.builtinGEMM, err = loadBuiltinDGEMM(g.mod); err != nil {
			return nil, err
		}
	}
	for _, p := range []**cuda.Buffer{&g.a, &g.b, &g.c} {
		if *p, err = ctx.Alloc(matrix); err != nil {
			return nil, err
		}
	}
	for i := range g.slots {
		if g.slots[i].start, err = ctx.NewEvent(); err != nil {
			return nil, err
		}
		if g.slots[i].stop, err = ctx.NewEvent(); err != nil {
			return nil, err
		}
	}
	if err = g.fillMatrix(g.a, seeds[0]); err != nil {
		return nil, err
	}
	if err = g.fillMatrix(g.b, seeds[1]); err != nil {
		return nil, err
	}
	return g, g.resetC()
}

func (g *gpuDGEMM) fillMatrix(m *cuda.Buffer, seed uint64) error {
	blocks := g.ctx.Device().SMs * 8
	return g.fill.Launch(cuda.Dim1(blocks), cuda.Dim1(256), 0, m, int32(g.n), int32(g.n), int64(g.ld), seed)
}

func (g *gpuDGEMM) resetC() error { return g.fillMatrix(g.c, g.seeds[2]) }

// gemm queues one product with whichever implementation the job uses.
func (g *gpuDGEMM) gemm(alpha, beta float64) error {
	if g.blas != nil {
		return g.blas.Dgemm(g.n, g.n, g.n, alpha, g.a.Ptr(), g.ld, g.b.Ptr(), g.ld, beta, g.c.Ptr(), g.ld)
	}
	return g.builtinGEMM.gemm(g.n, g.n, g.n, alpha, g.a.Ptr(), g.ld, g.b.Ptr(), g.ld, beta, g.c.Ptr(), g.ld)
}

// gemmRows queues rows i0..i0+m of the product: C's rows from A's rows
// times B (column-major, so a row block starts i0 elements in).
func (g *gpuDGEMM) gemmRows(i0, m int, alpha, beta float64) error {
	off := cuda.DevicePtr(8 * i0)
	if g.blas != nil {
		return g.blas.Dgemm(m, g.n, g.n, alpha, g.a.Ptr()+off, g.ld, g.b.Ptr(), g.ld, beta, g.c.Ptr()+off, g.ld)
	}
	return g.builtinGEMM.gemm(m, g.n, g.n, alpha, g.a.Ptr()+off, g.ld, g.b.Ptr(), g.ld, beta, g.c.Ptr()+off, g.ld)
}

// runPaced performs one GEMM as row blocks of pacedRows, each after the
// runner's checkpoint and finished before the next, so the duty cycle's
// gate acts within a block; it returns the GPU's time for them.
func (g *gpuDGEMM) runPaced(ctx context.Context, alpha, beta float64) (time.Duration, error) {
	var total time.Duration
	s := &g.slots[0]
	for i0 := 0; i0 < g.n; i0 += pacedRows {
		if err := workloads.Checkpoint(ctx); err != nil {
			return 0, err
		}
		if err := s.start.Record(); err != nil {
			return 0, err
		}
		if err := g.gemmRows(i0, min(pacedRows, g.n-i0), alpha, beta); err != nil {
			return 0, err
		}
		if err := s.stop.Record(); err != nil {
			return 0, err
		}
		if err := s.stop.Synchronize(); err != nil {
			return 0, fmt.Errorf("dgemm: %w", err)
		}
		t, err := s.stop.Since(s.start)
		if err != nil {
			return 0, err
		}
		total += t
	}
	return total, nil
}

// run performs reps GEMMs, at most gemmSlots queued (one while paced),
// calling the runner's checkpoint before each; the time is the GPU's own
// time for the GEMMs, so a pause between them is not counted.
func (g *gpuDGEMM) run(ctx context.Context, reps int, alpha, beta float64) (time.Duration, error) {
	var total time.Duration
	wait := func(s *gemmSlot) error {
		if !s.queued {
			return nil
		}
		s.queued = false
		if err := s.stop.Synchronize(); err != nil {
			return fmt.Errorf("dgemm: %w", err)
		}
		t, err := s.stop.Since(s.start)
		total += t
		return err
	}
	drain := func() error {
		var errs []error
		for i := range g.slots {
			errs = append(errs, wait(&g.slots[i]))
		}
		return errors.Join(errs...)
	}
	for r := 0; r < reps; r++ {
		s := &g.slots[r%gemmSlots]
		if err := wait(s); err != nil {
			return 0, errors.Join(err, drain())
		}
		if workloads.Paced(ctx) && g.n > pacedRows {
			// Nothing queued when the gate may shut (the duty cycle
			// times the job's run from where it parks), and the GEMM
			// in blocks short against the die's lag.
			if err := drain(); err != nil {
				return 0, err
			}
			t, err := g.runPaced(ctx, alpha, beta)
			if err != nil {
				return 0, err
			}
			total += t
			continue
		}
		if workloads.Paced(ctx) {
			if err := drain(); err != nil {
				return 0, err
			}
		}
		if err := workloads.Checkpoint(ctx); err != nil {
			return 0, errors.Join(err, drain())
		}
		if err := s.start.Record(); err != nil {
			return 0, errors.Join(err, drain())
		}
		if err := g.gemm(alpha, beta); err != nil {
			return 0, errors.Join(err, drain())
		}
		if err := s.stop.Record(); err != nil {
			return 0, errors.Join(err, drain())
		}
		s.queued = true
	}
	// Drain in queue order so the total is complete.
	for i := 0; i < gemmSlots; i++ {
		if err := wait(&g.slots[(reps+i)%gemmSlots]); err != nil {
			return 0, errors.Join(err, drain())
		}
	}
	return total, nil
}

func (g *gpuDGEMM) timeOne(ctx context.Context) (time.Duration, error) {
	if _, err := g.run(ctx, 1, 1, 0); err != nil {
		return 0, err
	}
	return g.run(ctx, 1, 1, 0)
}

func (g *gpuDGEMM) gather(samples []dgemmSample) ([]float64, error) {
	if err := g.idx.Free(); err != nil {
		return nil, err
	}
	if err := g.out.Free(); err != nil {
		return nil, err
	}
	idx := make([]int32, 0, 2*len(samples))
	for _, s := range samples {
		idx = append(idx, int32(s.row), int32(s.col))
	}
	var err error
	if g.idx, err = g.ctx.Alloc(int64(4 * len(idx))); err != nil {
		return nil, err
	}
	if g.out, err = g.ctx.Alloc(int64(8 * len(samples))); err != nil {
		return nil, err
	}
	if err := cuda.Upload(g.idx, idx); err != nil {
		return nil, err
	}
	if err := g.gatherFn.Launch(cuda.Dim1((len(samples)+255)/256), cuda.Dim1(256), 0,
		g.c, int64(g.ld), g.idx, int32(len(samples)), g.out); err != nil {
		return nil, err
	}
	out := make([]float64, len(samples))
	if err := cuda.Download(out, g.out); err != nil {
		return nil, fmt.Errorf("dgemm gather: %w", err)
	}
	return out, nil
}

func (g *gpuDGEMM) describe() (string, map[string]float64) {
	if g.blas != nil {
		return fmt.Sprintf("cuBLAS %s (%s)", cublas.VersionString(g.blasVersion), g.blasPath),
			map[string]float64{"cublas_version": float64(g.blasVersion)}
	}
	return "built-in FP64 tensor-core kernel", nil
}

// close frees everything, on every path.
func (g *gpuDGEMM) close() error {
	errs := []error{g.blas.Destroy()}
	for _, s := range g.slots {
		errs = append(errs, s.start.Destroy(), s.stop.Destroy())
	}
	for _, b := range []*cuda.Buffer{g.a, g.b, g.c, g.idx, g.out} {
		errs = append(errs, b.Free())
	}
	errs = append(errs, g.mod.Unload(), g.ctx.Close())
	return errors.Join(errs...)
}
