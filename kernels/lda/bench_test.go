package lda

import (
	"fmt"
	"testing"
)

// BenchmarkCPUSampler is one iteration (sampling and rebuild) of the Go
// sampler on the medium synthetic corpus (20,000 documents of about 100
// tokens, 20,000 words with a Zipf tail), after 10 warm-up iterations, at
// EZLDA's α = 50/K and β = 0.01. It reports tokens/s and the share of
// tokens the max-topic shortcut decided.
//
//	go test -run XXX -bench CPUSampler ./kernels/lda
func BenchmarkCPUSampler(b *testing.B) {
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
				e := newEngine(b, c, DefaultConfig(k), v.opt)
				for range 10 {
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
			})
		}
	}
}
