package lda

import (
	"fmt"
	"testing"
)

// BenchmarkCPUSampler is one iteration (sampling and rebuild) of the Go
// sampler on the medium synthetic corpus (20,000 documents of about 100
// tokens, 20,000 words with a Zipf tail), after 10 warm-up iterations, at
// EZLDA's α = 50/K and β = 0.01; and, as "converged", on the small corpus
// (2,000 documents, 20 true topics) at K=20, α=0.1 after 150 iterations,
// where most tokens take the shortcut. It reports tokens/s, the share of
// tokens the max-topic shortcut decided and the engine's memory.
//
//	go test -run XXX -bench CPUSampler ./kernels/lda
func BenchmarkCPUSampler(b *testing.B) {
	small := synthetic(b, "small", nil)
	for _, two := range []bool{false, true} {
		b.Run(fmt.Sprintf("converged/two-branch=%v", two), func(b *testing.B) {
			e := newEngine(b, small, Config{Topics: 20, Alpha: 0.1, Beta: 0.01, Seed: 1}, Options{TwoBranch: two})
			benchEngine(b, e, small, 150)
		})
	}
	c := synthetic(b, "medium", nil)
	for _, k := range []int{100, 1024} {
		for _, v := range []struct {
			name string
			opt  Options
		}{
			{"ezlda", Options{}},
			{"two-branch", Options{TwoBranch: true}},
			{"dense-W", Options{Format: AllDense}},
			{"static", Options{Static: true}},
		} {
			b.Run(fmt.Sprintf("K=%d/%s", k, v.name), func(b *testing.B) {
				benchEngine(b, newEngine(b, c, DefaultConfig(k), v.opt), c, 10)
			})
		}
	}
}

func benchEngine(b *testing.B, e *cpuEngine, c *Corpus, warm int) {
	for range warm {
		e.step()
	}
	var short int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		short += e.step().shortcuts
	}
	b.ReportMetric(float64(c.Tokens())*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(100*float64(short)/float64(c.Tokens())/float64(b.N), "shortcut_%")
	b.ReportMetric(float64(e.bytes())/(1<<20), "MiB")
}
