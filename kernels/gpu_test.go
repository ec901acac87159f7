package kernels

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cublas"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// These tests need a GPU; without one they skip, saying why.

// freshRNG returns a generator with a new seed each run (or
// HEATSINK_TEST_SEED), logged so a failure can be replayed.
func freshRNG(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("HEATSINK_TEST_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set HEATSINK_TEST_SEED to replay)", seed)
	return rand.New(rand.NewPCG(seed, 0x6b65726e))
}

func needGPU(t testing.TB) {
	t.Helper()
	if _, err := cuda.Load(); err != nil {
		t.Skipf("skipping GPU test: %v", err)
	}
}

// gpuSizes are array lengths around the block size (256 threads of two
// elements) and odd lengths that leave a tail element.
func gpuSizes(t *testing.T) []int64 {
	s := []int64{1, 2, 3, 255, 256, 257, 511, 512, 513, 1000003}
	if !testing.Short() {
		s = append(s, 1<<22+1)
	}
	return s
}

func TestGPUStreamKernelsMatchTheCPU(t *testing.T) {
	needGPU(t)
	rng := freshRNG(t)
	for _, n := range gpuSizes(t) {
		for _, perSM := range []int{0, 3} {
			g, err := newGPUStream(0, n)
			if err != nil {
				t.Fatal(err)
			}
			g.setGrid(perSM)
			c := randomStream(n, 4, rng)
			if err := errors.Join(cuda.Upload(g.a, c.a), cuda.Upload(g.b, c.b), cuda.Upload(g.c, c.c)); err != nil {
				t.Fatal(err)
			}
			for k, name := range StreamKernels {
				if err := g.kernel(k); err != nil {
					t.Fatal(err)
				}
				var want float64
				switch name {
				case "copy":
					c.copy()
				case "mul":
					c.mul()
				case "add":
					c.add()
				case "triad":
					c.triad()
				case "dot":
					want = c.dot()
					got, err := g.dotResult()
					if err != nil {
						t.Fatal(err)
					}
					if math.Abs(got-want) > 1e-13*float64(n)*math.Max(1, math.Abs(want)) {
						t.Errorf("n=%d grid=%d: dot = %v, CPU %v", n, perSM, got, want)
					}
					continue
				}
				a, b, cc := make([]float64, n), make([]float64, n), make([]float64, n)
				if err := errors.Join(cuda.Download(a, g.a), cuda.Download(b, g.b), cuda.Download(cc, g.c)); err != nil {
					t.Fatal(err)
				}
				for i := range a {
					if a[i] != c.a[i] || b[i] != c.b[i] || cc[i] != c.c[i] {
						t.Fatalf("n=%d grid=%d: after %s, element %d = (%v %v %v), CPU (%v %v %v)", n, perSM, name, i,
							a[i], b[i], cc[i], c.a[i], c.b[i], c.c[i])
					}
				}
			}
			if err := g.close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestGPUStreamCheckCatchesOneBadElement(t *testing.T) {
	needGPU(t)
	const n, passes = 100003, 4
	g, err := newGPUStream(0, n)
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	run := func(corrupt int) error {
		if err := g.init(streamStartA, streamStartB, streamStartC); err != nil {
			return err
		}
		var dot float64
		for p := 0; p < passes; p++ {
			_, d, err := g.pass()
			if err != nil {
				return err
			}
			dot = d
		}
		if corrupt >= 0 {
			c := make([]float64, n)
			if err := cuda.Download(c, g.c); err != nil {
				return err
			}
			c[corrupt] = math.NaN()
			if err := cuda.Upload(g.c, c); err != nil {
				return err
			}
		}
		e, err := g.check(streamGold(passes))
		if err != nil {
			return err
		}
		e.dot = dot
		_, _, err = verifyStream(n, passes, e)
		return err
	}
	if err := run(-1); err != nil {
		t.Fatalf("correct run rejected: %v", err)
	}
	if err := run(n - 1); err == nil {
		t.Fatal("a NaN in the last element passed verification")
	}
}

func TestGPUFillMatchesUniform(t *testing.T) {
	needGPU(t)
	rng := freshRNG(t)
	for _, n := range []int{1, 7, 129} {
		seeds := [3]uint64{rng.Uint64(), rng.Uint64(), rng.Uint64()}
		g, err := newGPUDGEMM(0, n, seeds, "builtin")
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, g.ld*n)
		if err := cuda.Download(got, g.b); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < n; j++ {
			for i := 0; i < g.ld; i++ {
				want := 0.0
				if i < n {
					want = Uniform(seeds[1], uint64(i+j*n))
				}
				if got[i+j*g.ld] != want {
					t.Fatalf("n=%d: B[%d,%d] = %v, want %v", n, i, j, got[i+j*g.ld], want)
				}
			}
		}
		if err := g.close(); err != nil {
			t.Fatal(err)
		}
	}
}

// gemmOnGPU runs one product of random matrices with do and compares every
// entry of C with gonum's within the classical error bound.
func gemmOnGPU(t *testing.T, ctx *cuda.Context, rng *rand.Rand, m, n, k int, alpha, beta float64,
	do func(a, b, c cuda.DevicePtr, lda, ldb, ldc int) error) {
	t.Helper()
	lda, ldb, ldc := dgemmStride(m), dgemmStride(k), dgemmStride(m)+2
	a, b, c := randomMatrix(m, k, lda, rng), randomMatrix(k, n, ldb, rng), randomMatrix(m, n, ldc, rng)
	if beta == 0 {
		for i := range c {
			c[i] = math.NaN() // BLAS: C is not read when beta is 0
		}
	}
	bufs := make([]*cuda.Buffer, 3)
	for i, h := range [][]float64{a, b, c} {
		var err error
		if bufs[i], err = ctx.Alloc(int64(8 * max(len(h), 1))); err != nil {
			t.Fatal(err)
		}
		defer bufs[i].Free()
		if err := cuda.Upload(bufs[i], h); err != nil {
			t.Fatal(err)
		}
	}
	if err := do(bufs[0].Ptr(), bufs[1].Ptr(), bufs[2].Ptr(), lda, ldb, ldc); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, len(c))
	if err := cuda.Download(got, bufs[2]); err != nil {
		t.Fatal(err)
	}
	// Reference and bound: |A||B| gives each entry's sum of magnitudes.
	want := append([]float64(nil), c...)
	if beta == 0 {
		for i := range want {
			want[i] = 0
		}
	}
	gemmColMajor(m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
	absA, absB := make([]float64, len(a)), make([]float64, len(b))
	for i := range a {
		absA[i] = math.Abs(a[i])
	}
	for i := range b {
		absB[i] = math.Abs(b[i])
	}
	mag := make([]float64, len(c))
	gemmColMajor(m, n, k, math.Abs(alpha), absA, lda, absB, ldb, 0, mag, ldc)
	gamma := float64(k+2) * unitRoundoff / (1 - float64(k+2)*unitRoundoff)
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			x := i + j*ldc
			cmag := 0.0
			if beta != 0 {
				cmag = math.Abs(beta * c[x])
			}
			tol := 2*gamma*(1+gamma)*(mag[x]+cmag) + math.SmallestNonzeroFloat64
			if d := math.Abs(got[x] - want[x]); !(d <= tol) {
				t.Fatalf("%dx%dx%d alpha=%v beta=%v: C[%d,%d] = %v, want %v within %v", m, n, k, alpha, beta, i, j, got[x], want[x], tol)
			}
		}
		for i := m; i < ldc; i++ { // padding untouched
			if x := i + j*ldc; !(got[x] == c[x] || (math.IsNaN(got[x]) && math.IsNaN(c[x]))) {
				t.Fatalf("%dx%dx%d: padding C[%d,%d] written", m, n, k, i, j)
			}
		}
	}
}

// gemmShapes straddle the 128x128x16 tiles: single elements, partial tiles
// in every dimension, exact tiles, and K not a multiple of 16.
var gemmShapes = [][3]int{{1, 1, 1}, {7, 5, 3}, {128, 128, 16}, {129, 127, 33}, {300, 200, 100}, {513, 257, 1000}, {64, 1, 300}}

func TestGPUBuiltinDGEMMMatchesTheCPU(t *testing.T) {
	needGPU(t)
	rng := freshRNG(t)
	drv, _ := cuda.Load()
	ctx, err := drv.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	mod, err := LoadModule(ctx, "dgemm")
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Unload()
	k, err := loadBuiltinDGEMM(mod)
	if err != nil {
		t.Fatal(err)
	}
	regs, _ := k.fn.Attribute(cuda.FuncNumRegs)
	local, _ := k.fn.Attribute(cuda.FuncLocalSizeBytes)
	t.Logf("dgemm_nn: %d registers, %d bytes local memory, %d bytes shared, %d threads", regs, local, k.smem, k.threads)
	for _, sh := range gemmShapes {
		for _, ab := range [][2]float64{{1, 0}, {1.5, -0.75}, {-2, 1}} {
			gemmOnGPU(t, ctx, rng, sh[0], sh[1], sh[2], ab[0], ab[1], func(a, b, c cuda.DevicePtr, lda, ldb, ldc int) error {
				if err := k.gemm(sh[0], sh[1], sh[2], ab[0], a, lda, b, ldb, ab[1], c, ldc); err != nil {
					return err
				}
				return ctx.Synchronize()
			})
		}
	}
	if err := k.gemm(4, 4, 4, 1, 0, 5, 0, 4, 0, 0, 4); err == nil {
		t.Error("odd leading dimension accepted")
	}
}

func TestGPUCublasDGEMMMatchesTheCPU(t *testing.T) {
	needGPU(t)
	lib, err := cublas.Open()
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	v, _ := lib.Version()
	t.Logf("cuBLAS %s from %s", cublas.VersionString(v), lib.Path())
	rng := freshRNG(t)
	drv, _ := cuda.Load()
	ctx, err := drv.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	h, err := lib.NewHandle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Destroy()
	for _, sh := range gemmShapes {
		gemmOnGPU(t, ctx, rng, sh[0], sh[1], sh[2], 1.5, -0.75, func(a, b, c cuda.DevicePtr, lda, ldb, ldc int) error {
			if err := h.Dgemm(sh[0], sh[1], sh[2], 1.5, a, lda, b, ldb, -0.75, c, ldc); err != nil {
				return err
			}
			return ctx.Synchronize()
		})
	}
	var ce *cublas.Error
	if err := h.Dgemm(-1, 4, 4, 1, 0, 4, 0, 4, 0, 0, 4); !errors.As(err, &ce) {
		t.Errorf("m=-1: err = %v, want a cuBLAS error", err)
	} else {
		t.Logf("m=-1 rejected: %v", err)
	}
}

// runWorkload starts w with set, runs two iterations and closes it, and
// checks that the GPU's free memory returns to where it was.
func runWorkload(t *testing.T, w workloads.Workload, set map[string]string) []workloads.Result {
	t.Helper()
	v, err := workloads.ParseValues(w.Params(), set)
	if err != nil {
		t.Fatal(err)
	}
	drv, _ := cuda.Load()
	watch, err := drv.Open(0) // holds the primary context across the job's
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	before, _, err := watch.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	job, err := w.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	var out []workloads.Result
	for i := 0; i < 2; i++ {
		res, err := job.Iterate(context.Background())
		if err != nil {
			job.Close()
			t.Fatal(err)
		}
		out = append(out, res)
	}
	if err := job.Close(); err != nil {
		t.Fatal(err)
	}
	after, _, err := watch.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	if leak := before - after; leak > 64<<20 {
		t.Errorf("%s %v: %d MiB of GPU memory not returned after Close", w.Name(), set, leak>>20)
	}
	return out
}

func TestGPUStreamWorkload(t *testing.T) {
	needGPU(t)
	res := runWorkload(t, Stream{}, map[string]string{"array_size": "10000001", "passes": "20"})
	for _, r := range res {
		t.Logf("stream: triad %.3g B/s, copy %.3g B/s", r.Metrics["triad_bytes_per_s"], r.Metrics["copy_bytes_per_s"])
		if r.Metrics["max_rel_err"] != 0 || !(r.Metrics["triad_bytes_per_s"] > 0) {
			t.Errorf("metrics = %v", r.Metrics)
		}
	}
}

func TestGPUDGEMMWorkload(t *testing.T) {
	needGPU(t)
	for _, impl := range []string{"builtin", "auto"} {
		res := runWorkload(t, DGEMM{}, map[string]string{"n": "1001", "impl": impl, "beta": "0.5", "alpha": "-1.25"})
		for _, r := range res {
			t.Logf("dgemm impl=%s: %.3g FLOP/s over %v GEMMs, max rel err %.2g, metrics %v", impl, r.Metrics["flop_per_s"], r.Metrics["gemms"], r.Metrics["max_rel_err"], r.Metrics)
		}
	}
	v, _ := workloads.ParseValues(DGEMM{}.Params(), map[string]string{"device": "99"})
	if _, err := (DGEMM{}).Start(context.Background(), v); err == nil {
		t.Error("device=99 accepted")
	} else {
		t.Logf("device=99: %v", err)
	}
	v, _ = workloads.ParseValues(DGEMM{}.Params(), map[string]string{"n": "100000"})
	if _, err := (DGEMM{}).Start(context.Background(), v); err == nil {
		t.Error("n=100000 (240 GB) accepted")
	} else {
		t.Logf("n=100000: %v", err)
	}
}
