package lda

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// The GPU benchmark (bench/lda-gpu.sh runs it on the device machine):
//
//	LDA_BENCH=1 lda.test -test.run TestGPUBenchTable -test.v
//
// Environment: LDA_BENCH_CORPUS (default synthetic:preset=nytimes, the
// NYTimes-shaped corpus; synthetic:preset=nytimes-tenth fits a tighter
// budget), LDA_BENCH_ITERS (100), LDA_BENCH_K (1024), LDA_BENCH_VARIANTS
// (ezlda,two-branch,dense-W), LDA_BENCH_LL_CORPUS (synthetic:preset=medium,
// the corpus of the time-to-threshold comparison), LDA_BENCH_LL_ITERS (60),
// LDA_BENCH_CPU_ITERS (2: CPU iterations timed on the benchmark corpus),
// LDA_BENCH_PARTS (speed,memory,threshold: which of the three below run),
// LDA_BENCH_SHORTCUT (first or after: the one-GPU sampler's shortcut mode
// in every iteration, instead of its choice by the last iteration's share).
//
// It prints:
//  1. tokens/s of each variant over the first LDA_BENCH_ITERS iterations
//     (GPU event time of sampling and rebuild; the log-likelihood, computed
//     every 10 iterations on the GPU, is not counted), by decile, with the
//     shortcut's share, the document topics a token's sampler walks (after
//     the decile's last iteration) and the log-likelihood; the variants'
//     final topics must be identical (they are the same chain);
//  2. device memory of the hybrid and the dense-W samplers at K=1024 and
//     K=16384 for the benchmark corpus (the engine's allocations, which
//     the measured drop in free memory checks at the benchmark's K);
//  3. time to reach the CPU reference's log-likelihood threshold: the CPU
//     (every core) runs LDA_BENCH_LL_ITERS iterations of the LL corpus; the
//     threshold is 99% of its rise from iteration 1; the GPU runs the same
//     chain (its log-likelihood must equal the CPU's at every iteration)
//     until it reaches the threshold.
func TestGPUBenchTable(t *testing.T) {
	if os.Getenv("LDA_BENCH") == "" {
		t.Skip("set LDA_BENCH=1 to run the GPU benchmark")
	}
	needGPU(t)
	ctx := context.Background()
	env := func(name, def string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		return def
	}
	envInt := func(name string, def int) int {
		n, err := strconv.Atoi(env(name, strconv.Itoa(def)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	iters, k := envInt("LDA_BENCH_ITERS", 100), envInt("LDA_BENCH_K", 1024)
	out := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	defer out.Flush()

	start := time.Now()
	c, err := OpenCorpus(env("LDA_BENCH_CORPUS", SyntheticPrefix+"preset=nytimes"), "", TextOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("corpus %s: %s (%.1f s to make), %d CPU cores\n", env("LDA_BENCH_CORPUS", SyntheticPrefix+"preset=nytimes"), c.Describe(), time.Since(start).Seconds(), runtime.NumCPU())

	parts := env("LDA_BENCH_PARTS", "speed,memory,threshold")
	for _, p := range strings.Split(parts, ",") {
		if p != "speed" && p != "memory" && p != "threshold" {
			t.Fatalf("LDA_BENCH_PARTS=%q: no part %q (speed, memory, threshold)", parts, p)
		}
	}
	run := func(part string) bool { return slices.Contains(strings.Split(parts, ","), part) }

	// 1. Throughput of the variants.
	cfg := DefaultConfig(k)
	var finals [][]uint32
	var names []string
	variants := strings.Split(env("LDA_BENCH_VARIANTS", "ezlda,two-branch,dense-W"), ",")
	if !run("speed") {
		variants = nil
	}
	for _, name := range variants {
		opt := map[string]Options{"ezlda": {}, "two-branch": {TwoBranch: true}, "dense-W": {Format: AllDense}, "sparse-W": {Format: AllSparse}}
		o, ok := opt[name]
		if !ok {
			t.Fatalf("LDA_BENCH_VARIANTS: no variant %q", name)
		}
		z, ok := benchVariant(t, ctx, c, cfg, o, name, iters)
		if ok {
			finals, names = append(finals, z), append(names, name)
		}
	}
	for i := 1; i < len(finals); i++ {
		if j := firstDiff(finals[i], finals[0]); j >= 0 {
			t.Errorf("after %d iterations %s and %s differ at word-major token %d", iters, names[i], names[0], j)
		}
	}
	if len(finals) > 1 {
		fmt.Printf("the %d variants' topics after %d iterations are identical\n", len(finals), iters)
	}
	if n := envInt("LDA_BENCH_CPU_ITERS", 2); n > 0 && run("speed") {
		l, err := newLayout(c, k, Hybrid)
		if err != nil {
			t.Fatal(err)
		}
		e := newCPUEngine(cfg, Options{}, l)
		e.initialise()
		start := time.Now()
		for range n {
			e.step()
		}
		el := time.Since(start)
		fmt.Printf("CPU (%d goroutines), iterations 1-%d: %.3g tokens/s\n", e.threadsCount, n, float64(l.n*n)/el.Seconds())
	}

	// 2. Memory.
	if run("memory") {
		benchMemory(t, c, out)
	}

	// 3. Time to the CPU reference's threshold.
	if run("threshold") {
		benchThreshold(t, ctx, env("LDA_BENCH_LL_CORPUS", SyntheticPrefix+"preset=medium"), k, envInt("LDA_BENCH_LL_ITERS", 60))
	}
}

// benchMemory prints the device memory of the hybrid and dense-W samplers
// at K=1024 and K=16384 for corpus c.
func benchMemory(t *testing.T, c *Corpus, out *tabwriter.Writer) {
	sms := 132
	if d, err := openBenchGPU(); err == nil {
		sms = d.Info().SMs
		d.Close()
	}
	fmt.Println("\ndevice memory for this corpus (the engine's allocations):")
	fmt.Fprintln(out, "K\thybrid\tdense-W\tratio\tdense words (hybrid)\t")
	for _, kk := range []int{1024, 16384} {
		var b [2]int64
		var dense int
		for i, f := range []Format{Hybrid, AllDense} {
			l, err := newLayout(c, kk, f)
			if err != nil {
				t.Fatal(err)
			}
			b[i] = gpuBytes(l, sms)
			if f == Hybrid {
				dense = l.dense
			}
		}
		fmt.Fprintf(out, "%d\t%.2f GiB\t%.2f GiB\t%.1fx\t%d\t\n", kk, float64(b[0])/(1<<30), float64(b[1])/(1<<30), float64(b[1])/float64(b[0]), dense)
	}
	out.Flush()
}

// benchVariant runs iters iterations of one variant on GPU 0, prints its
// table and returns the final topics (ok false when it does not fit).
func benchVariant(t *testing.T, ctx context.Context, c *Corpus, cfg Config, opt Options, name string, iters int) ([]uint32, bool) {
	start := time.Now()
	l, err := newLayout(c, cfg.Topics, opt.Format)
	if err != nil {
		t.Fatal(err)
	}
	layoutTime := time.Since(start)
	gpus, _ := strconv.Atoi(os.Getenv("LDA_BENCH_GPUS"))
	var devs []gpuDevice
	if gpus > 1 {
		devs = openTestGPUs(t, gpus)
	} else {
		d, err := openBenchGPU()
		if err != nil {
			t.Fatal(err)
		}
		devs = []gpuDevice{d}
	}
	free0, err := devs[0].MemFree()
	if err != nil {
		t.Fatal(err)
	}
	var g engine
	if len(devs) > 1 {
		m, err := newMultiGPU(cfg, l, devs, testBlock)
		if err != nil {
			fmt.Printf("\n%s at K=%d: %v\n", name, cfg.Topics, err)
			return nil, false
		}
		m.setTwoBranch(opt.TwoBranch)
		g = m
	} else {
		one, err := newGPUEngineOn(cfg, l, devs[0], testBlock)
		if err != nil {
			devs[0].Close()
			fmt.Printf("\n%s at K=%d: %v\n", name, cfg.Topics, err)
			return nil, false
		}
		one.twoBranch = opt.TwoBranch
		switch m := os.Getenv("LDA_BENCH_SHORTCUT"); m {
		case "":
		case "first":
			one.forceShortcut = shortcutFirst
		case "after":
			one.forceShortcut = shortcutAfter
		default:
			t.Fatalf("LDA_BENCH_SHORTCUT=%q: want first or after", m)
		}
		g = one
	}
	defer g.close()
	free1, _ := devs[0].MemFree()
	if err := g.initialise(ctx); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("\n%s at K=%d on %s: %d dense, %d medium, %d small words (%d, %d, %d units); %.2f GiB allocated, free memory of the first GPU dropped %.2f GiB; layout %.1f s\n",
		name, cfg.Topics, g.name(), l.dense, l.medium-l.dense, l.v-l.medium, l.nDenseUnits(), l.nMediumUnits(), l.nSparseUnits(),
		float64(g.bytes())/(1<<30), float64(free0-free1)/(1<<30), layoutTime.Seconds())
	out := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Printf("%.1f %% of tokens have the word and document of the token before them (their sampler reuses its document pass)\n", 100*runShare(l))
	printListShares(l)
	fmt.Fprintln(out, "iterations\ttokens/s\tsample s/it\trebuild s/it\tshortcut %\tdoc topics/token\tloglik/token\t")
	var total, sample, rebuild time.Duration
	var short int64
	var all time.Duration
	lo := 1
	for it := 1; it <= iters; it++ {
		st, err := g.step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total += st.sample + st.rebuild
		all += st.sample + st.rebuild
		sample += st.sample
		rebuild += st.rebuild
		short += st.shortcuts
		if it%10 == 0 || it == iters {
			ll, err := g.logLikelihood(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := docTopicsPerToken(g)
			if err != nil {
				t.Fatal(err)
			}
			n := it - lo + 1
			fmt.Fprintf(out, "%d-%d\t%.3g\t%.4f\t%.4f\t%.1f\t%.1f\t%.4f\t\n", lo, it, float64(l.n*n)/total.Seconds(),
				sample.Seconds()/float64(n), rebuild.Seconds()/float64(n), 100*float64(short)/float64(l.n*n),
				rows, (ll-docTerms(l, cfg.Alpha))/float64(l.n))
			total, sample, rebuild, short, lo = 0, 0, 0, 0, it+1
		}
	}
	fmt.Fprintf(out, "1-%d\t%.3g\t\t\t\t\t\t\n", iters, float64(l.n*iters)/all.Seconds())
	out.Flush()
	if err := g.check(ctx); err != nil {
		t.Errorf("%s: %v", name, err)
	}
	_, z, err := g.state(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return canonical(l, z), true
}

// runShare is the share of word-major tokens with the same word and
// document as the token before them.
func runShare(l *layout) float64 {
	same, w := 0, 0
	for p := 1; p < l.n; p++ {
		for l.wordOff[w+1] <= uint32(p) {
			w++
		}
		if l.wordOff[w] < uint32(p) && l.tokDoc[p] == l.tokDoc[p-1] {
			same++
		}
	}
	return float64(same) / float64(max(l.n, 1))
}

// docTopicsPerToken is the document-row length a token's sampler walks,
// averaged over the tokens: Σ_d L_d·|D[d]| / tokens, from the GPU's rows
// after the last iteration (the first GPU's, which every GPU shares).
func docTopicsPerToken(e engine) (float64, error) {
	var g *gpuEngine
	switch x := e.(type) {
	case *gpuEngine:
		g = x
	case *multiGPU:
		g = x.parts[0]
	default:
		return 0, fmt.Errorf("docTopicsPerToken: %T is not a GPU engine", e)
	}
	l := g.l
	n := make([]uint32, l.d)
	if err := download(g, n, g.dLen); err != nil {
		return 0, err
	}
	sum := 0.0
	for d, m := range n {
		sum += float64(l.docOff[d+1]-l.docOff[d]) * float64(m)
	}
	return sum / float64(max(l.n, 1)), nil
}

// benchThreshold measures the time the CPU and the GPU take to reach the
// CPU's log-likelihood threshold on the corpus spec.
func benchThreshold(t *testing.T, ctx context.Context, spec string, k, iters int) {
	c, err := OpenCorpus(spec, "", TextOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(k)
	l, err := newLayout(c, k, Hybrid)
	if err != nil {
		t.Fatal(err)
	}
	dt := docTerms(l, cfg.Alpha)
	cpu := &cpuDevice{e: newCPUEngine(cfg, Options{}, l)}
	cpu.initialise(ctx)
	var cpuLL []float64
	var cpuTime []time.Duration
	var el time.Duration
	for range iters {
		st, _ := cpu.step(ctx)
		el += st.sample + st.rebuild
		ll, _ := cpu.logLikelihood(ctx)
		cpuLL, cpuTime = append(cpuLL, (ll-dt)/float64(l.n)), append(cpuTime, el)
	}
	threshold := cpuLL[0] + 0.99*(cpuLL[len(cpuLL)-1]-cpuLL[0])
	cpuAt := slices.IndexFunc(cpuLL, func(x float64) bool { return x >= threshold })

	d, err := openBenchGPU()
	if err != nil {
		t.Fatal(err)
	}
	g, err := newGPUEngineOn(cfg, l, d, testBlock)
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	defer g.close()
	if err := g.initialise(ctx); err != nil {
		t.Fatal(err)
	}
	gpuAt, worst := -1, 0.0
	var gel time.Duration
	for it := range iters {
		st, err := g.step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		gel += st.sample + st.rebuild
		ll, err := g.logLikelihood(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ll = (ll - dt) / float64(l.n)
		worst = max(worst, math.Abs(ll-cpuLL[it])/math.Abs(cpuLL[it]))
		if ll >= threshold && gpuAt < 0 {
			gpuAt = it
			fmt.Printf("\ntime to the CPU reference's log-likelihood threshold (corpus %s: %s, K=%d):\n", spec, c.Describe(), k)
			fmt.Printf("  threshold %.4f nats/token (99%% of the CPU's rise from iteration 1, %.4f, to %d, %.4f)\n", threshold, cpuLL[0], iters, cpuLL[len(cpuLL)-1])
			fmt.Printf("  CPU (%d goroutines): iteration %d, %.3f s\n", cpu.e.threadsCount, cpuAt+1, cpuTime[cpuAt].Seconds())
			fmt.Printf("  GPU: iteration %d, %.3f s (sampling and rebuild; %.1fx faster)\n", it+1, gel.Seconds(), cpuTime[cpuAt].Seconds()/gel.Seconds())
		}
	}
	fmt.Printf("  the GPU's log-likelihood is within %.2g (relative) of the CPU's at every iteration\n", worst)
	if gpuAt != cpuAt || !(worst < 1e-9) {
		t.Errorf("the GPU reached the threshold at iteration %d, the CPU at %d; largest relative difference in log-likelihood %.2g", gpuAt+1, cpuAt+1, worst)
	}
}

// openBenchGPU is GPU 0, or the emulator under -tags ldaemu (to try the
// benchmark's code on a tiny corpus).
func openBenchGPU() (gpuDevice, error) {
	if testOpen != nil {
		return testOpen(0)
	}
	return openCUDADevice(0)
}
