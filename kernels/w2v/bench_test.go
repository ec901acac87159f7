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
