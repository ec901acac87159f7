package w2v

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wombatCase is a plan over explicit sentences with random weights (large
// enough that the logistic table's ends and hierarchical softmax's skipped
// pairs are reached), and the trainer whose GPU runs it.
type wombatCase struct {
	cfg        Config
	c          *Corpus
	plan       *wombatPlan
	syn0, syn1 []float32
}

// newWombatCase draws sentences of the given lengths over vocab words
// into a plan for layout. With distinct, a sentence never repeats a word
// and a window's negatives are distinct and not its centre, so no tile
// names a row twice and the GPU's atomics land in one order: the result
// must be the reference's bit for bit in either layout.
func newWombatCase(t *testing.T, cfg Config, layout string, vocab int, lengths []int, distinct bool, seed uint64) wombatCase {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 5))
	counts := map[string]int64{}
	for i := 0; i < vocab; i++ {
		counts[fmt.Sprintf("v%04d", i)] = int64(1 + vocab*vocab/(i+1))
	}
	v := NewVocab(counts, 1, 0)
	var sentences [][]int32
	for _, L := range lengths {
		var s []int32
		if distinct {
			for _, w := range rng.Perm(vocab)[:L] {
				s = append(s, int32(w))
			}
		} else {
			for p := 0; p < L; p++ {
				s = append(s, int32(rng.IntN(vocab)))
			}
		}
		sentences = append(sentences, s)
	}
	c, err := NewCorpus(v, sentences, slices.Max(lengths))
	if err != nil {
		t.Fatal(err)
	}
	wc := wombatCase{cfg: cfg, c: c, plan: &wombatPlan{byWindow: layout != WombatTiles}}
	wc.plan.reset()
	var hs *huffman
	if cfg.HS() {
		if hs, err = newHuffman(v.Counts); err != nil {
			t.Fatal(err)
		}
	}
	lay, _ := cfg.layout()
	m := &model{dim: cfg.Dim, lay: lay, table: newExpTable(), hs: hs, wombat: true}
	n, wf := cfg.Negatives, cfg.WindowFixed()
	if cfg.HS() {
		n = 0
	}
	sc := newWombatScratch(cfg.Dim, wf, m.wombatOutputs(n))
	for _, s := range sentences {
		negs := make([]int32, len(s)*n)
		for w := range s {
			pick := rng.Perm(vocab)
			k := 0
			for _, x := range pick {
				if k == n {
					break
				}
				if distinct && int32(x) == s[w] {
					continue
				}
				negs[w*n+k] = int32(x)
				k++
			}
			if !distinct {
				for j := 0; j < n; j++ {
					negs[w*n+j] = int32(rng.IntN(vocab))
				}
			}
		}
		wc.plan.addSentence(m, s, negs, n, wf, float32(0.02+0.2*rng.Float64()), sc)
	}
	scale := 6 / math.Sqrt(float64(cfg.Dim))
	for i := 0; i < v.Size()*cfg.Dim; i++ {
		wc.syn0 = append(wc.syn0, float32(scale*(rng.Float64()-0.5)))
		wc.syn1 = append(wc.syn1, float32(scale*(rng.Float64()-0.5)))
	}
	return wc
}

func (wc wombatCase) cpu(t *testing.T) (syn0, syn1 []float32) {
	tr, err := NewTrainer(context.Background(), wc.c, wc.cfg, CPU(1))
	if err != nil {
		t.Fatal(err)
	}
	m := tr.eng.(*cpuEngine).m
	m.syn0, m.syn1 = slices.Clone(wc.syn0), slices.Clone(wc.syn1)
	m.trainPlan(wc.plan)
	return m.syn0, m.syn1
}

func (wc wombatCase) gpu(t *testing.T, dev Device) (syn0, syn1 []float32) {
	t.Helper()
	tr, err := NewTrainer(context.Background(), wc.c, wc.cfg, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tr.Close(); err != nil {
			t.Error(err)
		}
	}()
	g := tr.eng.(*wombatEngine)
	if err := g.reset(wc.syn0, wc.syn1); err != nil {
		t.Fatal(err)
	}
	if _, err := g.run(wc.plan); err != nil {
		t.Fatal(err)
	}
	syn0, syn1, err = g.weights()
	if err != nil {
		t.Fatal(err)
	}
	return syn0, syn1
}

// The Wombat kernels against their Go references, one warp at a time, in
// both layouts: a warp per window (trainWindows) bit for bit even where
// words repeat, since a warp adds a window's updates to a row from one lane
// in program order; tiles and pairs (trainPlan) bit for bit where no tile
// names a row twice, and within 1e-4 relative where words repeat (atomics
// to one address from one warp instruction land in the hardware's order).
// For both objectives, windows with fewer and more than 8 contexts (a
// context group's outputs reread after the group before wrote them), paths
// whose length is not a multiple of 4 (the last group's idle rows, or the
// pairs), and dimensions that are and are not multiples of 32.
func TestWombatGPUMatchesPlan(t *testing.T) {
	needGPU(t)
	lengths := []int{1, 2, 3, 7, 12, 30, 60}
	dims := []int{32, 100, 128, 300}
	if testEmulated || testing.Short() {
		lengths, dims = []int{1, 2, 5, 11, 14}, []int{32, 100, 128}
	}
	for _, layout := range []string{WombatWindows, WombatTiles} {
		for _, obj := range []string{ObjectiveHS, ObjectiveNS} {
			for _, dim := range dims {
				for _, window := range []int{5, 16} {
					for _, distinct := range []bool{true, false} {
						cfg := DefaultConfig()
						cfg.Dim, cfg.Window, cfg.Objective, cfg.Kernel = dim, window, obj, KernelWombat
						name := fmt.Sprintf("%s/%s/d=%d/W=%d/distinct=%v", layout, obj, dim, window, distinct)
						t.Run(name, func(t *testing.T) {
							wombatMatchesPlan(t, newWombatCase(t, cfg, layout, 90, lengths, distinct, uint64(dim+window)), layout, distinct)
						})
					}
				}
			}
		}
	}
}

// wombatMatchesPlan trains wc's plan on the GPU one warp at a time in
// layout and compares the weights with its Go reference's: bit for bit
// but for the tiles' repeated words.
func wombatMatchesPlan(t *testing.T, wc wombatCase, layout string, distinct bool) {
	p := wc.plan
	if layout == WombatTiles && (p.ntiles() == 0 || p.npairs() == 0) {
		t.Fatalf("a plan of %v: the case tests only one kernel", p.size())
	}
	if layout == WombatWindows && (p.nwindows() == 0 || p.ntiles() != 0 || p.npairs() != 0) {
		t.Fatalf("a plan by window of %v", p.size())
	}
	want0, want1 := wc.cpu(t)
	dev := gpuDeviceForTest()
	dev.sequential, dev.WombatLayout = true, layout
	got0, got1 := wc.gpu(t, dev)
	switch {
	case distinct || layout == WombatWindows:
		if !slices.Equal(got0, want0) || !slices.Equal(got1, want1) {
			compareModels(t, layout, got0, got1, want0, want1, 0)
		} else {
			t.Logf("%v: bit-identical", p.size())
		}
	default:
		compareModels(t, layout, got0, got1, want0, want1, 1e-4)
	}
	if slices.Equal(want0, wc.syn0) || slices.Equal(want1, wc.syn1) {
		t.Error("training changed nothing: the check would prove nothing")
	}
}

// The plan's cut: a window of k outputs and n contexts gives floor(k/4)
// tiles per group of 8 contexts and (k mod 4)*n pairs.
func TestWombatPlanCutsWindows(t *testing.T) {
	for _, c := range []struct{ k, n, tiles, pairs int }{
		{6, 6, 1, 12}, {4, 8, 1, 0}, {18, 6, 4, 12}, {9, 20, 6, 20}, {3, 5, 0, 15}, {4, 0, 0, 0},
	} {
		p := &wombatPlan{}
		out, codes, ctx := make([]int32, c.k), make([]uint8, c.k), make([]int32, c.n)
		for j := range out {
			out[j], codes[j] = int32(j), uint8(1-j%2)
		}
		for i := range ctx {
			ctx[i] = int32(100 + i)
		}
		p.addWindow(out, codes, ctx, 0.5)
		if p.ntiles() != c.tiles || p.npairs() != c.pairs {
			t.Errorf("k=%d n=%d: %d tiles, %d pairs; want %d, %d", c.k, c.n, p.ntiles(), p.npairs(), c.tiles, c.pairs)
		}
		// Every pair of the window appears once, as a tile's live cell or
		// a pair.
		seen := map[[2]int32]int{}
		for ti := 0; ti < p.ntiles(); ti++ {
			out, bits, ctx, alpha := p.tile(ti)
			for r := 0; r < 4; r++ {
				if want := int32(1 - codes[out[r]]); (bits>>r)&1 != want {
					t.Errorf("k=%d n=%d: tile %d: output %d's label %d, want %d", c.k, c.n, ti, out[r], (bits>>r)&1, want)
				}
				for _, x := range ctx {
					seen[[2]int32{out[r], x}]++
				}
			}
			if alpha != 0.5 {
				t.Errorf("k=%d n=%d: tile %d: alpha %g", c.k, c.n, ti, alpha)
			}
		}
		for q := 0; q < p.npairs(); q++ {
			out, ctx, label, alpha := p.pair(q)
			if want := float32(1 - int(codes[out])); label != want || alpha != 0.5 {
				t.Errorf("k=%d n=%d: pair %d: label %g, alpha %g; want %g, 0.5", c.k, c.n, q, label, alpha, want)
			}
			seen[[2]int32{out, ctx}]++
		}
		if c.n > 0 && len(seen) != c.k*c.n {
			t.Errorf("k=%d n=%d: %d distinct pairs covered, want %d", c.k, c.n, len(seen), c.k*c.n)
		}
		for pr, x := range seen {
			if x != 1 {
				t.Errorf("k=%d n=%d: pair %v trained %d times", c.k, c.n, pr, x)
			}
		}
	}
}

// Wombat on the GPU at full concurrency learns the planted structure for
// both objectives, as the CPU trainers do.
func TestWombatGPUTrainsPlantedStructure(t *testing.T) {
	needGPU(t)
	if testEmulated {
		t.Skip("too slow on the emulated GPU")
	}
	for _, obj := range []string{ObjectiveHS, ObjectiveNS} {
		dev := gpuDeviceForTest()
		dev.WombatConcurrency = 256
		sc, st := trainPlantedWith(t, "planted:tokens=300k,seed=3", dev, obj, KernelWombat)
		t.Logf("%s: purity %.3f, analogies %.3f / %.3f; %.3g words/s", st.Device, sc.ClusterPurity,
			sc.Analogy.AddAccuracy(), sc.Analogy.MulAccuracy(), st.WordsPerS())
		if sc.ClusterPurity < 0.9 || sc.Analogy.AddAccuracy() < 0.8 || sc.Analogy.MulAccuracy() < 0.8 {
			t.Errorf("%s: planted structure not found on the GPU", obj)
		}
		ctl, _ := trainPlantedWith(t, "planted:tokens=300k,seed=3,shuffle=true", dev, obj, KernelWombat)
		if ctl.ClusterPurity > 0.3 || ctl.Analogy.AddAccuracy() > 0.05 {
			t.Errorf("%s: the shuffled control scores above chance on the GPU: purity %.3f, analogies %.3f", obj, ctl.ClusterPurity, ctl.Analogy.AddAccuracy())
		}
	}
}

// TestWombatBenchTable (W2V_BENCH=1 on a GPU machine) prints the issue's
// comparison on the text8-shaped corpus (W2V_BENCH_CORPUS to replace it):
// d=128, W=5, sample 1e-3, one epoch, words/s end to end (medians of
// W2V_BENCH_RUNS runs after a warm-up) and over the kernels' time, for
// FULL-W2V (SGNS, the workload's defaults), Wombat SGNS and SGHS at the
// concurrency bounds W2V_WOMBAT_CONC (default 2048 and 0, all), the
// paper's row (W=8, sample 1e-4, 10 epochs) for Wombat SGHS, and the Go
// trainers (SGNS, SGHS, Wombat's batched SGHS) on every core; then the
// FULL-W2V/Wombat ratio and Wombat SGHS over the Go SGHS (W2V_BENCH_CPU=0
// leaves the Go trainers out). "host wait" is
// the share of the time the loop feeding Wombat's launches waited for a
// plan, "starved" the share of launches queued when the GPU had finished
// every launch before (each then also waits for its copy).
func TestWombatBenchTable(t *testing.T) {
	if os.Getenv("W2V_BENCH") == "" {
		t.Skip("set W2V_BENCH=1 to run the benchmark")
	}
	needGPU(t)
	runs := envInt("W2V_BENCH_RUNS", 3)
	_, c := gpuBenchCorpus(t)
	t.Logf("corpus: %d words, %d tokens, %d sentences", c.Vocab.Size(), c.Tokens(), c.Sentences())
	fmt.Printf("%-28s %-4s %3s %6s %6s %11s %11s %15s %9s %8s\n", "trainer", "obj", "W", "sample", "epochs", "concurrency", "words/s", "kernel words/s", "host wait", "starved")
	rates := map[string]float64{}
	row := func(name string, dev Device, cfg Config, runs int) {
		start := time.Now()
		tr, err := NewTrainer(context.Background(), c, cfg, dev)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if dev.GPU >= 0 {
			if _, err := tr.Train(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		var r, k, w, sv []float64
		for i := 0; i < runs; i++ {
			st, err := tr.Train(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			r = append(r, st.WordsPerS())
			k = append(k, float64(st.Words)/st.Kernel.Seconds())
			w = append(w, st.HostWait.Seconds()/st.Wall.Seconds())
			sv = append(sv, float64(st.Starved)/float64(max(st.Launches, 1)))
		}
		kern, wait, conc, starved := "-", "-", "-", "-"
		if dev.GPU >= 0 {
			kern, wait, conc = fmt.Sprintf("%.1f M", median(k)/1e6), fmt.Sprintf("%.1f%%", 100*median(w)), concurrencyName(dev.Concurrency)
			if cfg.Wombat() {
				conc = concurrencyName(dev.WombatConcurrency)
			}
		}
		if cfg.Kernel == KernelWombat && dev.GPU >= 0 {
			starved = fmt.Sprintf("%.1f%%", 100*median(sv))
		}
		obj := cfg.Objective
		if obj == "" {
			obj = ObjectiveNS
		}
		rates[name+" "+obj] = median(r)
		fmt.Printf("%-28s %-4s %3d %6g %6d %11s %9.2f M %15s %9s %8s   (%v)\n", name, obj, cfg.Window, cfg.Sample, cfg.Epochs, conc, median(r)/1e6, kern, wait, starved,
			time.Since(start).Round(time.Second))
	}
	gpu := gpuDeviceForTest()
	gpu.Concurrency = DefaultConcurrency
	row("gpu full-w2v", gpu, DefaultConfig(), runs)
	// W2V_WOMBAT_LAYOUTS: the layouts to run (windows, the default, or
	// tiles, the paper's; comma-separated).
	layouts := strings.Split(os.Getenv("W2V_WOMBAT_LAYOUTS"), ",")
	if os.Getenv("W2V_WOMBAT_LAYOUTS") == "" {
		layouts = []string{WombatWindows}
	}
	for _, layout := range layouts {
		for _, conc := range envInts("W2V_WOMBAT_CONC", []int{DefaultWombatConcurrency, 0}) {
			for _, obj := range []string{ObjectiveNS, ObjectiveHS} {
				cfg := DefaultConfig()
				cfg.Kernel, cfg.Objective = KernelWombat, obj
				dev := gpu
				dev.WombatConcurrency, dev.WombatLayout = conc, layout
				name := fmt.Sprintf("gpu wombat conc=%s", concurrencyName(conc))
				if layout != WombatWindows {
					name = fmt.Sprintf("gpu wombat %s conc=%s", layout, concurrencyName(conc))
				}
				row(name, dev, cfg, runs)
			}
		}
	}
	// Where the time goes: SGHS with other launch sizes and assembling
	// goroutines (W2V_WOMBAT_BATCH, W2V_WOMBAT_THREADS; none by default).
	for _, b := range envInts("W2V_WOMBAT_BATCH", nil) {
		for _, th := range envInts("W2V_WOMBAT_THREADS", []int{0}) {
			cfg := DefaultConfig()
			cfg.Kernel, cfg.Objective = KernelWombat, ObjectiveHS
			dev := gpu
			dev.WombatConcurrency, dev.BatchTokens, dev.Threads = 0, b, th
			row(fmt.Sprintf("gpu wombat all b=%d t=%d", b, dev.threads()), dev, cfg, runs)
		}
	}
	paper := DefaultConfig()
	paper.Kernel, paper.Objective, paper.Window, paper.Sample, paper.Epochs = KernelWombat, ObjectiveHS, 8, 1e-4, 10
	gpu.WombatConcurrency = DefaultWombatConcurrency
	row("gpu wombat (paper's row)", gpu, paper, 1)
	// Only when W2V_WOMBAT_CONC kept the workload's bound: a ratio to a row
	// not run would print +Inf.
	if w, ok := rates["gpu wombat conc="+concurrencyName(DefaultWombatConcurrency)+" ns"]; ok {
		fmt.Printf("FULL-W2V / Wombat SGNS on this GPU (concurrency %s): %.2f\n", concurrencyName(DefaultWombatConcurrency),
			rates["gpu full-w2v ns"]/w)
	}
	if os.Getenv("W2V_BENCH_CPU") == "0" {
		return // the Go trainers' rows take most of the time
	}
	cpu := CPU(runtime.GOMAXPROCS(0))
	for _, k := range []struct{ obj, kernel string }{{ObjectiveNS, KernelAuto}, {ObjectiveHS, KernelAuto}, {ObjectiveHS, KernelWombat}} {
		cfg := DefaultConfig()
		cfg.Objective, cfg.Kernel = k.obj, k.kernel
		row(fmt.Sprintf("cpu %s (%d cores)", k.kernel, runtime.GOMAXPROCS(0)), cpu, cfg, 1)
	}
	cores := runtime.GOMAXPROCS(0)
	conc := concurrencyName(DefaultWombatConcurrency)
	best := max(rates["gpu wombat conc="+conc+" hs"], rates["gpu wombat conc=all hs"])
	fmt.Printf("Wombat SGHS on this GPU (best bound) / Go SGHS on %d cores: %.1fx; / Go batched SGHS: %.1fx\n", cores,
		best/rates[fmt.Sprintf("cpu auto (%d cores) hs", cores)], best/rates[fmt.Sprintf("cpu wombat (%d cores) hs", cores)])
	fmt.Printf("Go batched SGHS / Go SGHS on %d cores: %.2fx\n", cores,
		rates[fmt.Sprintf("cpu wombat (%d cores) hs", cores)]/rates[fmt.Sprintf("cpu auto (%d cores) hs", cores)])
}

// TestWombatQualityMatchesCPU trains the real-English corpus (W2V_QUALITY,
// from scripts/corpus-english.sh) with W2V_QUALITY_SEEDS seeds (5) for
// W2V_QUALITY_EPOCHS epochs (3) at the benchmark's setting: the CPU
// references (word2vec's SGHS and FULL-W2V's SGNS, every core, Hogwild)
// and Wombat's batched SGHS on the CPU, Wombat SGHS and SGNS on the GPU
// (the workload's bound, DefaultWombatConcurrency windows at once), and
// checks that each Wombat run's range over the seeds on WS-353,
// SimLex-999 and both analogy measures reaches its objective's CPU
// reference's: overlaps it, or lies above it. The GPU runs also train at
// the other bounds in W2V_QUALITY_CONC (comma-separated windows at once,
// 0 for all), named "gpu wombat sghs conc=N" and compared with the
// reference but not checked: how Hogwild's staleness moves the scores.
//
// The CPU runs need no GPU and take most of the time, so they can run
// apart: W2V_QUALITY_RUNS (comma-separated names, default all; "none"
// trains nothing) picks the runs trained, and W2V_QUALITY_SCORES names
// tables this test printed earlier (comma-separated; the committed ones
// are kernels/w2v/testdata/wombat-quality-*.txt) whose rows stand for the
// runs not trained.
func TestWombatQualityMatchesCPU(t *testing.T) {
	path := os.Getenv("W2V_QUALITY")
	if path == "" {
		t.Skip("set W2V_QUALITY to the real-English corpus (scripts/corpus-english.sh)")
	}
	dir := evalDir(t)
	seeds, epochs := envInt("W2V_QUALITY_SEEDS", 5), envInt("W2V_QUALITY_EPOCHS", 3)
	gpu := gpuDeviceForTest()
	gpu.WombatConcurrency = DefaultWombatConcurrency
	cpu := CPU(runtime.GOMAXPROCS(0))
	type run struct {
		name           string
		dev            Device
		objective, krn string
		ref            int  // the CPU reference it is compared with (-1: it is one)
		shown          bool // compared, but not checked
	}
	runs := []run{
		{"cpu sghs", cpu, ObjectiveHS, KernelAuto, -1, false},
		{"cpu sgns", cpu, ObjectiveNS, KernelAuto, -1, false},
		{"cpu wombat sghs", cpu, ObjectiveHS, KernelWombat, 0, false},
		{"gpu wombat sghs", gpu, ObjectiveHS, KernelWombat, 0, false},
		{"gpu wombat sgns", gpu, ObjectiveNS, KernelWombat, 1, false},
	}
	for _, x := range envInts("W2V_QUALITY_CONC", nil) {
		if x == DefaultWombatConcurrency {
			continue
		}
		dev := gpu
		dev.WombatConcurrency = x
		runs = append(runs,
			run{"gpu wombat sghs conc=" + concurrencyName(x), dev, ObjectiveHS, KernelWombat, 0, true},
			run{"gpu wombat sgns conc=" + concurrencyName(x), dev, ObjectiveNS, KernelWombat, 1, true})
	}
	train := make([]bool, len(runs))
	for i, rn := range runs {
		train[i] = os.Getenv("W2V_QUALITY_RUNS") == "" || slices.Contains(strings.Split(os.Getenv("W2V_QUALITY_RUNS"), ","), rn.name)
		if train[i] && rn.dev.GPU >= 0 {
			needGPU(t)
		}
	}
	scores := make([][]qualityScores, len(runs))
	for _, f := range strings.Split(os.Getenv("W2V_QUALITY_SCORES"), ",") {
		if f == "" {
			continue
		}
		recorded, err := readQualityTable(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, rn := range runs {
			if !train[i] && len(recorded[rn.name]) > 0 {
				scores[i] = recorded[rn.name]
				t.Logf("%s: %d seeds' scores from %s", rn.name, len(scores[i]), f)
			}
		}
	}
	var c *Corpus
	if slices.Contains(train, true) {
		var err error
		if c, err = LoadCorpus(path, CorpusOptions{MinCount: 5}); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d words, %d tokens, %d sentences; %d seeds, %d epochs, %d cores", path, c.Vocab.Size(), c.Tokens(), c.Sentences(), seeds, epochs, runtime.GOMAXPROCS(0))
		fmt.Printf("%-16s %4s %9s %7s %10s %8s %8s\n", "trainer", "seed", "words/s", "WS-353", "SimLex-999", "3CosAdd", "3CosMul")
	}
	for seed := 1; seed <= seeds && c != nil; seed++ {
		for i, rn := range runs {
			if !train[i] {
				continue
			}
			cfg := DefaultConfig()
			cfg.Epochs, cfg.Seed, cfg.Objective, cfg.Kernel = epochs, uint64(seed), rn.objective, rn.krn
			q, _, st := trainScored(t, c, cfg, rn.dev, os.DirFS(dir))
			scores[i] = append(scores[i], q)
			fmt.Printf("%-16s %4d %7.2f M %7.3f %10.3f %8.3f %8.3f\n", rn.name, seed, st.WordsPerS()/1e6, q.ws353, q.simlex, q.add, q.mul)
		}
	}
	for m := range qualityNames {
		lo, hi := make([]float64, len(runs)), make([]float64, len(runs))
		for i := range runs {
			var x []float64
			for _, q := range scores[i] {
				x = append(x, q.get(m))
			}
			lo[i], hi[i] = math.NaN(), math.NaN()
			if len(x) > 0 {
				lo[i], hi[i] = slices.Min(x), slices.Max(x)
			}
		}
		for i, rn := range runs {
			k := rn.ref
			if k < 0 || len(scores[i]) == 0 {
				continue
			}
			if len(scores[k]) == 0 {
				t.Errorf("%s: no scores of its reference %s (train it, or name a table of them in W2V_QUALITY_SCORES)", rn.name, runs[k].name)
				continue
			}
			// Reaching the reference's spread is the goal: a range
			// that overlaps it or lies above it.
			ok := lo[k] <= hi[i] && !math.IsNaN(lo[i])
			fmt.Printf("%-10s %-16s [%.3f, %.3f] reaches %s [%.3f, %.3f]: %v\n", qualityNames[m], rn.name, lo[i], hi[i], runs[k].name, lo[k], hi[k], ok)
			if !ok && !rn.shown {
				t.Errorf("%s: %s [%.3f, %.3f] lies below %s [%.3f, %.3f]", qualityNames[m], rn.name, lo[i], hi[i], runs[k].name, lo[k], hi[k])
			}
		}
	}
}

// readQualityTable reads the rows of a table TestWombatQualityMatchesCPU
// printed (trainer name, seed, words/s and "M", then the four scores),
// skipping every other line, into each trainer's scores in seed order.
func readQualityTable(path string) (map[string][]qualityScores, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read quality scores: %w", err)
	}
	out := map[string][]qualityScores{}
	for n, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || f[len(f)-5] != "M" {
			continue
		}
		var v [4]float64
		for j := range v {
			if v[j], err = strconv.ParseFloat(f[len(f)-4+j], 64); err != nil {
				return nil, fmt.Errorf("%s:%d: score %q: %w", path, n+1, f[len(f)-4+j], err)
			}
		}
		name := strings.Join(f[:len(f)-7], " ")
		out[name] = append(out[name], qualityScores{v[0], v[1], v[2], v[3]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no rows of scores", path)
	}
	return out, nil
}

// The plan's outputs (the tree's own slices, or the centre and its
// negatives, with codes) are the window's outputs and labels (1 - code)
// as the CPU's Algorithm 1 lists them.
func TestWombatPlanOutputsMatchWindows(t *testing.T) {
	counts := map[string]int64{}
	for i := 0; i < 300; i++ {
		counts[fmt.Sprintf("v%04d", i)] = int64(1 + 90000/(i+1))
	}
	v := NewVocab(counts, 1, 0)
	hs, err := newHuffman(v.Counts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	toks, negs := make([]int32, 40), make([]int32, 40*5)
	for i := range toks {
		toks[i] = int32(rng.IntN(v.Size()))
	}
	for i := range negs {
		negs[i] = int32(rng.IntN(v.Size()))
	}
	for _, m := range []*model{{hs: hs, wombat: true}, {wombat: true}} {
		n := 5
		if m.hs != nil {
			n = 0
		}
		sc := newWombatScratch(32, 3, m.wombatOutputs(n))
		for w := range toks {
			k := m.outputs(toks, negs, w, n, sc)
			want, label := slices.Clone(sc.out[:k]), slices.Clone(sc.label[:k])
			out, codes := m.planOutputs(toks, negs, w, n, sc)
			if !slices.Equal(out, want) || len(codes) != k {
				t.Fatalf("hs=%v w=%d: outputs %v (%d codes), want %v", m.hs != nil, w, out, len(codes), want)
			}
			for j := range codes {
				if float32(1-int(codes[j])) != label[j] {
					t.Fatalf("hs=%v w=%d: output %d's code %d, its label %g", m.hs != nil, w, j, codes[j], label[j])
				}
			}
		}
	}
}
