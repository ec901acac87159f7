package lda

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// The multi-GPU phase benchmark: where an iteration's time goes on 1, 2,
// 4... GPUs, stage by stage, each stage run alone on every GPU and timed
// by its slowest GPU's events (the host's wall time for the exchange,
// whose copies are ordered with both GPUs' work): the tables (prep), the
// sampling (draw, slowest and fastest GPU), the exchange of topics alone,
// the rebuild's stages whole and, for the shared-out ones, each GPU's
// share (shard); then whole steps, whose copies overlap the work.
//
//	LDA_BENCH=1 lda.test -test.run TestGPUMultiPhases -test.v
//
// Environment: LDA_BENCH_CORPUS and LDA_BENCH_K as TestGPUBenchTable,
// LDA_BENCH_PHASE_GPUS (1,2,4: the GPU counts, those above the machine's
// left out), LDA_BENCH_PHASE_ITERS (10 timed iterations after 5 of
// warm-up, of stages apart and then of whole steps).
func TestGPUMultiPhases(t *testing.T) {
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
	atoi := func(name, s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	k := atoi("LDA_BENCH_K", env("LDA_BENCH_K", "1024"))
	iters := atoi("LDA_BENCH_PHASE_ITERS", env("LDA_BENCH_PHASE_ITERS", "10"))
	spec := env("LDA_BENCH_CORPUS", SyntheticPrefix+"preset=nytimes")
	c, err := OpenCorpus(spec, "", TextOptions{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(k)
	l, err := newLayout(c, k, Hybrid)
	if err != nil {
		t.Fatal(err)
	}
	have := 1
	if testOpen == nil {
		drv, err := cuda.Load()
		if err != nil {
			t.Fatal(err)
		}
		if have, err = drv.DeviceCount(); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("corpus %s: %s, K=%d, %d GPUs on the machine; milliseconds an iteration (mean of %d)\n", spec, c.Describe(), k, have, iters)
	out := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	defer out.Flush()
	fmt.Fprintln(out, "GPUs\tprep\tdraw max\tdraw min\texchange\ttopics\tdense W\tshard\tsparse W\tD\tshard\tstep sample\tstep rebuild\tstep wall\tG tokens/s\tspeed-up\t")
	var one float64
	var first []uint32
	var firstN string
	for _, f := range strings.Split(env("LDA_BENCH_PHASE_GPUS", "1,2,4"), ",") {
		n := atoi("LDA_BENCH_PHASE_GPUS", f)
		if n > have && testOpen == nil {
			fmt.Printf("(%d GPUs: the machine has %d)\n", n, have)
			continue
		}
		ph, z := multiPhases(t, ctx, cfg, l, n, iters)
		if first == nil {
			first = z
		} else if i := firstDiff(z, first); i >= 0 {
			t.Errorf("%d GPUs: after the same iterations, word-major token %d has topic %d, %d with %s GPUs", n, i, z[i], first[i], firstN)
		} else {
			fmt.Printf("(%d GPUs: every topic equals the %s-GPU chain's)\n", n, firstN)
		}
		if firstN == "" {
			firstN = f
		}
		rate := float64(l.n) / ph["step events"].Seconds() / 1e9
		if n == 1 {
			one = rate
		}
		ms := func(name string) string { return fmt.Sprintf("%.3f", 1e3*ph[name].Seconds()) }
		speedup := "-"
		if one > 0 {
			speedup = fmt.Sprintf("%.2fx", rate/one)
		}
		fmt.Fprintf(out, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t\n", n, ms("prep"), ms("draw"), ms("draw min"),
			ms("exchange"), ms("topics"), ms("dense W"), ms("dense W shard"), ms("sparse W"), ms("D"), ms("D shard"),
			ms("step sample"), ms("step rebuild"), ms("step wall"), rate, speedup)
		out.Flush()
	}
}

// multiPhases runs the chain on n GPUs and returns each phase's mean time
// an iteration, and the final topics.
func multiPhases(t *testing.T, ctx context.Context, cfg Config, l *layout, n, iters int) (map[string]time.Duration, []uint32) {
	m, err := newMultiGPU(cfg, l, openTestGPUs(t, n), testBlock)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := m.close(); err != nil {
			t.Error(err)
		}
	}()
	if err := m.initialise(ctx); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := m.step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ph := map[string]time.Duration{}
	// stageOn times f on every GPU: the slowest, and the fastest as
	// name+" min".
	stageOn := func(name string, f func(p int, g *gpuEngine) error) {
		for p, g := range m.parts {
			if err := g.dev.Start(); err != nil {
				t.Fatal(err)
			}
			if err := f(p, g); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		var slow, fast time.Duration
		for p, g := range m.parts {
			d, err := g.dev.Stop()
			if err != nil {
				t.Fatal(err)
			}
			slow = max(slow, d)
			if p == 0 || d < fast {
				fast = d
			}
		}
		ph[name] += slow
		ph[name+" min"] += fast
	}
	for range iters {
		for _, g := range m.parts {
			g.iter++
		}
		stageOn("prep", func(_ int, g *gpuEngine) error { return g.prep() })
		stageOn("draw", func(_ int, g *gpuEngine) error { return g.draw() })
		start := time.Now()
		for p := range m.parts {
			if err := m.gather(p); err != nil {
				t.Fatal(err)
			}
		}
		for _, g := range m.parts {
			if _, err := g.shortcuts(); err != nil { // synchronises
				t.Fatal(err)
			}
		}
		ph["exchange"] += time.Since(start)
		for _, g := range m.parts {
			g.z, g.znew = g.znew, g.z
		}
		// The shared-out stages first, since they leave each GPU's rows
		// whole only for its own share; then every stage whole.
		for i, st := range m.parts[0].rebuildStages(m.shards[0])[:2] {
			stageOn(st.name+" shard", func(p int, g *gpuEngine) error { return g.rebuildStages(m.shards[p])[i].run() })
		}
		for i, st := range m.parts[0].rebuildStages(nil) {
			stageOn(st.name, func(_ int, g *gpuEngine) error { return g.rebuildStages(nil)[i].run() })
		}
	}
	for range iters {
		start := time.Now()
		st, err := m.step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ph["step wall"] += time.Since(start)
		ph["step sample"] += st.sample
		ph["step rebuild"] += st.rebuild
		ph["step events"] += st.sample + st.rebuild
	}
	for name := range ph {
		ph[name] /= time.Duration(iters)
	}
	if err := m.check(ctx); err != nil {
		t.Error(err)
	}
	_, z, err := m.state(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ph, z
}
