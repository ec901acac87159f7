package tune

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// TPEMethod is Bayesian optimisation from scratch: the tree-structured
// Parzen estimator (Bergstra et al., "Algorithms for Hyper-Parameter
// Optimization", NIPS 2011) with optuna's and goptuna's independent
// sampler's defaults: 10 random start-up evaluations, then per parameter
// the best γ(n) = min(⌈0.1 n⌉, 25) evaluations form the density l and the
// rest g, each a Parzen estimator with a prior; 24 candidates are drawn
// from l and the one with the largest l/g is proposed.
//
// It is written here rather than taken from goptuna (v0.9.0), whose TPE
// draws its mixture components from math/rand's global, randomly seeded
// source (internal/random.ArgMaxMultinomial), so one seed did not give one
// search. Everything here draws from the method's own seeded source and
// iterates slices only: one seed, one search.
type TPEMethod struct {
	space    *Space
	task     Task
	maximize bool
	r        *rand.Rand
	obs      []tpeObservation // told evaluations, in order
	seen     map[string]bool
	fallback *RandomMethod
}

type tpeObservation struct {
	config Config
	loss   float64 // the objective, negated when maximising
}

// The estimator's settings, optuna's and goptuna's defaults.
const (
	tpeStartup     = 10
	tpeCandidates  = 24
	tpePriorWeight = 1.0
)

// tpeGamma is how many of n evaluations form the good density l.
func tpeGamma(n int) int { return min(int(math.Ceil(0.1*float64(n))), 25) }

// tpeWeights are the weights of n observations in evaluation order: the
// last 25 weigh 1, older ones ramp down linearly towards 1/n.
func tpeWeights(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	if ramp := n - 25; ramp > 0 {
		for i := 0; i < ramp; i++ {
			if ramp == 1 {
				w[i] = 1 / float64(n)
				continue
			}
			w[i] = 1/float64(n) + (1-1/float64(n))*float64(i)/float64(ramp-1)
		}
	}
	return w
}

// NewTPEMethod returns TPE for a task; maximize says a larger objective is better.
func NewTPEMethod(s *Space, t Task, maximize bool, seed uint64) (*TPEMethod, error) {
	return &TPEMethod{space: s, task: t, maximize: maximize,
		r:    rand.New(rand.NewPCG(seed, 0xbb67ae8584caa73b)),
		seen: map[string]bool{}, fallback: NewRandomMethod(s, t, seed)}, nil
}

// Name is "tpe".
func (m *TPEMethod) Name() string { return "tpe" }

// Next proposes a configuration. An infeasible or repeated proposal is
// drawn again; after 100 such in a row, a random new configuration stands
// in, so the method never stalls.
func (m *TPEMethod) Next() (Config, error) {
	for try := 0; try < 100; try++ {
		c := m.propose()
		k := c.Key()
		if m.seen[k] || m.space.Feasible(c, m.task) != nil {
			continue
		}
		m.seen[k] = true
		m.fallback.seen[k] = true
		return c, nil
	}
	c, err := m.fallback.Next()
	if err != nil {
		return nil, fmt.Errorf("tpe: %w", err)
	}
	m.seen[c.Key()] = true
	return c, nil
}

// propose samples every parameter independently, as the independent TPE
// does: categoricals and booleans as categories, integer ranges and
// ordinals as quantised numbers over their level indices.
func (m *TPEMethod) propose() Config {
	c := make(Config, len(m.space.Params))
	if len(m.obs) < tpeStartup {
		for i, p := range m.space.Params {
			c[i] = m.r.IntN(len(p.Levels))
		}
		return c
	}
	below, above := m.split()
	for i, p := range m.space.Params {
		lb, la := levelsOf(m.obs, below, i), levelsOf(m.obs, above, i)
		if p.Kind == Categorical || p.Kind == Bool {
			c[i] = m.categorical(len(p.Levels), lb, la)
		} else {
			c[i] = m.numeric(len(p.Levels), lb, la)
		}
	}
	return c
}

// split ranks the observations by loss (ties in evaluation order) and
// returns the indices of the best γ(n) and of the rest, each in evaluation
// order (the weights depend on it).
func (m *TPEMethod) split() (below, above []int) {
	idx := make([]int, len(m.obs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return m.obs[idx[a]].loss < m.obs[idx[b]].loss })
	nb := tpeGamma(len(idx))
	below, above = append([]int(nil), idx[:nb]...), append([]int(nil), idx[nb:]...)
	sort.Ints(below)
	sort.Ints(above)
	return below, above
}

func levelsOf(obs []tpeObservation, idx []int, param int) []float64 {
	out := make([]float64, len(idx))
	for i, j := range idx {
		out[i] = float64(obs[j].config[param])
	}
	return out
}

// categorical draws candidates from the good observations' weighted
// frequencies (plus the prior's weight on every level) and returns the one
// with the largest ratio to the bad observations'.
func (m *TPEMethod) categorical(levels int, below, above []float64) int {
	pl, pg := catProbs(levels, below), catProbs(levels, above)
	best, bestScore := 0, math.Inf(-1)
	for k := 0; k < tpeCandidates; k++ {
		c := drawIndex(m.r, pl)
		if s := math.Log(pl[c]) - math.Log(pg[c]); s > bestScore {
			best, bestScore = c, s
		}
	}
	return best
}

func catProbs(levels int, x []float64) []float64 {
	p := make([]float64, levels)
	for i := range p {
		p[i] = tpePriorWeight
	}
	for i, w := range tpeWeights(len(x)) {
		p[int(x[i])] += w
	}
	normalise(p)
	return p
}

func normalise(p []float64) {
	s := 0.0
	for _, v := range p {
		s += v
	}
	for i := range p {
		p[i] /= s
	}
}

func drawIndex(r *rand.Rand, p []float64) int {
	u, at := r.Float64(), 0.0
	for i, v := range p {
		at += v
		if u < at {
			return i
		}
	}
	return len(p) - 1
}

// numeric draws candidates from l, the good observations' Parzen
// estimator over [-0.5, levels-0.5], rounds them to a level, and returns
// the one with the largest l/g, each the estimator's mass on the level.
func (m *TPEMethod) numeric(levels int, below, above []float64) int {
	lo, hi := -0.5, float64(levels)-0.5
	l, g := newParzen(below, lo, hi), newParzen(above, lo, hi)
	best, bestScore := 0, math.Inf(-1)
	for k := 0; k < tpeCandidates; k++ {
		x := l.draw(m.r)
		if s := math.Log(l.mass(x)) - math.Log(g.mass(x)); s > bestScore {
			best, bestScore = x, s
		}
	}
	return best
}

// parzen is a mixture of Gaussians truncated to [lo, hi]: one per
// observation and the prior (centred, as wide as the range), each as wide
// as the larger gap to its neighbours, clipped to [(hi-lo)/min(100, 1+k),
// hi-lo] (Bergstra's "magic clip").
type parzen struct {
	lo, hi     float64
	w, mu, sig []float64
	accept     float64 // the mixture's mass inside [lo, hi]
}

func newParzen(x []float64, lo, hi float64) *parzen {
	prior := 0.5 * (lo + hi)
	type comp struct {
		mu, w   float64
		isPrior bool
	}
	comps := []comp{{prior, tpePriorWeight, true}}
	for i, w := range tpeWeights(len(x)) {
		comps = append(comps, comp{x[i], w, false})
	}
	// The prior first among equals, as optuna inserts it before the
	// observations at its position.
	sort.SliceStable(comps, func(a, b int) bool { return comps[a].mu < comps[b].mu })
	p := &parzen{lo: lo, hi: hi}
	priorAt := 0
	for i, c := range comps {
		p.mu, p.w = append(p.mu, c.mu), append(p.w, c.w)
		if c.isPrior {
			priorAt = i
		}
	}
	normalise(p.w)
	n := len(p.mu)
	p.sig = make([]float64, n)
	for i := range p.mu {
		left, right := p.mu[i]-lo, hi-p.mu[i]
		if i > 0 {
			left = p.mu[i] - p.mu[i-1]
		}
		if i < n-1 {
			right = p.mu[i+1] - p.mu[i]
		}
		// Without endpoints: the outermost components take the gap to
		// their one neighbour, not to the bound.
		switch {
		case n == 1:
			p.sig[i] = hi - lo
		case i == 0:
			p.sig[i] = right
		case i == n-1:
			p.sig[i] = left
		default:
			p.sig[i] = math.Max(left, right)
		}
		p.sig[i] = math.Min(math.Max(p.sig[i], (hi-lo)/math.Min(100, 1+float64(n))), hi-lo)
	}
	p.sig[priorAt] = hi - lo
	for i := range p.mu {
		p.accept += p.w[i] * (cdf(hi, p.mu[i], p.sig[i]) - cdf(lo, p.mu[i], p.sig[i]))
	}
	return p
}

func cdf(x, mu, sigma float64) float64 { return distuv.UnitNormal.CDF((x - mu) / sigma) }

// draw samples a level: a component by weight, a value from it inside
// [lo, hi), rounded.
func (p *parzen) draw(r *rand.Rand) int {
	for {
		c := drawIndex(r, p.w)
		x := p.mu[c] + p.sig[c]*r.NormFloat64()
		if x >= p.lo && x < p.hi {
			return int(math.Round(x))
		}
	}
}

// mass is the truncated mixture's probability of level x.
func (p *parzen) mass(x int) float64 {
	a, b := math.Max(float64(x)-0.5, p.lo), math.Min(float64(x)+0.5, p.hi)
	s := 0.0
	for i := range p.mu {
		s += p.w[i] * (cdf(b, p.mu[i], p.sig[i]) - cdf(a, p.mu[i], p.sig[i]))
	}
	return s/p.accept + 1e-12
}

// Tell records a result. A violation is told as the worst value seen, so
// the estimator learns to avoid the region without the objective itself
// being trusted.
func (m *TPEMethod) Tell(c Config, r Result) {
	v := r.Objective
	if r.Violation != "" || math.IsNaN(v) {
		v = m.worst()
	} else if m.maximize {
		v = -v
	}
	m.obs = append(m.obs, tpeObservation{config: append(Config(nil), c...), loss: v})
}

// worst is the largest loss told (0 before any).
func (m *TPEMethod) worst() float64 {
	w := math.NaN()
	for _, o := range m.obs {
		if math.IsNaN(w) || o.loss > w {
			w = o.loss
		}
	}
	if math.IsNaN(w) {
		return 0
	}
	return w
}
