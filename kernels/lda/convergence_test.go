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

func TestConvergenceExplore(t *testing.T) {
	c := synthetic(t, "tiny", nil)
	cfg := Config{Topics: c.Truth.Topics, Alpha: 0.1, Beta: 0.01, Seed: 3}
	e := newEngine(t, c, cfg, Options{Threads: 2})
	dt := docTerms(e.l, cfg.Alpha)
	for it := 1; it <= 200; it++ {
		n := e.step()
		if it%10 == 0 || it < 5 {
			ll := (logLikelihood(e.l, e.c, cfg.Alpha, cfg.Beta, 2)-dt)/float64(c.Tokens())
			t.Logf("it %d ll %.5f shortcut %.3f match %.3f", it, ll, float64(n)/float64(c.Tokens()), matchTopics(learnedTopics(e.l, e.c, cfg.Beta), c.Truth))
		}
	}
	// Control: random topics.
	r := rand.New(rand.NewPCG(9, 9))
	for p := range e.z {
		e.z[p] = uint32(r.IntN(cfg.Topics))
	}
	e.rebuild()
	t.Logf("random: ll %.5f match %.3f", (logLikelihood(e.l, e.c, cfg.Alpha, cfg.Beta, 2)-dt)/float64(c.Tokens()), matchTopics(learnedTopics(e.l, e.c, cfg.Beta), c.Truth))
}
