package ri

import (
	"context"
	"fmt"
	"testing"
)

// benchCorpus is the synthetic corpus of the CPU benchmarks: 200k tokens of
// a 20k-term Zipf vocabulary, documents of 1000.
func benchCorpus(b *testing.B) *Corpus {
	b.Helper()
	c, err := Zipf{Tokens: 200_000, Vocab: 20_000, S: 1, DocLen: 1000, Seed: 1}.Generate(0)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkCPU times each stage of the benchmark configuration (d=2048, 10
// nonzeros, window 2x5) on the CPU, in tokens/s, for 1 goroutine and for
// GOMAXPROCS.
func BenchmarkCPU(b *testing.B) {
	c := benchCorpus(b)
	ctx := context.Background()
	for _, threads := range []int{1, 0} {
		cfg := DefaultConfig()
		tr, err := NewTrainer(ctx, c, cfg, CPU(threads))
		if err != nil {
			b.Fatal(err)
		}
		e := tr.eng.(*cpuEngine)
		name := fmt.Sprintf("threads=%d", e.threads)
		if _, err := tr.Run(ctx); err != nil {
			b.Fatal(err)
		}
		b.Run("term-vectors/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.termVectors(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.Tokens())*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
		b.Run("retrain/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.retrain(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.Tokens())*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(tr.sh.retrainBytes())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run("normalise/"+name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.normalise(ctx, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.Vocab())*float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
		})
		tr.Close()
	}
}
