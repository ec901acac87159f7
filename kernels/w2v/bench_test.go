package w2v

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// benchCorpus is text8's vocabulary (71,291 Zipfian words) over fewer
// tokens, so the benchmark's setup stays short.
var benchCorpus = sync.OnceValue(func() *Corpus {
	return Zipf{Words: Text8Words, Tokens: 2_000_000, S: 1, MinCount: 5, Seed: 1}.Generate(DefaultMaxSentence)
})

// BenchmarkCPUTrainer measures the cpu device at the benchmark
// setting (d=128, N=5, W=5, sample 1e-3, sentences of 1000) in words/s as
// word2vec counts them (corpus words per second of training), on one
// goroutine (the deterministic reference) and on every core (Hogwild).
func BenchmarkCPUTrainer(b *testing.B) {
	c := benchCorpus()
	for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			benchTrain(b, c, DefaultConfig(), CPU(threads))
		})
	}
}

// benchTrain trains c b.N times and reports words/s as word2vec counts
// them, over the training's own wall time.
func benchTrain(b *testing.B, c *Corpus, cfg Config, dev Device) {
	tr, err := NewTrainer(context.Background(), c, cfg, dev)
	if err != nil {
		b.Fatal(err)
	}
	var words int64
	var secs float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := tr.Train(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		words += st.Words
		secs += st.Wall.Seconds()
	}
	b.ReportMetric(float64(words)/secs, "words/s")
}

// BenchmarkCPUObjectives compares the Go trainers at the benchmark setting
// (d=128, W=5, sample 1e-3, text8's vocabulary): SGNS, word2vec's SGHS and
// Wombat's batched SGHS and SGNS, on one goroutine and on every core, in
// words/s as word2vec counts them. bench/w2v-cpu.sh prints it as a table.
// W2V_CPU_BENCH_TOKENS sets another corpus length (at least 356,455;
// SGHS on one core takes minutes over the default 2 M tokens).
func BenchmarkCPUObjectives(b *testing.B) {
	c := benchCorpus()
	if n := envInt("W2V_CPU_BENCH_TOKENS", 0); n > 0 {
		c = Zipf{Words: Text8Words, Tokens: int64(n), S: 1, MinCount: 5, Seed: 1}.Generate(DefaultMaxSentence)
	}
	for _, k := range []struct{ objective, kernel string }{
		{ObjectiveNS, KernelAuto}, {ObjectiveNS, KernelWombat}, {ObjectiveHS, KernelAuto}, {ObjectiveHS, KernelWombat},
	} {
		for _, threads := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("objective=%s/kernel=%s/threads=%d", k.objective, k.kernel, threads), func(b *testing.B) {
				cfg := DefaultConfig()
				cfg.Objective, cfg.Kernel = k.objective, k.kernel
				benchTrain(b, c, cfg, CPU(threads))
			})
		}
	}
}

// BenchmarkWombatPlan measures one goroutine assembling Wombat's GPU plans
// (drawing and cutting windows into tiles and pairs) at the benchmark
// setting, in kept tokens a second: on the GPU machine the assembling
// goroutines, not the kernels, bound Wombat's words/s. draws=device is
// negative sampling's plan as the GPU engine assembles it, its negatives
// left to wombat_negatives; draws=host draws them here from the unigram
// table, as the engine did before.
func BenchmarkWombatPlan(b *testing.B) {
	c := benchCorpus()
	for _, bc := range []struct {
		obj      string
		onDevice bool
	}{{ObjectiveNS, false}, {ObjectiveNS, true}, {ObjectiveHS, false}} {
		obj, name := bc.obj, "objective="+bc.obj
		if bc.obj == ObjectiveNS {
			name += map[bool]string{false: "/draws=host", true: "/draws=device"}[bc.onDevice]
		}
		b.Run(name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Objective, cfg.Kernel = obj, KernelWombat
			tr, err := NewTrainer(context.Background(), c, cfg, CPU(1))
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			s, m := tr.s, tr.eng.(*cpuEngine).m
			n, wf := s.negatives(), cfg.WindowFixed()
			sc := newWombatScratch(cfg.Dim, wf, m.wombatOutputs(n))
			p := &wombatPlan{drawOnDevice: bc.onDevice}
			tok, neg := make([]int32, DefaultMaxSentence), make([]int32, DefaultMaxSentence*n)
			var kept, bytes int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := 0; j < c.Sentences(); j++ {
					if j%64 == 0 {
						bytes += 4 * int64(len(p.tiles)+len(p.windows)+len(p.pairs))
						kept += p.kept
						p.reset()
					}
					if j%64 == 0 {
						p.base = c.starts[j]
					}
					var L int
					if p.drawOnDevice {
						L = s.prepareForDevice(0, c.starts[j], p.base, c.Sentence(j), tok, neg)
					} else {
						L = s.prepare(0, c.starts[j], c.Sentence(j), tok, neg)
					}
					p.addSentence(m, tok[:L], neg[:L*n], n, wf, 0.025, sc)
				}
			}
			bytes += 4 * int64(len(p.tiles)+len(p.windows)+len(p.pairs))
			kept += p.kept
			b.ReportMetric(float64(kept)/b.Elapsed().Seconds(), "kept/s")
			b.ReportMetric(float64(bytes)/float64(kept), "B/kept")
		})
	}
}
