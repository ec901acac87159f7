package lda

import (
	"math"
	"sync"
)

// lgammaTable caches lnΓ(n + x) - lnΓ(x) for small counts n, which are
// most of them.
type lgammaTable struct {
	x, l0 float64
	tab   []float64
}

func newLgammaTable(x float64, n int) *lgammaTable {
	t := &lgammaTable{x: x, l0: lgamma(x), tab: make([]float64, n)}
	for i := range t.tab {
		t.tab[i] = lgamma(float64(i)+x) - t.l0
	}
	return t
}

// at is lnΓ(n + x) - lnΓ(x).
func (t *lgammaTable) at(n uint32) float64 {
	if int(n) < len(t.tab) {
		return t.tab[n]
	}
	return lgamma(float64(n)+t.x) - t.l0
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// logLikelihood is the collapsed joint log p(w, z) in nats (see the
// package comment) from the counts, less the document-length terms
// (docTerms), which are the same every iteration.
func logLikelihood(l *layout, c *counts, alpha, beta float64, threads int) float64 {
	k := l.k
	wt, dt := newLgammaTable(beta, 1<<12), newLgammaTable(alpha, 1<<12)
	// Each goroutine sums its share in order; the shares are added in
	// order, so the result depends on nothing but the thread count.
	parts := make([]float64, max(threads, 1))
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sum := 0.0
			for w := i * l.v / len(parts); w < (i+1)*l.v/len(parts); w++ {
				if w < l.dense {
					for _, n := range c.wd[w*k : (w+1)*k] {
						if n > 0 {
							sum += wt.at(n)
						}
					}
					continue
				}
				base := l.wordOff[w] - l.sparseBase
				for _, n := range c.wCnt[base : base+c.wLen[w]] {
					sum += wt.at(n)
				}
			}
			for d := i * l.d / len(parts); d < (i+1)*l.d/len(parts); d++ {
				lo := l.docOff[d]
				for _, n := range c.dCnt[lo : lo+c.dLen[d]] {
					sum += dt.at(n)
				}
			}
			parts[i] = sum
		}()
	}
	wg.Wait()
	ll := 0.0
	for _, p := range parts {
		ll += p
	}
	return ll - topicTerms(c.t, l.v, beta)
}

// topicTerms is Σ_k [lnΓ(T[k] + V·β) - lnΓ(V·β)].
func topicTerms(t []uint32, v int, beta float64) float64 {
	vb := float64(v) * beta
	l0, sum := lgamma(vb), 0.0
	for _, n := range t {
		sum += lgamma(float64(n)+vb) - l0
	}
	return sum
}

// docTerms is Σ_d [lnΓ(L_d + K·α) - lnΓ(K·α)], the same every iteration.
func docTerms(l *layout, alpha float64) float64 {
	ka := float64(l.k) * alpha
	t := newLgammaTable(ka, 1<<12)
	sum := 0.0
	for d := 0; d < l.d; d++ {
		sum += t.at(l.docOff[d+1] - l.docOff[d])
	}
	return sum
}
