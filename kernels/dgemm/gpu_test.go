package dgemm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/cublas"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/kernels/internal/gputest"
)

// These tests need a GPU; without one they skip, saying why.

func TestGPUFillMatchesUniform(t *testing.T) {
	gputest.NeedGPU(t)
	rng := gputest.FreshRNG(t)
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
	gputest.NeedGPU(t)
	rng := gputest.FreshRNG(t)
	drv, _ := cuda.Load()
	ctx, err := drv.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	mod, err := kernels.LoadModule(ctx, "dgemm")
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
	gputest.NeedGPU(t)
	lib, err := cublas.Open()
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	v, _ := lib.Version()
	t.Logf("cuBLAS %s from %s", cublas.VersionString(v), lib.Path())
	rng := gputest.FreshRNG(t)
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

func TestGPUDGEMMWorkload(t *testing.T) {
	gputest.NeedGPU(t)
	for _, impl := range []string{"builtin", "auto"} {
		res := gputest.RunWorkload(t, Workload{}, map[string]string{"n": "1001", "impl": impl, "beta": "0.5", "alpha": "-1.25"})
		for _, r := range res {
			t.Logf("dgemm impl=%s: %.3g FLOP/s over %v GEMMs, max rel err %.2g, metrics %v", impl, r.Metrics["flop_per_s"], r.Metrics["gemms"], r.Metrics["max_rel_err"], r.Metrics)
		}
	}
	v, _ := Workload{}.Decode(map[string]string{"device": "99"})
	if _, err := (Workload{}).Start(context.Background(), v); err == nil {
		t.Error("device=99 accepted")
	} else {
		t.Logf("device=99: %v", err)
	}
	v, _ = Workload{}.Decode(map[string]string{"n": "100000"})
	if _, err := (Workload{}).Start(context.Background(), v); err == nil {
		t.Error("n=100000 (240 GB) accepted")
	} else {
		t.Logf("n=100000: %v", err)
	}
}
