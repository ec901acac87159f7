package lda

import (
	"math"
	"math/rand/v2"
	"testing"
)

// learnedTopics is each topic's word distribution from the counts, over
// corpus word ids: (W[v][k] + β) / (T[k] + V·β).
func learnedTopics(l *layout, c *counts, beta float64) [][]float64 {
	k := l.k
	out := make([][]float64, k)
	for t := range out {
		out[t] = make([]float64, l.v)
		den := float64(c.t[t]) + float64(l.v)*beta
		for w := range out[t] {
			out[t][w] = beta / den
		}
	}
	for w := 0; w < l.v; w++ {
		o := l.orig[w]
		if w < l.dense {
			for t, n := range c.wd[w*k : (w+1)*k] {
				out[t][o] = (float64(n) + beta) / (float64(c.t[t]) + float64(l.v)*beta)
			}
			continue
		}
		base := l.wordOff[w] - l.sparseBase
		for i := range c.wLen[w] {
			t, n := c.wTop[base+i], c.wCnt[base+i]
			out[t][o] = (float64(n) + beta) / (float64(c.t[t]) + float64(l.v)*beta)
		}
	}
	return out
}

// matchTopics pairs learned topics with the true ones to minimise the
// total L1 distance between their word distributions and returns the
// mean distance of the pairs (0: identical, 2: disjoint).
func matchTopics(learned [][]float64, truth *Truth) float64 {
	k := len(learned)
	v := len(learned[0])
	cost := make([][]float64, k)
	for i := range cost {
		cost[i] = make([]float64, k)
		for j := range k {
			phi := truth.Phi[j*v : (j+1)*v]
			for w := range v {
				cost[i][j] += math.Abs(learned[i][w] - phi[w])
			}
		}
	}
	sum := 0.0
	for i, j := range hungarian(cost) {
		sum += cost[i][j]
	}
	return sum / float64(k)
}

// trainCPU runs iters iterations on the CPU and returns the engine and
// the log-likelihood per token after each.
func trainCPU(t *testing.T, c *Corpus, cfg Config, iters int) (*cpuEngine, []float64) {
	t.Helper()
	e := newEngine(t, c, cfg, Options{Threads: 2})
	dt := docTerms(e.l, cfg.Alpha)
	var ll []float64
	for range iters {
		e.step()
		ll = append(ll, (logLikelihood(e.l, e.c, cfg.Alpha, cfg.Beta, 2)-dt)/float64(c.Tokens()))
	}
	return e, ll
}

// On a corpus sampled from LDA's generative process, the sampler learns
// the topics that generated it: after Hungarian matching, the mean L1
// distance between learned and true word distributions is below 0.2 (it
// is about 0.09; 0 is identical, 2 disjoint), while the same matching
// against topics counted from random assignments, or against the true
// topics of a corpus whose vocabulary was shuffled, stays above 1. The
// log-likelihood rises to a plateau: in the last 30 of 80 iterations it
// moves by less than 1% of its rise.
func TestLearnsTheTrueTopics(t *testing.T) {
	c := synthetic(t, "tiny", nil)
	cfg := Config{Topics: c.Truth.Topics, Alpha: 0.1, Beta: 0.01, Seed: 3}
	e, ll := trainCPU(t, c, cfg, 80)
	learned := matchTopics(learnedTopics(e.l, e.c, cfg.Beta), c.Truth)
	rise := ll[len(ll)-1] - ll[0]
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range ll[50:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	t.Logf("log-likelihood per token: %.4f after 1 iteration, %.4f after %d (plateau within %.4f); matched L1 distance %.3f; %d%% of tokens took the shortcut",
		ll[0], ll[len(ll)-1], len(ll), hi-lo, learned, 100*e.step().shortcuts/int64(c.Tokens()))
	if !(learned < 0.2) {
		t.Errorf("learned topics are %.3f from the true ones (mean L1 after matching), want below 0.2", learned)
	}
	if !(rise > 1) || !(hi-lo < 0.01*rise) {
		t.Errorf("log-likelihood rose by %.4f and moves by %.4f on its plateau: want a rise above 1 nat a token and a plateau within 1%% of it", rise, hi-lo)
	}

	// Negative controls: random topics, and a shuffled vocabulary.
	r := rand.New(rand.NewPCG(9, 9))
	for p := range e.z {
		e.z[p] = uint32(r.IntN(cfg.Topics))
	}
	e.rebuild()
	if d := matchTopics(learnedTopics(e.l, e.c, cfg.Beta), c.Truth); !(d > 1) {
		t.Errorf("topics of random assignments are %.3f from the true ones, want above 1", d)
	}
	perm := r.Perm(c.VocabSize())
	shuffled := &Corpus{Vocab: c.Vocab, DocOff: c.DocOff, Words: make([]uint32, c.Tokens())}
	for i, w := range c.Words {
		shuffled.Words[i] = uint32(perm[w])
	}
	e2, _ := trainCPU(t, shuffled, cfg, 80)
	if d := matchTopics(learnedTopics(e2.l, e2.c, cfg.Beta), c.Truth); !(d > 1) {
		t.Errorf("topics learned from a shuffled vocabulary are %.3f from the true ones, want above 1", d)
	}
}

// The log-likelihood from the engine's sparse counts equals the formula
// of the package comment summed over every word, topic and document of
// the plain sampler's dense counts.
func TestLogLikelihoodIsTheCollapsedJoint(t *testing.T) {
	c := synthetic(t, "tiny", func(s *Synthetic) { s.Docs = 80; s.Zipf = 1 })
	cfg := Config{Topics: 7, Alpha: 0.3, Beta: 0.02, Seed: 5}
	plain := newPlainSampler(cfg, c)
	e := newEngine(t, c, cfg, Options{Threads: 3})
	for range 3 {
		plain.step()
		e.step()
	}
	k, v, d := float64(cfg.Topics), float64(c.VocabSize()), float64(c.Docs())
	want := k*(lgamma(v*cfg.Beta)-v*lgamma(cfg.Beta)) + d*(lgamma(k*cfg.Alpha)-k*lgamma(cfg.Alpha))
	for topic := range cfg.Topics {
		for w := range c.VocabSize() {
			want += lgamma(float64(plain.w[w*cfg.Topics+topic]) + cfg.Beta)
		}
		want -= lgamma(float64(plain.t[topic]) + v*cfg.Beta)
	}
	for doc := range c.Docs() {
		for topic := range cfg.Topics {
			want += lgamma(float64(plain.d[doc*cfg.Topics+topic]) + cfg.Alpha)
		}
		want -= lgamma(float64(c.DocLen(doc)) + k*cfg.Alpha)
	}
	got := logLikelihood(e.l, e.c, cfg.Alpha, cfg.Beta, 3) - docTerms(e.l, cfg.Alpha)
	if rel := math.Abs(got-want) / math.Abs(want); !(rel < 1e-11) {
		t.Errorf("log-likelihood %.12g, the formula gives %.12g", got, want)
	}
}
