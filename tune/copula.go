package tune

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/distuv"
)

// Observation is one evaluated configuration of a task.
type Observation struct {
	Task      Task
	Config    Config
	Objective float64
}

// FitOptions say how a copula is fitted.
type FitOptions struct {
	// Quantile is the best share of the observations the copula is fitted on
	// (0.3 by default; the chapter finds that below 0.15 over-specifies).
	Quantile float64
	// Maximize says a larger objective is better (throughput); otherwise
	// smaller is (runtime, energy).
	Maximize bool
	// GC is the copula's variant: its marginals, the order it proposes in,
	// and how it spends a budget its samples cannot fill.
	GC GCOptions
}

// Copula is a Gaussian copula over a space's task features and parameters.
// Parameters that are numbers (integer ranges, ordinals by their rank) have
// truncated Gaussian marginals, booleans and categoricals intervals of (0,1)
// ordered by frequency; task features, which are conditioned on and never
// sampled, have plain Gaussian ones (see fitTask). Every variable maps to a
// standard normal score, and a correlation matrix couples the scores.
type Copula struct {
	space     *Space
	marginals []marginal // task features first, then parameters
	corr      *mat.SymDense
	Fitted    int // observations the copula was fitted on
}

// marginal maps a variable's value (a task feature's number, a parameter's
// level index) to a standard normal score and back.
type marginal interface {
	toNormal(x float64) float64
	fromNormal(z float64) float64
}

// The probability integral transform keeps u inside (eps, 1-eps), as SDV's
// copulas do, so a value at or beyond a bound has a finite score.
const eps = 1e-7

// Fit fits a copula on the best Quantile of the observations.
func Fit(s *Space, obs []Observation, o FitOptions) (*Copula, error) {
	if o.Quantile == 0 {
		o.Quantile = 0.3
	}
	if o.Quantile <= 0 || o.Quantile > 1 {
		return nil, fmt.Errorf("fit copula: quantile %g is not in (0, 1]", o.Quantile)
	}
	top := bestPerTask(s, obs, o.Quantile, o.Maximize)
	if len(top) < 2 {
		return nil, fmt.Errorf("fit copula: %d source observations in the best %g%% of %d; need at least 2", len(top), 100*o.Quantile, len(obs))
	}
	nt, np := len(s.Task), len(s.Params)
	d := nt + np
	cols := make([][]float64, d)
	for j := range cols {
		cols[j] = make([]float64, len(top))
	}
	for i, ob := range top {
		if len(ob.Config) != np {
			return nil, fmt.Errorf("fit copula: observation %d has %d parameters, the space %d", i, len(ob.Config), np)
		}
		for j, f := range s.Task {
			v, ok := ob.Task[f.Name]
			if !ok {
				return nil, fmt.Errorf("fit copula: observation %d has no task feature %s", i, f.Name)
			}
			cols[j][i] = v
		}
		for j, l := range ob.Config {
			cols[nt+j][i] = float64(l)
		}
	}
	c := &Copula{space: s, marginals: make([]marginal, d), Fitted: len(top)}
	for j := range s.Task {
		c.marginals[j] = fitTask(cols[j])
	}
	for j, p := range s.Params {
		x := cols[nt+j]
		switch {
		case p.Kind == Categorical || p.Kind == Bool:
			c.marginals[nt+j] = fitCategorical(x, len(p.Levels))
		case o.GC.Marginals == MarginalsData:
			dmin, dmax := floats(x)
			c.marginals[nt+j] = fitLevels(x, dmin-0.5, dmax+0.5)
		default:
			c.marginals[nt+j] = fitLevels(x, -0.5, float64(len(p.Levels))-0.5)
		}
	}
	z := mat.NewDense(len(top), d, nil)
	for j, m := range c.marginals {
		for i, x := range cols[j] {
			z.Set(i, j, m.toNormal(x))
		}
	}
	c.corr = correlation(z)
	return c, nil
}

// bestPerTask keeps the best share q of each source task's observations:
// objectives of different input scales are not comparable (a small task's
// worst runtime beats a large one's best), so one ranking over all tasks
// would keep only the smallest task and no relation to the task at all.
func bestPerTask(s *Space, obs []Observation, q float64, maximize bool) []Observation {
	groups := map[string][]Observation{}
	var order []string
	for _, ob := range obs {
		var k strings.Builder
		for _, f := range s.Task {
			k.WriteString(strconv.FormatFloat(ob.Task[f.Name], 'g', -1, 64) + ";")
		}
		if _, ok := groups[k.String()]; !ok {
			order = append(order, k.String())
		}
		groups[k.String()] = append(groups[k.String()], ob)
	}
	var top []Observation
	for _, k := range order {
		top = append(top, Best(groups[k], q, maximize)...)
	}
	return top
}

// Best returns the best share q of observations by objective (at least one).
func Best(obs []Observation, q float64, maximize bool) []Observation {
	sorted := append([]Observation(nil), obs...)
	sort.SliceStable(sorted, func(a, b int) bool {
		if maximize {
			return sorted[a].Objective > sorted[b].Objective
		}
		return sorted[a].Objective < sorted[b].Objective
	})
	n := int(math.Ceil(q * float64(len(sorted))))
	if n < 1 && len(sorted) > 0 {
		n = 1
	}
	return sorted[:n]
}

// correlation is the Pearson correlation of the normal scores, with a
// constant column uncorrelated, shrunk towards the identity until it is
// positive definite (few observations of many variables are not).
func correlation(z *mat.Dense) *mat.SymDense {
	_, d := z.Dims()
	c := mat.NewSymDense(d, nil)
	stat.CorrelationMatrix(c, z, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			if v := c.At(i, j); math.IsNaN(v) || i == j {
				c.SetSym(i, j, b2f(i == j))
			}
		}
	}
	var ch mat.Cholesky
	for lambda := 0.0; lambda < 1; lambda = math.Max(2*lambda, 1e-6) {
		s := mat.NewSymDense(d, nil)
		for i := 0; i < d; i++ {
			for j := 0; j <= i; j++ {
				s.SetSym(i, j, (1-lambda)*c.At(i, j)+lambda*b2f(i == j))
			}
		}
		if ch.Factorize(s) {
			return s
		}
	}
	return identity(d)
}

// shrink is (1-lambda) c + lambda I.
func shrink(c *mat.SymDense, lambda float64) *mat.SymDense {
	d := c.SymmetricDim()
	s := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			s.SetSym(i, j, (1-lambda)*c.At(i, j)+lambda*b2f(i == j))
		}
	}
	return s
}

func identity(d int) *mat.SymDense {
	s := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		s.SetSym(i, i, 1)
	}
	return s
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Correlation returns the fitted correlation between two variables by name
// (task features and parameters).
func (c *Copula) Correlation(a, b string) (float64, error) {
	ia, ib := c.index(a), c.index(b)
	if ia < 0 || ib < 0 {
		return 0, fmt.Errorf("correlation %s, %s: no such variable", a, b)
	}
	return c.corr.At(ia, ib), nil
}

func (c *Copula) index(name string) int {
	for i, f := range c.space.Task {
		if f.Name == name {
			return i
		}
	}
	if i := c.space.Param(name); i >= 0 {
		return len(c.space.Task) + i
	}
	return -1
}

// taskMarginal is a task feature's marginal: a Gaussian, not truncated,
// so the normal score (x-μ)/σ is linear in the task value and a task beyond
// the sources continues the line the sources' scores lie on, up to the
// probability integral transform's clamp that every marginal shares
// (Φ⁻¹(1-ε) ≈ 5.2 standard deviations, far beyond any useful transfer).
//
// The chapter's GC (SDV's truncated Gaussian, bounded by the data) maps
// every value at or beyond the largest source task to the same clamped
// score, Φ⁻¹(1-ε) ≈ 5.2 whether the target is 10 % or 10× beyond it, and
// conditioning on that score pushes every correlated parameter to the end
// of its range: an extrapolated task is conditioned on a task that is not
// the one asked for. Truncating at wider declared bounds only moves the
// distortion: the score still runs to infinity at the bound.
type taskMarginal struct {
	mu, sigma float64
	constant  bool // one source task: no relation to the task can be learnt
}

func fitTask(x []float64) *taskMarginal {
	mean, std := stat.PopMeanStdDev(x, nil)
	if std == 0 || math.IsNaN(std) {
		return &taskMarginal{mu: mean, constant: true}
	}
	return &taskMarginal{mu: mean, sigma: std}
}

func (m *taskMarginal) toNormal(x float64) float64 {
	if m.constant {
		return 0
	}
	return distuv.UnitNormal.Quantile(clampU(distuv.UnitNormal.CDF((x - m.mu) / m.sigma)))
}

func (m *taskMarginal) fromNormal(z float64) float64 {
	if m.constant {
		return m.mu
	}
	return m.mu + m.sigma*z
}

// numeric is a Gaussian truncated to [lo, hi] over a parameter's level
// indices, fitted by maximum likelihood. With the chapter's marginals
// (MarginalsSpace) the bounds are half a level beyond the space's first and
// last levels, so every level has mass; with SDV's (MarginalsData) half a
// level beyond the observed levels, so unobserved levels beyond them have
// none.
type numeric struct {
	mu, sigma, lo, hi float64
	plo, phi          float64 // Φ at the standardised bounds
}

func fitLevels(x []float64, lo, hi float64) *numeric {
	m := &numeric{lo: lo, hi: hi}
	mean, std := stat.MeanStdDev(x, nil)
	if std == 0 || math.IsNaN(std) {
		std = (hi - lo) / 4
	}
	nll := func(p []float64) float64 {
		mu, sigma := p[0], math.Exp(p[1])
		z := distuv.UnitNormal
		mass := z.CDF((hi-mu)/sigma) - z.CDF((lo-mu)/sigma)
		if mass <= 1e-300 {
			return math.Inf(1)
		}
		s := float64(len(x)) * (math.Log(sigma) + math.Log(mass))
		for _, v := range x {
			r := (v - mu) / sigma
			s += 0.5 * r * r
		}
		return s
	}
	m.mu, m.sigma = mean, std
	res, err := optimize.Minimize(optimize.Problem{Func: nll}, []float64{mean, math.Log(std)},
		&optimize.Settings{FuncEvaluations: 400}, &optimize.NelderMead{})
	if (err == nil || errors.Is(err, optimize.ErrLinesearcherFailure) || res != nil) && res != nil && !math.IsInf(res.F, 0) && !math.IsNaN(res.F) {
		m.mu, m.sigma = res.X[0], math.Exp(res.X[1])
	}
	// A scale far below the bounds' width gives no mass to most of the
	// range; a floor keeps the marginal usable on degenerate data.
	m.sigma = math.Max(m.sigma, (hi-lo)*1e-3)
	m.plo = distuv.UnitNormal.CDF((lo - m.mu) / m.sigma)
	m.phi = distuv.UnitNormal.CDF((hi - m.mu) / m.sigma)
	return m
}

func floats(x []float64) (min, max float64) {
	min, max = math.Inf(1), math.Inf(-1)
	for _, v := range x {
		min, max = math.Min(min, v), math.Max(max, v)
	}
	return min, max
}

func clampU(u float64) float64 { return math.Min(math.Max(u, eps), 1-eps) }

func (m *numeric) toNormal(x float64) float64 {
	u := (distuv.UnitNormal.CDF((x-m.mu)/m.sigma) - m.plo) / (m.phi - m.plo)
	return distuv.UnitNormal.Quantile(clampU(u))
}

func (m *numeric) fromNormal(z float64) float64 {
	u := distuv.UnitNormal.CDF(z)
	x := m.mu + m.sigma*distuv.UnitNormal.Quantile(clampU(m.plo+u*(m.phi-m.plo)))
	x = math.Round(math.Min(math.Max(x, m.lo), m.hi))
	return math.Min(math.Max(x, math.Ceil(m.lo)), math.Floor(m.hi))
}

// categorical gives each observed level an interval of (0,1) as wide as its
// frequency, most frequent first; a level never observed has none and is
// never generated.
type categorical struct {
	order []int     // level indices, most frequent first
	start []float64 // interval starts, in order; the last ends at 1
	mid   map[int]float64
}

func fitCategorical(x []float64, levels int) *categorical {
	count := make([]int, levels)
	for _, v := range x {
		count[int(v)]++
	}
	m := &categorical{mid: map[int]float64{}}
	for l := range count {
		if count[l] > 0 {
			m.order = append(m.order, l)
		}
	}
	sort.SliceStable(m.order, func(a, b int) bool { return count[m.order[a]] > count[m.order[b]] })
	at := 0.0
	for _, l := range m.order {
		w := float64(count[l]) / float64(len(x))
		m.start = append(m.start, at)
		m.mid[l] = at + w/2
		at += w
	}
	return m
}

func (m *categorical) toNormal(x float64) float64 {
	u, ok := m.mid[int(x)]
	if !ok {
		u = 1 - eps
	}
	return distuv.UnitNormal.Quantile(clampU(u))
}

func (m *categorical) fromNormal(z float64) float64 {
	u := distuv.UnitNormal.CDF(z)
	i := sort.SearchFloat64s(m.start, u)
	if i == len(m.start) || m.start[i] > u {
		i--
	}
	return float64(m.order[max(i, 0)])
}

// Sampler draws configurations from a copula conditioned on one task.
type Sampler struct {
	c     *Copula
	task  Task
	dist  *distmv.Normal
	z     []float64
	Stats SampleStats
}

// SampleStats counts what conditional sampling drew and rejected.
type SampleStats struct {
	Drawn, Duplicates, Infeasible int
}

// String reads as a sentence's aside: "23367 drawn, 23359 duplicates, 0 infeasible".
func (s SampleStats) String() string {
	return fmt.Sprintf("%d drawn, %d duplicates, %d infeasible", s.Drawn, s.Duplicates, s.Infeasible)
}

// Condition returns a sampler of configurations for the task: the copula's
// normal conditioned on the task's feature scores (gonum's
// distmv.Normal.ConditionNormal), so no sample is for another task.
func (c *Copula) Condition(t Task, seed uint64) (*Sampler, error) {
	nt := len(c.space.Task)
	obs := make([]int, nt)
	vals := make([]float64, nt)
	for i, f := range c.space.Task {
		v, ok := t[f.Name]
		if !ok {
			return nil, fmt.Errorf("condition copula: the task has no value for %s", f.Name)
		}
		if v < f.Min || v > f.Max {
			return nil, fmt.Errorf("condition copula: task %s=%g is outside the space's range [%g, %g]", f.Name, v, f.Min, f.Max)
		}
		obs[i], vals[i] = i, c.marginals[i].toNormal(v)
	}
	src := rand.NewPCG(seed, 0x2545f4914f6cdd1d)
	// A correlation fitted on few observations of many variables can be
	// positive definite and still leave a conditional covariance that is
	// not (numerically): it is shrunk towards the identity until the
	// conditional normal exists, as correlation() does for the joint one.
	var dist *distmv.Normal
	for _, lambda := range []float64{0, 1e-6, 1e-4, 1e-2, 0.1, 0.3, 1} {
		corr := shrink(c.corr, lambda)
		full, ok := distmv.NewNormal(make([]float64, corr.SymmetricDim()), corr, src)
		if !ok {
			continue
		}
		if nt == 0 {
			dist = full
			break
		}
		if d, ok := full.ConditionNormal(obs, vals, src); ok {
			dist = d
			break
		}
	}
	if dist == nil {
		return nil, errors.New("condition copula: the conditional normal is degenerate even with the correlation shrunk to the identity")
	}
	return &Sampler{c: c, task: t, dist: dist, z: make([]float64, len(c.space.Params))}, nil
}

// Draw returns one configuration, possibly a duplicate or infeasible.
func (s *Sampler) Draw() Config {
	s.dist.Rand(s.z)
	nt := len(s.c.space.Task)
	cfg := make(Config, len(s.z))
	for j, z := range s.z {
		cfg[j] = int(s.c.marginals[nt+j].fromNormal(z))
	}
	s.Stats.Drawn++
	return cfg
}

// Unique draws until it has n configurations that are feasible and not in
// seen (which it extends), or maxDraws draws are spent.
func (s *Sampler) Unique(n int, seen map[string]bool, maxDraws int) []Config {
	var out []Config
	for d := 0; len(out) < n && d < maxDraws; d++ {
		cfg := s.Draw()
		k := cfg.Key()
		if seen[k] {
			s.Stats.Duplicates++
			continue
		}
		if s.c.space.Feasible(cfg, s.task) != nil {
			s.Stats.Infeasible++
			continue
		}
		seen[k] = true
		out = append(out, cfg)
	}
	return out
}

// Reachable estimates the size of the copula's space for the task: the
// number of distinct feasible configurations among draws samples (the
// chapter draws as many as the space is large).
func (s *Sampler) Reachable(draws int) int {
	seen := map[string]bool{}
	n := 0
	for i := 0; i < draws; i++ {
		cfg := s.Draw()
		k := cfg.Key()
		if seen[k] {
			continue
		}
		seen[k] = true
		if s.c.space.Feasible(cfg, s.task) == nil {
			n++
		}
	}
	return n
}

// rng is the seeded source the baselines use.
func rng(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }
