package lda

import "math"

// plainSampler is the definition of an iteration computed the slow,
// obvious way: dense W and D, every topic's weight for every token in the
// canonical layout, O(K) per token, one goroutine, tokens in document
// order. It shares only the primitive definitions (phiOf, scaleOf,
// quantPhi, quantAlpha, the draws) with the engines, which must agree
// with it token for token.
type plainSampler struct {
	cfg     Config
	c       *Corpus
	k, v    int
	z       []uint32 // corpus order
	w, d, t []uint32 // W (V×K, corpus word ids), D (docs×K), T
	iter    uint32
}

func newPlainSampler(cfg Config, c *Corpus) *plainSampler {
	k, v := cfg.Topics, c.VocabSize()
	p := &plainSampler{cfg: cfg, c: c, k: k, v: v, z: make([]uint32, c.Tokens()),
		w: make([]uint32, v*k), d: make([]uint32, c.Docs()*k), t: make([]uint32, k)}
	for j := range p.z {
		p.z[j] = initialTopic(cfg.Seed, uint32(j), k)
	}
	p.count()
	return p
}

func (p *plainSampler) count() {
	clear(p.w)
	clear(p.d)
	clear(p.t)
	for doc := 0; doc < p.c.Docs(); doc++ {
		for j := p.c.DocOff[doc]; j < p.c.DocOff[doc+1]; j++ {
			z := int(p.z[j])
			p.w[int(p.c.Words[j])*p.k+z]++
			p.d[doc*p.k+z]++
			p.t[z]++
		}
	}
}

func (p *plainSampler) step() {
	p.iter++
	k, beta, alpha := p.k, p.cfg.Beta, p.cfg.Alpha
	denom := make([]float64, k)
	dmin := math.Inf(1)
	for i := range k {
		denom[i] = float64(p.t[i]) + float64(float64(p.v)*beta)
		dmin = min(dmin, denom[i])
	}
	zmax := phiOf(0, dmin, beta)
	// Each word's φ̂, α parts, shared parts and max topic.
	phihat := make([]uint32, p.v*k)
	apart := make([]uint64, p.v*k)
	gpart := make([]uint64, p.v*k)
	kmax := make([]int, p.v)
	for v := 0; v < p.v; v++ {
		row := p.w[v*k : (v+1)*k]
		best := -1.0
		kmax[v] = -1
		for i, n := range row {
			if n > 0 && phiOf(n, denom[i], beta) > best {
				best, kmax[v] = phiOf(n, denom[i], beta), i
			}
		}
		s := scaleOf(math.Max(best, zmax))
		for i, n := range row {
			phihat[v*k+i] = quantPhi(phiOf(n, denom[i], beta), s)
			apart[v*k+i] = quantAlpha(phiOf(n, denom[i], beta), alpha, s)
			gpart[v*k+i] = quantAlpha(phiOf(0, denom[i], beta), alpha, s)
		}
	}
	znew := make([]uint32, len(p.z))
	weights := make([]uint64, 0, 3*k+1)
	topics := make([]uint32, 0, 3*k+1)
	for doc := 0; doc < p.c.Docs(); doc++ {
		drow := p.d[doc*k : (doc+1)*k]
		for j := p.c.DocOff[doc]; j < p.c.DocOff[doc+1]; j++ {
			v := int(p.c.Words[j])
			ph, a, g, km := phihat[v*k:(v+1)*k], apart[v*k:(v+1)*k], gpart[v*k:(v+1)*k], kmax[v]
			weights, topics = weights[:0], topics[:0]
			add := func(w uint64, t int) { weights, topics = append(weights, w), append(topics, uint32(t)) }
			add(uint64(drow[km])*uint64(ph[km])+a[km]-g[km], km)
			for i := range k {
				if i != km {
					add(uint64(drow[i])*uint64(ph[i]), i)
				}
			}
			for i := range k {
				if i != km {
					add(a[i]-g[i], i)
				}
			}
			for i := range k {
				add(g[i], i)
			}
			total := uint64(0)
			for _, w := range weights {
				total += w
			}
			x := scaleUniform(tokenUniform(p.cfg.Seed, p.iter, j), total)
			for i, w := range weights {
				if x < w {
					znew[j] = topics[i]
					break
				}
				x -= w
			}
		}
	}
	p.z = znew
	p.count()
}
