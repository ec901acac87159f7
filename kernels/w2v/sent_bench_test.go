package w2v

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkTrainSentence is the arithmetic of one sentence of 1000 kept
// tokens at d=128, N=5, W_f=3 over a small vocabulary (rows in cache):
// the trainer's inner loops without memory misses.
func BenchmarkTrainSentence(b *testing.B) {
	const d, vocab, n, wf, L = 128, 1000, 5, 3, 1000
	cfg := DefaultConfig()
	lay, _ := cfg.layout()
	rng := rand.New(rand.NewPCG(1, 2))
	m := &model{syn0: make([]float32, vocab*d), syn1: make([]float32, vocab*d), dim: d, lay: lay, table: newExpTable()}
	for i := range m.syn0 {
		m.syn0[i] = float32(rng.Float64()-0.5) / d
	}
	toks, negs := make([]int32, L), make([]int32, L*n)
	for i := range toks {
		toks[i] = int32(rng.IntN(vocab))
	}
	for i := range negs {
		negs[i] = int32(rng.IntN(vocab))
	}
	sc := newSentenceScratch(d, wf)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.trainSentence(toks, negs, n, wf, 0.025, sc)
	}
	b.ReportMetric(float64(b.N*L)/b.Elapsed().Seconds(), "kept-words/s")
}
