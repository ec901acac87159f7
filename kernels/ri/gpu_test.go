package ri

import (
	"context"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels/internal/gputest"
)

// The Go host side and ri.cu must agree on the kernels' names and on the
// block shape; a rename in one and not the other fails CI, not a GPU run.
func TestKernelSourceMatchesHost(t *testing.T) {
	src := gputest.KernelSource(t, "ri")
	gputest.CheckKernels(t, "ri", gputest.KernelNames(src), gpuFunctions)
	gputest.CheckDefines(t, "ri", src, map[string]int{"RI_THREADS": gpuThreads, "RI_EPT": gpuChunk / gpuThreads})
	if gpuThreads != normLanes {
		t.Errorf("the normalise kernel's block (%d threads) must be the CPU's lane count (%d)", gpuThreads, normLanes)
	}
	// Once generated and committed, the embedded module must hold them.
	gputest.EmbeddedPTX(t, "ri", "bench/ri-gpu.sh", gpuFunctions)
}

// ri.cu compiles for the GPU with clang's CUDA front end where clang is
// installed (no CUDA toolkit needed: testdata/clang-cuda-stub.h declares
// the intrinsics), without warnings, defines every kernel the host
// launches, and keeps the per-thread arrays of the dense kernels in
// registers (PTX with .local memory would mean they spilled).
func TestKernelCompilesWithClang(t *testing.T) {
	text := gputest.ClangPTX(t, "ri", gpuFunctions, "-Wextra")
	for _, g := range []string{"ri_threads", "ri_chunk"} {
		if !strings.Contains(text, g) {
			t.Errorf("PTX has no global %s", g)
		}
	}
	if strings.Contains(text, ".local") {
		t.Error("PTX uses local memory: a per-thread array is indexed at run time")
	}
}

// These tests need a GPU; without one they skip, saying why. Built with
// -tags riemu they run ri.cu compiled for the CPU instead (gpu_emu_test.go).

// testOpen, when set (gpu_emu_test.go does under -tags riemu), opens the
// device the GPU tests run on instead of the CUDA driver.
var testOpen func(gpu int) (gpuDevice, error)

func needGPU(t testing.TB) {
	t.Helper()
	gputest.NeedDevice(t, testOpen != nil)
}

// needRealGPU skips under emulation: the test goes through paths (the
// workload's parameters, STREAM) that open the CUDA driver themselves.
func needRealGPU(t testing.TB) {
	t.Helper()
	gputest.NeedDriver(t, testOpen != nil)
}

// gpu0 is GPU 0 with the given term-vector kernel.
func gpu0(kernel string) Device { return Device{GPU: 0, Kernel: kernel, open: testOpen} }

// gpuCorpora are the corpora the GPU is checked on: text with one-token and
// short documents, a Zipf corpus whose frequent terms are sliced, and the
// King James Bible when RI_KJV names it (scripts/corpus-kjv.sh).
func gpuCorpora(t *testing.T) map[string]*Corpus {
	t.Helper()
	out := map[string]*Corpus{}
	c, err := ReadCorpus(strings.NewReader(smallText+"Selah\nAmen amen\n"), Lines)
	if err != nil {
		t.Fatal(err)
	}
	out["genesis"] = c
	z := Zipf{Tokens: 300_000, Vocab: 20_000, S: 1.05, DocLen: 97, Seed: 11}
	if testing.Short() { // memcheck, and the CPU emulation (-tags riemu)
		z.Tokens, z.Vocab = 5_000, 2_000
	}
	if out["zipf"], err = z.Generate(0); err != nil {
		t.Fatal(err)
	}
	if path := os.Getenv("RI_KJV"); path != "" && !testing.Short() {
		if out["kjv"], err = LoadCorpus(path, Lines); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestGPUIndexVectorsMatchTheCPU(t *testing.T) {
	needGPU(t)
	ctx := context.Background()
	big, err := Zipf{Tokens: 50_000, Vocab: 30_000, S: 0.8, DocLen: 10, Seed: 2}.Generate(0)
	if err != nil {
		t.Fatal(err)
	}
	small, err := Zipf{Tokens: 5_000, Vocab: 300, S: 1, DocLen: 10, Seed: 3}.Generate(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c   *Corpus
		cfg Config
	}{
		{big, Config{Dim: 2048, Nonzeros: 10, Window: 1, Seed: 1, Slice: 1024}},
		{big, Config{Dim: 7, Nonzeros: 3, Window: 1, Seed: 99, Slice: 1024}},
		{small, Config{Dim: 65536, Nonzeros: 1024, Contexts: Document, Seed: 1 << 63, Slice: 1024}},
	} {
		c, cfg := tc.c, tc.cfg
		sh, err := newShared(ctx, c, cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := newGPUEngine(ctx, sh, gpu0(KernelThread))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.indexVectors(ctx); err != nil {
			t.Fatal(err)
		}
		want, buf := sh.idx, g.idx
		if cfg.Contexts == Document {
			want, buf = sh.docIdx, g.docIdx
		}
		got := make([]int32, len(want))
		if err := download(g, got, buf); err != nil {
			t.Fatal(err)
		}
		if i := firstDiff(got, want); i >= 0 {
			t.Errorf("d=%d k=%d %v: entry %d (vector %d) is %d on the GPU, %d in Go", cfg.Dim, cfg.Nonzeros, cfg.Contexts, i, i/cfg.Nonzeros, got[i], want[i])
		}
		if err := g.close(); err != nil {
			t.Fatal(err)
		}
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// compareFloats checks every vector of got against want within 1e-6
// relative (Euclidean, per vector) and counts the elements equal to the
// bit.
func compareFloats(t *testing.T, what string, c *Corpus, d int, got, want []float32) {
	t.Helper()
	worst, worstTerm, same := 0.0, "", 0
	for id := 0; id < c.Vocab(); id++ {
		w := make([]float64, d)
		for e := range w {
			w[e] = float64(want[id*d+e])
			if math.Float32bits(got[id*d+e]) == math.Float32bits(want[id*d+e]) {
				same++
			}
		}
		if e := relErr(got[id*d:(id+1)*d], w); e > worst || math.IsNaN(e) {
			worst, worstTerm = e, c.Terms[id]
		}
	}
	t.Logf("%s: largest relative error %.3g (%q); %d of %d elements identical to the bit", what, worst, worstTerm, same, len(want))
	if !(worst <= 1e-6) {
		t.Errorf("%s: vector of %q off by %.3g relative to the CPU's (tolerance 1e-6)", what, worstTerm, worst)
	}
}

// The GPU computes what the CPU computes: term vectors exactly, retrained
// and normalised vectors within 1e-6 relative per vector (the same
// summation order makes them identical in practice; the log says how many
// elements are), for both term-vector kernels.
func TestGPUMatchesTheCPU(t *testing.T) {
	needGPU(t)
	ctx := context.Background()
	configs := map[string]Config{
		"bench d=2048 k=10 w=5":            DefaultConfig(),
		"permuted d=300 slice=64 retrain2": {Dim: 300, Nonzeros: 5, Window: 3, Permute: true, Retrain: 2, Normalise: true, Seed: 3, Slice: 64},
		"permuted d=2500 two chunks":       {Dim: 2500, Nonzeros: 7, Window: 4, Permute: true, Retrain: 1, Normalise: true, Seed: 4, Slice: 1000},
		"wide window w=40":                 {Dim: 512, Nonzeros: 4, Window: 40, Permute: true, Retrain: 1, Normalise: false, Seed: 6, Slice: 300},
		"document d=512 slice=100":         {Dim: 512, Nonzeros: 8, Contexts: Document, Retrain: 1, Normalise: true, Seed: 5, Slice: 100},
		"no retraining, not normalised":    {Dim: 256, Nonzeros: 6, Window: 2, Seed: 7, Slice: 7},
		// Hot-row retraining: a last slice of the vector part-filled, units
		// of many batches, and a window so wide a batch is one occurrence.
		"unpermuted d=1000 slice=50 retrain2": {Dim: 1000, Nonzeros: 6, Window: 7, Retrain: 2, Normalise: true, Seed: 8, Slice: 50},
		"unpermuted w=300":                    {Dim: 128, Nonzeros: 4, Window: 300, Retrain: 1, Seed: 9, Slice: 40},
	}
	names := make([]string, 0, len(configs))
	for n := range configs {
		names = append(names, n)
	}
	sort.Strings(names)
	for cname, c := range gpuCorpora(t) {
		for _, name := range names {
			cfg := configs[name]
			t.Run(cname+"/"+name, func(t *testing.T) {
				cpu, err := NewTrainer(ctx, c, cfg, CPU(0))
				if err != nil {
					t.Fatal(err)
				}
				defer cpu.Close()
				if _, err := cpu.Run(ctx); err != nil {
					t.Fatal(err)
				}
				wantInts, _ := cpu.TermVectors(ctx)
				wantVecs, _ := cpu.Vectors(ctx)
				for _, kernel := range []string{KernelWarp, KernelBlock, KernelThread} {
					gpu, err := NewTrainer(ctx, c, cfg, gpu0(kernel))
					if err != nil {
						t.Fatal(err)
					}
					st, err := gpu.Run(ctx)
					if err != nil {
						gpu.Close()
						t.Fatalf("%s kernel: %v", kernel, err)
					}
					ints, err := gpu.TermVectors(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if i := firstDiff(ints, wantInts); i >= 0 {
						t.Errorf("%s kernel: term vector of %q, element %d: %d on the GPU, %d on the CPU",
							kernel, c.Terms[i/cfg.Dim], i%cfg.Dim, ints[i], wantInts[i])
					}
					if cfg.Retrain > 0 {
						got, _ := gpu.Retrained(ctx)
						want, _ := cpu.Retrained(ctx)
						compareFloats(t, kernel+" retrained", c, cfg.Dim, got, want)
					}
					vecs, _ := gpu.Vectors(ctx)
					compareFloats(t, kernel+" final", c, cfg.Dim, vecs, wantVecs)
					t.Logf("%s kernel: term vectors %v, retrain %v, normalise %v (GPU time)", kernel, st.TermVectors, st.Retrain, st.Normalise)
					if err := gpu.Close(); err != nil {
						t.Fatal(err)
					}
				}
			})
		}
	}
}

// A dimension whose term vector does not fit in a block's shared memory
// is refused by the block kernel, naming the way out, and computed by the
// thread kernel.
func TestGPUDimensionBeyondSharedMemory(t *testing.T) {
	needGPU(t)
	ctx := context.Background()
	c, err := ReadCorpus(strings.NewReader(smallText), Lines)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Dim: MaxDim, Nonzeros: 16, Window: 2, Seed: 1, Slice: 3}
	if _, err := NewTrainer(ctx, c, cfg, gpu0("")); err == nil || !strings.Contains(err.Error(), "kernel=thread") {
		t.Fatalf("block kernel at d=%d: %v", cfg.Dim, err)
	}
	cpu, _ := trainCPU(t, c, cfg, 0)
	gpu, err := NewTrainer(ctx, c, cfg, gpu0(KernelThread))
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	if _, err := gpu.Run(ctx); err != nil {
		t.Fatal(err)
	}
	a, _ := gpu.TermVectors(ctx)
	b, _ := cpu.TermVectors(ctx)
	if i := firstDiff(a, b); i >= 0 {
		t.Errorf("element %d: %d on the GPU, %d on the CPU", i, a[i], b[i])
	}
}

func TestGPUWorkload(t *testing.T) {
	needRealGPU(t)
	corpus := "zipf:tokens=200k,vocab=10k"
	if testing.Short() {
		corpus = "zipf:tokens=20k,vocab=2k"
	}
	v := values(t, map[string]string{"corpus": corpus, "device": "0", "dim": "1024"})
	job, err := Workload{}.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	for it := 0; it < 3; it++ {
		res, err := job.Iterate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Metrics["retrain_bytes_per_s"] <= 0 || res.Metrics["term_vectors_tokens_per_s"] <= 0 {
			t.Errorf("iteration %d: metrics %v", it, res.Metrics)
		}
	}
}
