package dgemm

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/workloads"
)

func TestUniformIsSplitMix64(t *testing.T) {
	// SplitMix64 seeded with 0 first returns 0xe220a8397b1dcdaf (Vigna's
	// reference); Uniform(0, 0) is that output scaled to [-1, 1).
	want := float64(uint64(0xe220a8397b1dcdaf)>>11)*0x1p-52 - 1
	if got := Uniform(0, 0); got != want {
		t.Errorf("Uniform(0, 0) = %v, want %v", got, want)
	}
	var sum float64
	const n = 200000
	for k := uint64(0); k < n; k++ {
		x := Uniform(42, k)
		if x < -1 || x >= 1 {
			t.Fatalf("Uniform(42, %d) = %v outside [-1, 1)", k, x)
		}
		if x != Uniform(42, k) || x == Uniform(43, k) {
			t.Fatalf("Uniform(42, %d) not a function of (seed, k)", k)
		}
		sum += x
	}
	if mean := sum / n; math.Abs(mean) > 0.01 {
		t.Errorf("mean of %d draws = %v, want about 0", n, mean)
	}
}

// naiveGEMM is the textbook triple loop, column-major.
func naiveGEMM(m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			var s float64
			for p := 0; p < k; p++ {
				s += a[i+p*lda] * b[p+j*ldb]
			}
			c[i+j*ldc] = alpha*s + beta*c[i+j*ldc]
		}
	}
}

func randomMatrix(rows, cols, ld int, rng *rand.Rand) []float64 {
	m := make([]float64, ld*cols)
	for j := 0; j < cols; j++ {
		for i := 0; i < rows; i++ {
			m[i+j*ld] = rng.Float64()*2 - 1
		}
	}
	return m
}

func TestGemmColMajorMatchesTheTripleLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {64, 65, 66}} {
		m, n, k := sh[0], sh[1], sh[2]
		lda, ldb, ldc := m+3, k+1, m+2
		a, b, c := randomMatrix(m, k, lda, rng), randomMatrix(k, n, ldb, rng), randomMatrix(m, n, ldc, rng)
		want := append([]float64(nil), c...)
		naiveGEMM(m, n, k, 1.5, a, lda, b, ldb, -0.5, want, ldc)
		gemmColMajor(m, n, k, 1.5, a, lda, b, ldb, -0.5, c, ldc)
		for j := 0; j < n; j++ {
			for i := 0; i < m; i++ {
				if d := math.Abs(c[i+j*ldc] - want[i+j*ldc]); d > 1e-12*float64(k) {
					t.Fatalf("%v: C[%d,%d] = %v, want %v", sh, i, j, c[i+j*ldc], want[i+j*ldc])
				}
			}
		}
	}
}

func TestDGEMMExpectBoundsTheRealResult(t *testing.T) {
	const n, reps = 37, 3
	seeds := dgemmSeeds(9)
	d := newCPUDGEMM(n, seeds)
	if _, err := d.run(context.Background(), reps, 1.5, -0.5); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			want, tol := dgemmExpect(n, seeds, i, j, reps, 1.5, -0.5)
			if got := d.c[i+j*n]; math.Abs(got-want) > tol {
				t.Fatalf("C[%d,%d] = %v, want %v within %v", i, j, got, want, tol)
			}
			if tol > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("C[%d,%d]: tolerance %v is too loose to catch mistakes", i, j, tol)
			}
		}
	}
}

func TestVerifyDGEMMCatchesAWrongEntry(t *testing.T) {
	const n, reps = 50, 2
	seeds := dgemmSeeds(5)
	d := newCPUDGEMM(n, seeds)
	if _, err := d.run(context.Background(), reps, 1, 1); err != nil {
		t.Fatal(err)
	}
	samples := dgemmSamples(n, 20, rand.New(rand.NewPCG(1, 1)))
	got, _ := d.gather(samples)
	if _, err := verifyDGEMM(n, seeds, reps, 1, 1, samples, got); err != nil {
		t.Fatalf("correct result rejected: %v", err)
	}
	for name, corrupt := range map[string]func([]float64){
		"relative error 1e-9": func(g []float64) { g[7] *= 1 + 1e-9 },
		"NaN":                 func(g []float64) { g[0] = math.NaN() },
		"a corner zeroed":     func(g []float64) { g[3] = 0 },
	} {
		bad := append([]float64(nil), got...)
		corrupt(bad)
		if _, err := verifyDGEMM(n, seeds, reps, 1, 1, samples, bad); err == nil || !strings.Contains(err.Error(), "dgemm verification failed") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	// A result computed with the wrong number of products is caught too.
	if _, err := verifyDGEMM(n, seeds, reps+1, 1, 1, samples, got); err == nil {
		t.Error("reps+1 accepted")
	}
}

func TestDGEMMSamplesIncludeTheCorners(t *testing.T) {
	s := dgemmSamples(10, 6, rand.New(rand.NewPCG(1, 2)))
	if len(s) != 6 || s[0] != (dgemmSample{0, 0}) || s[3] != (dgemmSample{9, 9}) {
		t.Errorf("samples = %v", s)
	}
	for _, x := range s {
		if x.row < 0 || x.row >= 10 || x.col < 0 || x.col >= 10 {
			t.Errorf("sample %v outside 10x10", x)
		}
	}
}

func TestDGEMMParamsRejectBadValues(t *testing.T) {
	specs := Workload{}.Params()
	v, err := workloads.ParseValues(specs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("n") != 0 || v.String("impl") != "auto" || v.Float("beta") != 1 {
		t.Errorf("defaults = %v", v.Map())
	}
	for _, set := range []map[string]string{
		{"n": "-1"}, {"impl": "mkl"}, {"beta": "2"}, {"samples": "0"}, {"reps": "-1"}, {"size": "10"},
	} {
		if _, err := workloads.ParseValues(specs, set); err == nil {
			t.Errorf("%v accepted", set)
		}
	}
	v, _ = workloads.ParseValues(specs, map[string]string{"device": "cpu", "impl": "cublas", "n": "8"})
	if _, err := (Workload{}).Start(context.Background(), v); err == nil || !strings.Contains(err.Error(), "impl=cublas") {
		t.Errorf("cpu with impl=cublas: err = %v", err)
	}
}

func TestDGEMMWorkloadOnTheCPU(t *testing.T) {
	v, err := workloads.ParseValues(Workload{}.Params(), map[string]string{"device": "cpu", "n": "96", "samples": "16"})
	if err != nil {
		t.Fatal(err)
	}
	job, err := Workload{}.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	for it := 0; it < 2; it++ {
		res, err := job.Iterate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		g := res.Metrics["gemms"]
		if g < 1 || res.Work != 2*96*96*96*g || res.WorkUnit != "flop" || !(res.Metrics["flop_per_s"] > 0) {
			t.Errorf("result = %+v", res)
		}
	}
}

// TestModuleDefinesWhatTheHostLooksUp fails in CI, not on a GPU, when a
// kernel or launch-shape global of dgemm.cu is renamed but not here, or
// when the Hopper code lost the m16n8k8 FP64 MMA. The compute_90 PTX is read
// from the source tree: no binary embeds it.
func TestModuleDefinesWhatTheHostLooksUp(t *testing.T) {
	_, ptx, err := kernels.Image("dgemm")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"dgemm_nn", "dgemm_fill", "dgemm_gather"} {
		if !bytes.Contains(ptx, []byte(".entry "+k+"(")) {
			t.Errorf("dgemm.ptx: no kernel %s", k)
		}
	}
	for _, g := range []string{"dgemm_smem_bytes", "dgemm_threads", "dgemm_tile_m", "dgemm_tile_n"} {
		if !bytes.Contains(ptx, []byte(g)) {
			t.Errorf("dgemm.ptx: no global %s", g)
		}
	}
	if !bytes.Contains(ptx, []byte("mma.sync.aligned.m8n8k4.row.col.f64")) {
		t.Error("dgemm.ptx: no m8n8k4 FP64 MMA")
	}
	const hopper = "../gen/dgemm.sm90.ptx"
	sm90, err := os.ReadFile(hopper)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(sm90, []byte("mma.sync.aligned.m16n8k8.row.col.f64")) {
		t.Errorf("%s: no m16n8k8 FP64 MMA: Hopper would run the slower m8n8k4 path", hopper)
	}
}

// With n=0 on the CPU the order is chosen so one product takes about the
// target: a 2-core VM must not spend a minute on the GPU's 8192.
func TestDGEMMOnTheCPUChoosesAnOrderForTheTarget(t *testing.T) {
	short, err := cpuDGEMMOrder(context.Background(), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	long, err := cpuDGEMMOrder(context.Background(), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{short, long} {
		if n%64 != 0 || n < 64 || n > dgemmGPUOrder {
			t.Errorf("order %d: want a multiple of 64 in [64, %d]", n, dgemmGPUOrder)
		}
	}
	// 1000x the time is 10x the order by the n^3 law; allow for a busy machine.
	if long < 4*short && long != dgemmGPUOrder {
		t.Errorf("order %d for 20 ms, %d for 20 s: not growing as n^3 with the time", short, long)
	}
	v, err := workloads.ParseValues(Workload{}.Params(), map[string]string{"device": "cpu", "samples": "4"})
	if err != nil {
		t.Fatal(err)
	}
	job, err := Workload{}.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	res, err := job.Iterate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Metrics["matrix_order"]; n < 64 || n >= dgemmGPUOrder {
		t.Errorf("n=0 on the CPU ran order %v", n)
	}
}
