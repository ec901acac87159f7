package ri

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/stream"
)

// TestGPUBenchTable is the device benchmark bench/ri-gpu.sh runs (set
// RI_BENCH=1): on the King James Bible (RI_KJV) and a synthetic Zipf corpus
// (RI_BENCH_ZIPF, default 100M tokens), with d=2048, 10 nonzeros and a
// window of 5 either side, it times every stage on the GPU (the three
// term-vector kernels) and on the CPU with every core, checks that they
// agree, measures STREAM triad on the same GPU, and prints a table of
// tokens/s, speedups and retraining's effective bandwidth against the
// issue's goals. GPU times are medians of RI_BENCH_RUNS runs (default 5)
// after a warm-up; CPU times the median of RI_BENCH_CPU_RUNS (default 3 on
// the KJV, 1 on the synthetic corpus).
func TestGPUBenchTable(t *testing.T) {
	if os.Getenv("RI_BENCH") != "1" {
		t.Skip("set RI_BENCH=1 (bench/ri-gpu.sh does) to run the device benchmark")
	}
	needGPU(t)
	triad := math.NaN()
	if testOpen == nil { // under emulation the table's code runs without STREAM
		triad = measureTriad(t)
	}
	fmt.Printf("\nSTREAM triad (stream.Workload, 3 x 1 GiB FP64 arrays, best of 3 iterations): %.3f TB/s\n", triad/1e12)
	fmt.Printf("CPU: %d goroutines (GOMAXPROCS) on %d logical CPUs\n\n", runtime.GOMAXPROCS(0), runtime.NumCPU())

	type source struct {
		name, spec string
		cpuRuns    int
	}
	var sources []source
	if p := os.Getenv("RI_KJV"); p != "" {
		sources = append(sources, source{"kjv", p, envInt("RI_BENCH_CPU_RUNS", 3)})
	}
	zipf := os.Getenv("RI_BENCH_ZIPF")
	if zipf == "" {
		zipf = "zipf:tokens=100M,vocab=100k,s=1,doc=1000,seed=1"
	}
	sources = append(sources, source{"zipf", zipf, envInt("RI_BENCH_CPU_RUNS", 1)})
	gpuRuns := envInt("RI_BENCH_RUNS", 5)

	fmt.Printf("%-5s %-13s %-20s %11s %13s %9s  %s\n", "DATA", "STAGE", "DEVICE", "TIME", "RATE", "SPEEDUP", "GOAL")
	for _, src := range sources {
		t0 := time.Now()
		c, err := OpenCorpus(src.spec, Lines, 0)
		if err != nil {
			t.Fatal(err)
		}
		load := time.Since(t0)
		cfg := DefaultConfig()
		fmt.Printf("%-5s %d tokens, %d terms, %d documents (read or generated in %v)\n", src.name, c.Tokens(), c.Vocab(), c.Docs(), load.Round(time.Millisecond))

		gpu := benchRuns(t, c, cfg, gpu0(KernelWarp), gpuRuns, true)
		tvOnly := Config{Dim: cfg.Dim, Nonzeros: cfg.Nonzeros, Window: cfg.Window, Seed: cfg.Seed, Slice: cfg.Slice}
		block := benchRuns(t, c, tvOnly, gpu0(KernelBlock), gpuRuns, true)
		thread := benchRuns(t, c, tvOnly, gpu0(KernelThread), gpuRuns, true)
		cpu := benchRuns(t, c, cfg, CPU(0), src.cpuRuns, false)

		// Agreement, from the last runs' results.
		if i := firstDiff(gpu.ints, cpu.ints); i >= 0 {
			t.Errorf("%s: term vectors differ at element %d: GPU %d, CPU %d", src.name, i, gpu.ints[i], cpu.ints[i])
		}
		for name, r := range map[string]benchResult{"block": block, "thread": thread} {
			if i := firstDiff(r.ints, cpu.ints); i >= 0 {
				t.Errorf("%s: %s kernel's term vectors differ at element %d", src.name, name, i)
			}
		}
		compareFloats(t, src.name+" retrained", c, cfg.Dim, gpu.retrained, cpu.retrained)
		compareFloats(t, src.name+" final", c, cfg.Dim, gpu.vectors, cpu.vectors)

		n := float64(c.Tokens())
		row := func(stage, dev string, d time.Duration, rate string, speedup float64, goal string) {
			sp := ""
			if speedup > 0 {
				sp = fmt.Sprintf("%.1fx", speedup)
			}
			fmt.Printf("%-5s %-13s %-20s %11s %13s %9s  %s\n", src.name, stage, dev, d.Round(time.Microsecond), rate, sp, goal)
		}
		tps := func(d time.Duration) string { return fmt.Sprintf("%.3g tok/s", n/d.Seconds()) }
		verdict := func(v, goal float64) string {
			if v >= goal {
				return "met"
			}
			return "MISSED"
		}
		cpuName := fmt.Sprintf("CPU %d goroutines", runtime.GOMAXPROCS(0))
		su := cpu.tv.Seconds() / min(gpu.tv, block.tv).Seconds()
		row("term vectors", "GPU warp/occurrence", gpu.tv, tps(gpu.tv), cpu.tv.Seconds()/gpu.tv.Seconds(), fmt.Sprintf("best GPU >= 20x: %s", verdict(su, 20)))
		row("term vectors", "GPU thread/occurr.", block.tv, tps(block.tv), cpu.tv.Seconds()/block.tv.Seconds(), "")
		row("term vectors", "GPU thread/slice", thread.tv, tps(thread.tv), cpu.tv.Seconds()/thread.tv.Seconds(), "(the paper's kernel)")
		row("term vectors", cpuName, cpu.tv, tps(cpu.tv), 0, "")
		su = cpu.retrain.Seconds() / gpu.retrain.Seconds()
		row("retrain", "GPU", gpu.retrain, tps(gpu.retrain), su, fmt.Sprintf(">= 50x: %s", verdict(su, 50)))
		row("retrain", cpuName, cpu.retrain, tps(cpu.retrain), 0, "")
		bw := float64(gpu.retrainBytes) / gpu.retrain.Seconds()
		fmt.Printf("%-5s %-13s %-20s %11s %13s %9s  %s\n", src.name, "retrain", "GPU bandwidth", "",
			fmt.Sprintf("%.3g TB/s", bw/1e12), fmt.Sprintf("%.0f%%", 100*bw/triad), fmt.Sprintf("of triad, >= 50%%: %s", verdict(bw/triad, 0.5)))
		row("normalise", "GPU", gpu.norm, fmt.Sprintf("%.3g vec/s", 2*float64(c.Vocab())/gpu.norm.Seconds()), cpu.norm.Seconds()/gpu.norm.Seconds(), "")
		row("normalise", cpuName, cpu.norm, fmt.Sprintf("%.3g vec/s", 2*float64(c.Vocab())/cpu.norm.Seconds()), 0, "")
		row("index", "GPU", gpu.index, fmt.Sprintf("%.3g vec/s", float64(c.Vocab())/gpu.index.Seconds()), cpu.index.Seconds()/gpu.index.Seconds(), "")
		row("setup", "GPU (host + upload)", gpu.setup, "", 0, "")
		row("setup", "CPU (host lists)", cpu.setup, "", 0, "")
		fmt.Println()
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchResult holds a configuration's median stage times and its last
// run's vectors.
type benchResult struct {
	setup, index, tv, retrain, norm time.Duration
	retrainBytes                    int64
	ints                            []int32
	retrained, vectors              []float32
}

// benchRuns runs c under cfg on dev runs times (after a warm-up run when
// warm) and returns the median of each stage's time.
func benchRuns(t *testing.T, c *Corpus, cfg Config, dev Device, runs int, warm bool) benchResult {
	t.Helper()
	ctx := context.Background()
	tr, err := NewTrainer(ctx, c, cfg, dev)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var r benchResult
	r.setup = tr.Setup
	var index, tv, retrain, norm []time.Duration
	if warm {
		if _, err := tr.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < runs; i++ {
		st, err := tr.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		index, tv = append(index, st.Index), append(tv, st.TermVectors)
		retrain, norm = append(retrain, st.Retrain), append(norm, st.Normalise)
		r.retrainBytes = st.RetrainBytes
	}
	med := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	r.index, r.tv, r.retrain, r.norm = med(index), med(tv), med(retrain), med(norm)
	if r.ints, err = tr.TermVectors(ctx); err != nil {
		t.Fatal(err)
	}
	if cfg.Retrain > 0 {
		if r.retrained, err = tr.Retrained(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if r.vectors, err = tr.Vectors(ctx); err != nil {
		t.Fatal(err)
	}
	// Keep the CPU's slices from aliasing its engine after Close.
	r.ints, r.retrained, r.vectors = slices.Clone(r.ints), slices.Clone(r.retrained), slices.Clone(r.vectors)
	return r
}

// measureTriad runs the stream workload's triad on GPU 0 and returns its
// best rate in bytes/s.
func measureTriad(t *testing.T) float64 {
	t.Helper()
	w := stream.Workload{}
	v, err := w.Decode(map[string]string{"device": "0", "array_size": strconv.Itoa(1 << 27), "passes": "20"})
	if err != nil {
		t.Fatal(err)
	}
	job, err := w.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	best := 0.0
	for i := 0; i < 3; i++ {
		res, err := job.Iterate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		best = math.Max(best, res.Metrics["triad_bytes_per_s"])
	}
	if best <= 0 {
		t.Fatal("stream reported no triad rate")
	}
	return best
}
