package ri

import (
	"context"
	"fmt"
	"github.com/heatsink-hpc/heatsink/kernels/internal/gputest"
	"math"
	"os"
	"slices"
	"sort"
	"testing"
	"time"
)

// retrainRun is a retraining kernel and, for the hot-row kernels, a
// stagger; kernel "" is the engine's choice (hotChoice).
type retrainRun struct {
	kernel  string
	stagger int
}

func (r retrainRun) String() string {
	if r.kernel == "" {
		return "default"
	}
	if r.stagger == 0 {
		return r.kernel
	}
	return fmt.Sprintf("%s/%d", r.kernel, r.stagger)
}

// retrainRuns are the window-context retraining kernels, the reference
// kernel first, the hot-row kernels one slice at a time and with every
// slice at once, and the default choice.
func retrainRuns(d int) []retrainRun {
	runs := []retrainRun{{kernel: "ri_retrain_window"}}
	names := make([]string, 0, len(hotKernels))
	for n := range hotKernels {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		runs = append(runs, retrainRun{n, 1}, retrainRun{n, hotKernels[n].slices(d)})
	}
	return append(runs, retrainRun{kernel: ""})
}

// runRetrain runs one retraining pass of g as r says and returns its
// device time and the retrained vectors.
func runRetrain(t *testing.T, g *gpuEngine, r retrainRun) (time.Duration, []float32) {
	t.Helper()
	ctx := context.Background()
	g.retrainKernel, g.hotStagger = r.kernel, r.stagger
	d, err := g.retrain(ctx)
	if err != nil {
		t.Fatalf("%v: %v", r, err)
	}
	out, err := g.retrained(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return d, out
}

// sameBits reports the first element where a and b differ in their bits,
// or -1.
func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// Every hot-row retraining kernel sums in ri_retrain_window's order, so
// all of them give the same bits, including where the units are sliced,
// the last slice of the vector is part-filled and not every term's row is
// hot.
func TestGPURetrainKernelsAgree(t *testing.T) {
	needGPU(t)
	ctx := context.Background()
	z := Zipf{Tokens: 60_000, Vocab: 3_000, S: 1.1, DocLen: 50, Seed: 5}
	if testing.Short() {
		z.Tokens, z.Vocab = 6_000, 400
	}
	c, err := z.Generate(0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Dim: 1000, Nonzeros: 6, Window: 5, Retrain: 1, Seed: 3, Slice: 64}
	tr, err := NewTrainer(ctx, c, cfg, gpu0(""))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.Run(ctx); err != nil {
		t.Fatal(err)
	}
	g := tr.eng.(*gpuEngine)
	if g.retrainKernel != "" {
		t.Errorf("retraining kernel %s, want the hot-row kernels' choice", g.retrainKernel)
	}
	var want []float32
	for _, r := range retrainRuns(cfg.Dim) {
		_, got := runRetrain(t, g, r)
		if want == nil {
			want = slices.Clone(got)
			continue
		}
		if i := sameBits(got, want); i >= 0 {
			t.Errorf("%v: element %d of %q is %g, ri_retrain_window's %g", r, i%cfg.Dim, c.Terms[i/cfg.Dim], got[i], want[i])
		}
	}
}

// ri.cu is compiled into the emulator by an #include that Go's build cache
// does not see: emu.cpp records its hash instead.
func TestEmulatorStampIsCurrent(t *testing.T) {
	gputest.CheckEmulatorStamp(t, "ri", gputest.KernelSource(t, "ri"), "internal/riemu/emu.cpp", "run go generate ./kernels/ri")
}

// TestGPURetrainKernelTimes (RI_RETRAIN_KERNELS=1) times every retraining
// kernel on the benchmark's corpora and settings (RI_KJV, RI_BENCH_ZIPF),
// GPU only, medians of RI_BENCH_RUNS runs after a warm-up, and checks that
// each gives ri_retrain_window's bits: for choosing the default, and for
// profiling one launch of each under ncu (RI_BENCH_RUNS=1).
func TestGPURetrainKernelTimes(t *testing.T) {
	if os.Getenv("RI_RETRAIN_KERNELS") != "1" {
		t.Skip("set RI_RETRAIN_KERNELS=1 to time the retraining kernels")
	}
	needGPU(t)
	ctx := context.Background()
	var specs []string
	if p := os.Getenv("RI_KJV"); p != "" {
		specs = append(specs, p)
	}
	zipf := os.Getenv("RI_BENCH_ZIPF")
	if zipf == "" {
		zipf = "zipf:tokens=100M,vocab=100k,s=1,doc=1000,seed=1"
	}
	specs = append(specs, zipf)
	runs := envInt("RI_BENCH_RUNS", 5)
	for _, spec := range specs {
		c, err := OpenCorpus(spec, Lines, 0)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTrainer(ctx, c, DefaultConfig(), gpu0(""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Run(ctx); err != nil {
			t.Fatal(err)
		}
		g := tr.eng.(*gpuEngine)
		name, stagger := hotChoice(g.sh.termPlan, g.sh.cfg, max(1, g.dev.Info().SMs), g.sh.pairs)
		fmt.Printf("%s: %d tokens, %d terms, %d pairs, %d units; the default is %v\n", spec, c.Tokens(), c.Vocab(),
			tr.Pairs(), g.sh.termPlan.nunits(), retrainRun{name, stagger})
		var base time.Duration
		var want []float32
		for _, k := range retrainRuns(g.sh.cfg.Dim) {
			var times []time.Duration
			var got []float32
			for r := 0; r <= runs; r++ { // run 0 warms up
				d, out := runRetrain(t, g, k)
				if r > 0 {
					times = append(times, d)
				}
				got = out
			}
			slices.Sort(times)
			med := times[len(times)/2]
			if want == nil {
				want, base = slices.Clone(got), med
			}
			same := "same bits"
			if i := sameBits(got, want); i >= 0 {
				same = fmt.Sprintf("DIFFERS at element %d", i)
				t.Errorf("%s on %s: retrained vectors differ from ri_retrain_window's at element %d", k, spec, i)
			}
			fmt.Printf("  %-20v median %10v (min %10v)  %8.3g tok/s  %5.2fx  %s\n", k, med.Round(time.Microsecond),
				times[0].Round(time.Microsecond), float64(c.Tokens())/med.Seconds(), base.Seconds()/med.Seconds(), same)
		}
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
