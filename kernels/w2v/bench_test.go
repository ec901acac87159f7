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
			cfg := DefaultConfig()
			tr, err := NewTrainer(context.Background(), c, cfg, CPU(threads))
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
		})
	}
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
				tr, err := NewTrainer(context.Background(), c, cfg, CPU(threads))
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
			})
		}
	}
}
