package lda

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/internal/gputest"
	"github.com/heatsink-hpc/heatsink/kernels/philox"
)

// The Go host side and lda.cu must agree on the kernels' names and
// constants; a rename in one and not the other fails CI, not a GPU run.
func TestKernelSourceMatchesHost(t *testing.T) {
	src := gputest.KernelSource(t, "lda")
	gputest.CheckKernels(t, "lda", gputest.KernelNames(src), gpuFunctions)
	gputest.CheckDefines(t, "lda", src, map[string]int{"LDA_THREADS": gpuThreads, "LDA_SMALL_ROW": smallRow, "LDA_SCALES": numScales, "LDA_MIN_SCALE": minScale,
		"LDA_SHORTCUT_OFF": shortcutOff, "LDA_SHORTCUT_FIRST": shortcutFirst, "LDA_SHORTCUT_AFTER": shortcutAfter})
	gputest.EmbeddedPTX(t, "lda", "bench/lda-gpu.sh", gpuFunctions)
}

// The emulator is built from the lda.cu it claims: emu.cpp records the
// source's hash (internal/ldaemu/stamp.sh, go generate ./kernels/lda).
func TestEmulatorStampIsCurrent(t *testing.T) {
	gputest.CheckEmulatorStamp(t, "lda", gputest.KernelSource(t, "lda"), "internal/ldaemu/emu.cpp", "run go generate ./kernels/lda")
}

// The sampler tests the shortcut first once it decided shortcutFirstAbove
// of the GPU's tokens in the last iteration, and never in two-branch mode.
func TestShortcutMode(t *testing.T) {
	l, err := newLayout(synthetic(t, "tiny", nil), 16, Hybrid)
	if err != nil {
		t.Fatal(err)
	}
	first := int64(math.Ceil(shortcutFirstAbove * float64(l.n)))
	for _, tc := range []struct {
		last      int64
		twoBranch bool
		force     uint32
		want      uint32
	}{
		{0, false, 0, shortcutAfter},
		{first - 1, false, 0, shortcutAfter},
		{first, false, 0, shortcutFirst},
		{int64(l.n), true, 0, shortcutOff},
		{int64(l.n), false, shortcutAfter, shortcutAfter},
	} {
		g := &gpuEngine{l: l, part: wholeShare(l), lastShortcuts: tc.last, twoBranch: tc.twoBranch, forceShortcut: tc.force}
		if got := g.shortcutMode(); got != tc.want {
			t.Errorf("%d of %d tokens took the shortcut, two-branch %v, forced %d: mode %d, want %d", tc.last, l.n, tc.twoBranch, tc.force, got, tc.want)
		}
	}
}

// These tests need a GPU, or -tags ldaemu; without either they skip.

// testOpen, when set (gpu_emu_test.go does under -tags ldaemu), opens the
// device the GPU tests run on instead of the CUDA driver; testBlock is
// then the block size they use.
var (
	testOpen  func(gpu int) (gpuDevice, error)
	testBlock = gpuThreads
)

func needGPU(t testing.TB) {
	t.Helper()
	gputest.NeedDevice(t, testOpen != nil)
}

func needRealGPU(t testing.TB) {
	t.Helper()
	gputest.NeedDriver(t, testOpen != nil)
}

// openTestGPU is GPU 0 with lda.cu, laid out for l.
func openTestGPU(t testing.TB, cfg Config, l *layout, opt Options) *gpuEngine {
	t.Helper()
	open := testOpen
	if open == nil {
		open = func(gpu int) (gpuDevice, error) { return openCUDADevice(gpu) }
	}
	d, err := open(0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := newGPUEngineOn(cfg, l, d, testBlock)
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	g.twoBranch = opt.TwoBranch
	t.Cleanup(func() {
		if err := g.close(); err != nil {
			t.Error(err)
		}
	})
	return g
}

func TestGPUPhiloxKnownAnswers(t *testing.T) {
	needGPU(t)
	c := synthetic(t, "tiny", nil)
	cfg := DefaultConfig(4)
	l, err := newLayout(c, cfg.Topics, Hybrid)
	if err != nil {
		t.Fatal(err)
	}
	g := openTestGPU(t, cfg, l, Options{})
	in := [][6]uint32{
		{0, 0, 0, 0, 0, 0},
		{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
		{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0},
		{17, 3, 0, 0, 42, 0},
	}
	want := [][4]uint32{
		{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
		{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
		{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
		philox.Philox4x32([4]uint32{17, 3, 0, 0}, [2]uint32{42, 0}),
	}
	got, err := g.philoxKAT(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Philox4x32-10 on the GPU of %08x = %08x, want %08x", in[i], got[i], want[i])
		}
	}
}

// sameCounts compares two engines' counts row by row (entries past a
// row's length are free room, not compared).
func sameCounts(l *layout, a, b *counts) error {
	if i := slices.Compare(a.t, b.t); i != 0 {
		return fmt.Errorf("T differs: %v and %v", a.t, b.t)
	}
	for i := range a.wd {
		if a.wd[i] != b.wd[i] {
			return fmt.Errorf("dense row of word %d, topic %d: %d and %d", i/l.k, i%l.k, a.wd[i], b.wd[i])
		}
	}
	for w := l.dense; w < l.v; w++ {
		base, n := l.wordOff[w]-l.sparseBase, a.wLen[w]
		if b.wLen[w] != n || !slices.Equal(a.wTop[base:base+n], b.wTop[base:base+n]) || !slices.Equal(a.wCnt[base:base+n], b.wCnt[base:base+n]) {
			return fmt.Errorf("sparse row of word %d differs", w)
		}
	}
	for d := 0; d < l.d; d++ {
		lo, n := l.docOff[d], a.dLen[d]
		if b.dLen[d] != n || !slices.Equal(a.dTop[lo:lo+n], b.dTop[lo:lo+n]) || !slices.Equal(a.dCnt[lo:lo+n], b.dCnt[lo:lo+n]) {
			return fmt.Errorf("row of document %d differs", d)
		}
	}
	return nil
}

// gpuCases are the corpora and settings the GPU is checked against the
// CPU on: the hybrid format at two K (dense words split into several
// units at the larger corpus), and the all-dense and all-sparse formats.
func gpuCases(t *testing.T) []struct {
	name string
	c    *Corpus
	cfg  Config
	opt  Options
} {
	long := synthetic(t, "tiny", func(s *Synthetic) { s.Zipf = 1.1; s.Vocab = 3000; s.Docs = 150; s.DocLen = 70 })
	short := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 60; s.DocLen = 25; s.Seed = 5 })
	if testOpen == nil && !testing.Short() {
		long = synthetic(t, "small", nil)
	}
	// Document rows longer than one 128-entry step of the sampler's search.
	chunks := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 10; s.DocLen = 400; s.Vocab = 500; s.Seed = 7 })
	edge := &Corpus{Vocab: []string{"a", "b", "c", "unused", "e"}, DocOff: []uint32{0, 0, 1, 1, 41, 47, 47}}
	edge.Words = []uint32{4}
	for i := range 40 {
		edge.Words = append(edge.Words, uint32(i%3))
	}
	edge.Words = append(edge.Words, 0, 0, 0, 0, 0, 0)
	cfg := func(k int, seed uint64) Config { c := DefaultConfig(k); c.Seed = seed; return c }
	cases := []struct {
		name string
		c    *Corpus
		cfg  Config
		opt  Options
	}{
		{"hybrid K=16", long, cfg(16, 1), Options{}},
		{"hybrid K=100", long, Config{Topics: 100, Alpha: 0.1, Beta: 0.01, Seed: 1 << 40}, Options{}},
		{"dense K=7 two-branch", short, cfg(7, 3), Options{Format: AllDense, TwoBranch: true}},
		{"sparse K=33", short, cfg(33, 4), Options{Format: AllSparse}},
		{"edge K=5", edge, cfg(5, 9), Options{}},
		{"rows of two steps K=200", chunks, cfg(200, 10), Options{}},
	}
	if testOpen == nil && !testing.Short() {
		// Too slow to emulate or to run under the sanitizers: rows of
		// many 128-entry steps, at two K.
		many := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 12; s.DocLen = 700; s.Vocab = 1500; s.Seed = 8 })
		huge := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 4; s.DocLen = 3000; s.Vocab = 2000; s.Seed = 9 })
		cases = append(cases, []struct {
			name string
			c    *Corpus
			cfg  Config
			opt  Options
		}{
			{"rows of many steps K=1024", many, cfg(1024, 11), Options{}},
			{"rows of many steps K=2048", huge, cfg(2048, 12), Options{}},
		}...)
	}
	return cases
}

// With the same draws, one GPU iteration equals the CPU's exactly: every
// token's topic, every count, and the number of shortcuts; the GPU's
// invariant kernels pass, and its counts pass the CPU's full check.
func TestGPUMatchesTheCPU(t *testing.T) {
	needGPU(t)
	ctx := context.Background()
	iters := 4
	if testOpen == nil {
		iters = 10
	}
	for _, tc := range gpuCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			l, err := newLayout(tc.c, tc.cfg.Topics, tc.opt.Format)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s at K=%d: %d dense words in %d units, %d medium in %d, %d small in %d chunks", tc.c.Describe(), l.k,
				l.dense, l.nDenseUnits(), l.medium-l.dense, l.nMediumUnits(), l.v-l.medium, l.nSparseUnits())
			cpu := &cpuDevice{e: newCPUEngine(tc.cfg, tc.opt, l)}
			g := openTestGPU(t, tc.cfg, l, tc.opt)
			// The memory comparison with a dense-W sampler uses gpuBytes.
			if want := gpuBytes(l, g.dev.Info().SMs) + 8*int64(g.partialLen-partialBlocks(l, gpuThreads, g.llGrid())); g.bytes() != want {
				t.Errorf("the engine allocated %d bytes, gpuBytes says %d", g.bytes(), want)
			}
			for _, e := range []engine{cpu, g} {
				if err := e.initialise(ctx); err != nil {
					t.Fatal(err)
				}
			}
			compare := func(when string) {
				t.Helper()
				gc, gz, err := g.state(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(gz, cpu.e.z); i >= 0 {
					t.Fatalf("%s: word-major token %d (corpus token %d) has topic %d on the GPU, %d on the CPU", when, i, l.tokIdx[i], gz[i], cpu.e.z[i])
				}
				if err := sameCounts(l, gc, cpu.e.c); err != nil {
					t.Fatalf("%s: %v", when, err)
				}
				if err := checkCounts(l, gc, gz); err != nil {
					t.Fatalf("%s: the GPU's counts: %v", when, err)
				}
				if err := g.check(ctx); err != nil {
					t.Fatalf("%s: %v", when, err)
				}
			}
			compare("after the initial topics")
			for it := 1; it <= iters; it++ {
				cs, err := cpu.step(ctx)
				if err != nil {
					t.Fatal(err)
				}
				// Both shortcut modes give the same topics and counts.
				if !tc.opt.TwoBranch {
					g.forceShortcut = []uint32{shortcutAfter, shortcutFirst}[it%2]
				}
				gs, err := g.step(ctx)
				if err != nil {
					t.Fatal(err)
				}
				compare(fmt.Sprintf("iteration %d (shortcut mode %d)", it, g.shortcutMode()))
				if gs.shortcuts != cs.shortcuts {
					t.Errorf("iteration %d: %d shortcuts on the GPU, %d on the CPU", it, gs.shortcuts, cs.shortcuts)
				}
				if it == iters {
					gl, err := g.logLikelihood(ctx)
					if err != nil {
						t.Fatal(err)
					}
					cl, _ := cpu.logLikelihood(ctx)
					if rel := math.Abs(gl-cl) / math.Abs(cl); !(rel < 1e-9) {
						t.Errorf("log-likelihood %.12g on the GPU, %.12g on the CPU (relative difference %.2g)", gl, cl, rel)
					}
					t.Logf("iteration %d: %d of %d tokens took the shortcut; log-likelihood %.6g", it, gs.shortcuts, l.n, cl)
				}
			}
		})
	}
}

// A broken count is caught by the GPU's invariant kernels.
func TestGPUCheckCatchesBrokenCounts(t *testing.T) {
	needGPU(t)
	ctx := context.Background()
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 50 })
	cfg := DefaultConfig(8)
	l, err := newLayout(c, cfg.Topics, Hybrid)
	if err != nil {
		t.Fatal(err)
	}
	g := openTestGPU(t, cfg, l, Options{})
	if err := g.initialise(ctx); err != nil {
		t.Fatal(err)
	}
	if err := g.check(ctx); err != nil {
		t.Fatal(err)
	}
	// One more token of topic 0 in T than the rows hold.
	tt := make([]uint32, l.k)
	if err := download(g, tt, g.t); err != nil {
		t.Fatal(err)
	}
	tt[0]++
	if err := g.dev.Upload(g.t, kernels.Bytes(tt)); err != nil {
		t.Fatal(err)
	}
	err = g.check(ctx)
	if err == nil || !strings.Contains(err.Error(), "topic totals") {
		t.Errorf("check after corrupting T: %v, want topic totals broken", err)
	}
}

func firstDiff[T comparable](a, b []T) int {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return len(a)
	}
	return -1
}

// The trainer on a GPU (256-thread blocks) with its checks and
// log-likelihood gives the CPU trainer's model.
func TestGPUTrainer(t *testing.T) {
	needGPU(t)
	ctx := context.Background()
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 20; s.Zipf = 1 })
	cfg := Config{Topics: 12, Alpha: 0.1, Beta: 0.01, Seed: 8}
	var models []*Model
	var lls []float64
	for _, dev := range []Device{CPU(Options{}), {GPU: 0, open: testOpen}} {
		tr, err := NewTrainer(ctx, c, cfg, dev)
		if err != nil {
			t.Fatal(err)
		}
		tr.Check = true
		var st IterStats
		for range 3 {
			if st, err = tr.Step(ctx, true); err != nil {
				t.Fatal(err)
			}
		}
		m, err := tr.Model(ctx)
		if err != nil {
			t.Fatal(err)
		}
		models, lls = append(models, m), append(lls, st.LogLik)
		t.Logf("%s: %d bytes, %.3g tokens/s, log-likelihood %.6f", tr.DeviceName(), tr.DeviceBytes(), st.TokensPerS(), st.LogLik)
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(models[0].Words, models[1].Words) || !slices.Equal(models[0].Docs, models[1].Docs) || !slices.Equal(models[0].T, models[1].T) {
		t.Error("the GPU's model differs from the CPU's")
	}
	if math.Abs(lls[0]-lls[1]) > 1e-9*math.Abs(lls[0]) {
		t.Errorf("log-likelihood %.12g on the CPU, %.12g on the GPU", lls[0], lls[1])
	}
}

// K beyond what a block's shared memory holds is refused before anything
// runs, saying why.
func TestGPURefusesTooManyTopics(t *testing.T) {
	needGPU(t)
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 10 })
	_, err := NewTrainer(context.Background(), c, Config{Topics: 60000, Alpha: 0.01, Beta: 0.01}, Device{GPU: 0, open: testOpen})
	if err == nil || !strings.Contains(err.Error(), "60000 topics need 242048 bytes of shared memory") {
		t.Errorf("K=60000: %v", err)
	}
}

// The GPU packs a document-row entry's topic and count into 32 bits; a
// document too long for the count's bits at this K is refused by name.
func TestGPURefusesTooLongDocuments(t *testing.T) {
	needGPU(t)
	c := &Corpus{Vocab: []string{"a", "b"}, DocOff: []uint32{0, 3, 3 + 1<<16}}
	c.Words = make([]uint32, 3+1<<16)
	_, err := NewTrainer(context.Background(), c, Config{Topics: 40000, Alpha: 0.01, Beta: 0.01}, Device{GPU: 0, open: testOpen})
	if err == nil || !strings.Contains(err.Error(), "a document of 65536 tokens is too long for the GPU at K=40000") {
		t.Errorf("K=40000, a document of 2^16 tokens: %v", err)
	}
}
