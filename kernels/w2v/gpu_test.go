package w2v

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/internal/gputest"
)

// The Go host side and w2v.cu must agree on the kernels' names and on the
// block shape; a rename in one and not the other fails CI, not a GPU run.
func TestKernelSourceMatchesHost(t *testing.T) {
	src := gputest.KernelSource(t, "w2v")
	// The warp kernels are stamped out by a macro (W2V_WARP_KERNEL), whose
	// own definition is not a kernel.
	names := gputest.KernelNames(regexp.MustCompile(`(?m)^.*##.*$`).ReplaceAll(src, nil))
	for _, m := range regexp.MustCompile(`(?m)^W2V_WARP_KERNEL\((\d+)\)$`).FindAllSubmatch(src, -1) {
		names = append(names, "w2v_sgns_warp"+string(m[1]))
	}
	gputest.CheckKernels(t, "w2v", names, gpuFunctions)
	gputest.CheckDefines(t, "w2v", src, map[string]int{"W2V_WARPS": gpuWarps, "W2V_EXP_TABLE": expTableSize, "W2V_NEG_TRIES": negativeTries})
	// Every layout the host can pick has its kernel.
	for _, d := range []int{1, 32, 33, 64, 100, 128, 129, 256, 257, 1024} {
		cfg := DefaultConfig()
		cfg.Dim = d
		lay, err := cfg.layout()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(gpuFunctions, lay.kernelName()) {
			t.Errorf("dimension %d: layout picks %s, which w2v.cu does not define", d, lay.kernelName())
		}
	}
	// Once generated and committed, the embedded module must hold them.
	ptx, ok := gputest.EmbeddedPTX(t, "w2v", "bench/w2v-gpu.sh", gpuFunctions)
	if !ok {
		return
	}
	// The constants the host checks at load; a module without them was
	// built from an older w2v.cu (bench/w2v-gpu.sh regenerates it).
	for _, g := range []string{"w2v_warps", "w2v_exp_table", "w2v_neg_tries"} {
		if !strings.Contains(ptx, " "+g+" = ") {
			t.Logf("embedded w2v.ptx has no %s: it predates w2v.cu; the GPU path needs it regenerated", g)
		}
	}
}

// These tests need a GPU; without one they skip, saying why.

// testOpen, when set (gpu_emu_test.go does under -tags w2vemu), opens the
// device the GPU tests run on instead of the CUDA driver; testEmulated says
// that device is the slow CPU emulation.
var (
	testOpen     func(gpu int) (gpuDevice, error)
	testEmulated bool
)

func needGPU(t testing.TB) {
	t.Helper()
	gputest.NeedDevice(t, testOpen != nil)
}

func gpuDeviceForTest() Device { return Device{GPU: 0, Threads: 0, open: testOpen} }

// referenceCase is a batch with everything the kernels take given
// explicitly: random initial weights (large enough that the logistic
// table's saturated ends are reached), sentences over a small vocabulary
// (so words repeat within a window), random negatives (some equal to the
// centre or to a context word), random learning rates.
type referenceCase struct {
	c          *Corpus
	cfg        Config
	b          *batch
	syn0, syn1 []float32
}

func newReferenceCase(t *testing.T, dim, vocab int, lengths []int, disjoint bool, seed uint64) referenceCase {
	cfg := DefaultConfig()
	cfg.Dim = dim
	return newReferenceCaseWith(t, cfg, vocab, lengths, disjoint, seed)
}

func newReferenceCaseWith(t *testing.T, cfg Config, vocab int, lengths []int, disjoint bool, seed uint64) referenceCase {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	dim := cfg.Dim
	n := cfg.Negatives
	words := vocab
	if disjoint {
		words = vocab * len(lengths)
	}
	counts := map[string]int64{}
	for i := 0; i < words; i++ {
		counts[fmt.Sprintf("v%04d", i)] = int64(words - i)
	}
	v := NewVocab(counts, 1, 0)
	b := &batch{starts: []int32{0}}
	var sentences [][]int32
	for s, L := range lengths {
		base := 0
		if disjoint {
			base = s * vocab
		}
		var sent []int32
		for p := 0; p < L; p++ {
			sent = append(sent, int32(base+rng.IntN(vocab)))
		}
		for p := 0; p < L*n; p++ {
			b.negs = append(b.negs, int32(base+rng.IntN(vocab)))
		}
		sentences = append(sentences, sent)
		b.tokens = append(b.tokens, sent...)
		b.starts = append(b.starts, int32(len(b.tokens)))
		b.alphas = append(b.alphas, float32(0.02+0.1*rng.Float64()))
	}
	c, err := NewCorpus(v, sentences, slices.Max(lengths))
	if err != nil {
		t.Fatal(err)
	}
	rc := referenceCase{c: c, cfg: cfg, b: b}
	scale := 4 / math.Sqrt(float64(dim))
	for i := 0; i < v.Size()*dim; i++ {
		rc.syn0 = append(rc.syn0, float32(scale*(rng.Float64()-0.5)))
		rc.syn1 = append(rc.syn1, float32(scale*(rng.Float64()-0.5)))
	}
	return rc
}

// cpu trains the case on the Go reference, sentence after sentence.
func (rc referenceCase) cpu(t *testing.T) (syn0, syn1 []float32) {
	lay, err := rc.cfg.layout()
	if err != nil {
		t.Fatal(err)
	}
	m := &model{syn0: slices.Clone(rc.syn0), syn1: slices.Clone(rc.syn1), dim: rc.cfg.Dim, lay: lay, table: newExpTable(), fresh: rc.cfg.Fresh}
	m.trainBatch(rc.b, rc.cfg.Negatives, rc.cfg.WindowFixed())
	return m.syn0, m.syn1
}

// gpu trains the case on the GPU, one sentence per launch when sequential.
func (rc referenceCase) gpu(t *testing.T, sequential bool) (syn0, syn1 []float32) {
	t.Helper()
	dev := gpuDeviceForTest()
	dev.sequential = sequential
	return rc.gpuOn(t, dev)
}

func (rc referenceCase) gpuOn(t *testing.T, dev Device) (syn0, syn1 []float32) {
	t.Helper()
	tr, err := NewTrainer(context.Background(), rc.c, rc.cfg, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tr.Close(); err != nil {
			t.Error(err)
		}
	}()
	g := tr.eng.(*gpuEngine)
	if err := g.reset(rc.syn0, rc.syn1); err != nil {
		t.Fatal(err)
	}
	if _, err := g.runBatch(rc.b); err != nil {
		t.Fatal(err)
	}
	syn0, syn1, err = g.weights()
	if err != nil {
		t.Fatal(err)
	}
	return syn0, syn1
}

// compareModels checks element-wise agreement within rel (relative to the
// larger magnitude, with an absolute floor for elements near zero) and
// reports how many elements are bit-identical.
func compareModels(t *testing.T, what string, gotSyn0, gotSyn1, wantSyn0, wantSyn1 []float32, rel float64) {
	t.Helper()
	for _, m := range []struct {
		name      string
		got, want []float32
	}{{"syn0", gotSyn0, wantSyn0}, {"syn1neg", gotSyn1, wantSyn1}} {
		same, bad := 0, 0
		worst := 0.0
		for i := range m.want {
			g, w := float64(m.got[i]), float64(m.want[i])
			if g == w {
				same++
				continue
			}
			err := math.Abs(g-w) / math.Max(math.Max(math.Abs(g), math.Abs(w)), 1e-6)
			worst = math.Max(worst, err)
			if !(err <= rel) {
				if bad < 5 {
					t.Errorf("%s: %s[%d] = %g on the GPU, %g in Go (relative error %.3g)", what, m.name, i, g, w, err)
				}
				bad++
			}
		}
		t.Logf("%s: %s: %d of %d elements bit-identical, worst relative error %.3g", what, m.name, same, len(m.want), worst)
		if bad > 0 {
			t.Errorf("%s: %s: %d elements off by more than %g", what, m.name, bad, rel)
		}
	}
}

// The sentence lengths: 1, 2, W_f, 2W_f, 2W_f+1 and the maximum.
func referenceLengths(wf, maxLen int) []int {
	return []int{1, 2, wf, 2 * wf, 2*wf + 1, maxLen, 2*wf + 2, 3}
}

// TestGPUMatchesCPUOneSentenceAtATime is the kernels' reference check:
// trained one sentence per launch, the GPU's weights equal the Go
// reference's within 1e-4 relative (the order of operations is the same,
// so they should be bit-identical), for every kernel layout, with the
// ring and with fresh contexts (negative dimensions below).
func TestGPUMatchesCPUOneSentenceAtATime(t *testing.T) {
	needGPU(t)
	maxLen := DefaultMaxSentence
	dims := []int{32, 64, 100, 128, 256, 300, -128, -300}
	if testEmulated || testing.Short() {
		maxLen, dims = 23, []int{32, 100, 128, 200, 300, -128, -300}
	}
	for _, dim := range dims {
		cfg := DefaultConfig()
		cfg.Dim, cfg.Fresh = max(dim, -dim), dim < 0
		dim := cfg.Dim
		lay, _ := cfg.layout()
		t.Run(fmt.Sprintf("d=%d/%s/fresh=%v", dim, lay.kernelName(), cfg.Fresh), func(t *testing.T) {
			rc := newReferenceCaseWith(t, cfg, 12, referenceLengths(cfg.WindowFixed(), maxLen), false, uint64(dim))
			want0, want1 := rc.cpu(t)
			got0, got1 := rc.gpu(t, true)
			compareModels(t, "one sentence per launch", got0, got1, want0, want1, 1e-4)
			if slices.Equal(want0, rc.syn0) || slices.Equal(want1, rc.syn1) {
				t.Error("training changed nothing: the check would prove nothing")
			}
		})
	}
}

// Outputs in more than one group (N+1 > 6) and another window.
func TestGPUMatchesCPUManyNegatives(t *testing.T) {
	needGPU(t)
	maxLen := DefaultMaxSentence
	if testEmulated || testing.Short() {
		maxLen = 19
	}
	for _, c := range []struct{ dim, window, negatives int }{{128, 7, 7}, {300, 3, 13}} {
		cfg := DefaultConfig()
		cfg.Dim, cfg.Window, cfg.Negatives = c.dim, c.window, c.negatives
		t.Run(fmt.Sprintf("d=%d,W=%d,N=%d", c.dim, c.window, c.negatives), func(t *testing.T) {
			rc := newReferenceCaseWith(t, cfg, 12, referenceLengths(cfg.WindowFixed(), maxLen), false, 11)
			want0, want1 := rc.cpu(t)
			got0, got1 := rc.gpu(t, true)
			compareModels(t, "one sentence per launch", got0, got1, want0, want1, 1e-4)
		})
	}
}

// TestGPUMatchesCPUDisjointSentences checks the batched path (every
// sentence at once, several per block): sentences that share no word
// cannot race, so the result is again the reference's.
func TestGPUMatchesCPUDisjointSentences(t *testing.T) {
	needGPU(t)
	count, maxLen := 300, DefaultMaxSentence
	if testEmulated || testing.Short() {
		count, maxLen = 9, 17
	}
	for _, dim := range []int{128, 300} {
		t.Run(fmt.Sprintf("d=%d", dim), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(dim), 7))
			lengths := make([]int, count)
			for i := range lengths {
				lengths[i] = 1 + rng.IntN(maxLen)
			}
			rc := newReferenceCase(t, dim, 10, lengths, true, 3)
			want0, want1 := rc.cpu(t)
			got0, got1 := rc.gpu(t, false)
			compareModels(t, "all sentences at once", got0, got1, want0, want1, 1e-4)
			// Eight at a time: blocks loop over the sentences.
			dev := gpuDeviceForTest()
			dev.Concurrency = 8
			got0, got1 = rc.gpuOn(t, dev)
			compareModels(t, "eight at a time", got0, got1, want0, want1, 1e-4)
		})
	}
}

// w2v.cu compiles for the GPU with clang's CUDA front end where clang is
// installed (no CUDA toolkit needed: testdata/clang-cuda-stub.h declares
// the intrinsics), defines every kernel the host launches, and keeps the
// output vector in registers: PTX with .local memory would mean the
// per-lane arrays spilled, a slow kernel.
func TestKernelCompilesWithClang(t *testing.T) {
	if strings.Contains(gputest.ClangPTX(t, "w2v", gpuFunctions), ".local") {
		t.Error("PTX uses local memory: a per-lane array is indexed at run time")
	}
}

// The emulator is built from the w2v.cu it claims: emu.cpp records the
// source's hash (internal/w2vemu/stamp.sh, go generate ./kernels/w2v), or
// Go's build cache would keep an emulator of an older w2v.cu.
func TestEmulatorStampIsCurrent(t *testing.T) {
	gputest.CheckEmulatorStamp(t, "w2v", gputest.KernelSource(t, "w2v"), "internal/w2vemu/emu.cpp", "run go generate ./kernels/w2v")
}

// drawCorpus is a corpus for the GPU-drawn path: Zipfian words (so
// subsampling drops the frequent ones) over a vocabulary with </s> (so
// table draws of it are remapped), in sentences of random length up to
// maxLen (lengths 1 and 2 among them).
func drawCorpus(t *testing.T, words, tokens, maxLen int, seed uint64) *Corpus {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	counts := map[string]int64{}
	weights := make([]float64, words)
	var total float64
	for i := range weights {
		weights[i] = 1 / float64(i+1)
		total += weights[i]
	}
	for i := range weights {
		counts[fmt.Sprintf("z%04d", i)] = max(1, int64(float64(tokens)*weights[i]/total))
	}
	v := NewVocab(counts, 1, int64(tokens/20))
	var sentences [][]int32
	for n := 0; n < tokens; {
		L := 1 + rng.IntN(maxLen)
		if len(sentences) < 2 {
			L = len(sentences) + 1
		}
		var s []int32
		for p := 0; p < L; p++ {
			// The vocabulary is sorted by count: id 1 is the most frequent word.
			x, r := rng.Float64()*total, 0
			for r < words-1 && x > weights[r] {
				x -= weights[r]
				r++
			}
			s = append(s, int32(r+1))
		}
		sentences = append(sentences, s)
		n += L
	}
	c, err := NewCorpus(v, sentences, maxLen)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGPUMatchesCPUDraws: w2v_draw keeps the tokens and draws the
// negatives that the Go sampler does (Philox by position and epoch), for
// every sentence of a launch that starts mid-corpus.
func TestGPUMatchesCPUDraws(t *testing.T) {
	needGPU(t)
	tokens := 200_000
	if testEmulated || testing.Short() {
		tokens = 3000
	}
	c := drawCorpus(t, 500, tokens, 60, 1)
	cfg := DefaultConfig()
	cfg.Dim, cfg.Negatives, cfg.TableSize, cfg.Seed, cfg.Sample = 32, 7, 100_000, 0x1234_5678_9abc_def0, 1e-2
	tr, err := NewTrainer(context.Background(), c, cfg, gpuDeviceForTest())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tr.Close(); err != nil {
			t.Error(err)
		}
	}()
	g := tr.eng.(*gpuEngine)
	lo, hi, e := 3, c.Sentences(), 2
	if err := g.dev.Upload(g.kept, make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	if err := g.draw(e, lo, hi); err != nil {
		t.Fatal(err)
	}
	n := cfg.Negatives
	raw := int(c.starts[hi] - c.starts[lo])
	tok, neg, lens, kept := make([]int32, raw), make([]int32, raw*n), make([]int32, hi-lo), make([]uint64, 1)
	for _, dl := range []struct {
		dst []byte
		src gpuBuffer
	}{{kernels.Bytes(tok), g.tok}, {kernels.Bytes(neg), g.neg}, {kernels.Bytes(lens), g.lens}, {kernels.Bytes(kept), g.kept}} {
		if err := g.dev.Download(dl.dst, dl.src); err != nil {
			t.Fatal(err)
		}
	}
	wantTok, wantNeg := make([]int32, DefaultMaxSentence), make([]int32, DefaultMaxSentence*n)
	var sum, dropped int
	for i := lo; i < hi; i++ {
		k := tr.s.prepare(e, c.starts[i], c.Sentence(i), wantTok, wantNeg)
		at := int(c.starts[i] - c.starts[lo])
		if int(lens[i-lo]) != k || !slices.Equal(tok[at:at+k], wantTok[:k]) || !slices.Equal(neg[at*n:(at+k)*n], wantNeg[:k*n]) {
			t.Fatalf("sentence %d: the GPU kept %d tokens %v with negatives %v; Go keeps %d: %v with %v", i, lens[i-lo],
				tok[at:at+int(lens[i-lo])], neg[at*n:(at+int(lens[i-lo]))*n], k, wantTok[:k], wantNeg[:k*n])
		}
		sum += k
		dropped += len(c.Sentence(i)) - k
	}
	if int(kept[0]) != sum {
		t.Errorf("the GPU counted %d kept tokens, its sentences hold %d", kept[0], sum)
	}
	if dropped == 0 || sum == 0 {
		t.Errorf("kept %d, dropped %d: the check needs both", sum, dropped)
	}
	t.Logf("%d sentences: %d tokens kept, %d dropped, identical on the GPU", hi-lo, sum, dropped)
}

// TestGPUMatchesCPUWholeTraining is the end-to-end reference check: the
// whole trainer (draws on the GPU, learning rates, several epochs and
// launches), one sentence at a time, ends with the weights of the
// deterministic Go trainer.
func TestGPUMatchesCPUWholeTraining(t *testing.T) {
	needGPU(t)
	// Negative dimensions: fresh contexts.
	tokens, dims := 60_000, []int{100, 300, -100, -300}
	if testing.Short() {
		// The block kernel (d=300) under racecheck is too slow for this.
		tokens, dims = 1500, []int{100, -100}
	}
	if testEmulated {
		tokens, dims = 600, []int{33, -33}
	}
	for _, dim := range dims {
		fresh := dim < 0
		dim := max(dim, -dim)
		t.Run(fmt.Sprintf("d=%d/fresh=%v", dim, fresh), func(t *testing.T) {
			c := drawCorpus(t, 300, tokens, 40, uint64(dim))
			cfg := DefaultConfig()
			cfg.Dim, cfg.Epochs, cfg.TableSize, cfg.Sample, cfg.Seed, cfg.Fresh = dim, 2, 50_000, 1e-2, 7, fresh
			dev := gpuDeviceForTest()
			dev.sequential = true
			dev.BatchTokens = tokens / 3 // several launches per epoch
			gpu, err := NewTrainer(context.Background(), c, cfg, dev)
			if err != nil {
				t.Fatal(err)
			}
			defer gpu.Close()
			st, err := gpu.Train(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got0, got1, err := gpu.eng.(*gpuEngine).weights()
			if err != nil {
				t.Fatal(err)
			}
			cpu, err := NewTrainer(context.Background(), c, cfg, CPU(1))
			if err != nil {
				t.Fatal(err)
			}
			cst, err := cpu.Train(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			m := cpu.eng.(*cpuEngine).m
			if st.Kept != cst.Kept {
				t.Errorf("the GPU trained %d tokens, the CPU %d", st.Kept, cst.Kept)
			}
			compareModels(t, "whole training, one sentence at a time", got0, got1, m.syn0, m.syn1, 1e-4)
		})
	}
}
