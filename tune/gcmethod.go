package tune

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Marginals are how the copula's numeric parameters are bounded.
type Marginals string

// The marginal variants (bench/copula.sh compares them).
const (
	// MarginalsSpace is the chapter's: a Gaussian truncated at the space's
	// first and last levels, so every level can be generated.
	MarginalsSpace Marginals = "space"
	// MarginalsData is SDV's: truncated half a level beyond the observed
	// levels, so a level no source's best share holds is never generated.
	MarginalsData Marginals = "data"
)

// Order is the order the copula's configurations are proposed in.
type Order string

// The proposal orders.
const (
	// OrderFrequent proposes the configurations of frequentDraws conditional
	// samples most frequent first: the conditional copula's modes before its
	// tails.
	OrderFrequent Order = "frequent"
	// OrderDrawn proposes samples in the order drawn (the chapter's).
	OrderDrawn Order = "drawn"
)

// Rest is how the copula spends a budget its samples cannot fill.
type Rest string

// The ways to spend the rest of a budget.
const (
	// RestLocal proposes an unevaluated neighbour (one parameter one level
	// away, or another category) of the best evaluation so far, then of the
	// next best, then a random configuration: the search stops only when the
	// whole space is evaluated.
	RestLocal Rest = "local"
	// RestStop stops with ErrExhausted (the chapter's GC).
	RestStop Rest = "stop"
)

// Model is what ranks the neighbourhood search's steps.
type Model string

// The models.
const (
	// ModelQuad is a surrogate regression on every evaluation, the
	// sources' and the task's (see surrogate): its predicted best is
	// proposed after the copula's first sample, and the neighbourhood
	// search takes the unevaluated configuration it predicts best among
	// those that change one or two parameters of the best evaluation, a
	// number by any number of levels. Where the surrogate is not to be
	// trusted (fewer than two evaluations per term, or a leave-one-out
	// R² under 0.5) the search steps as ModelNone's.
	ModelQuad Model = "quad"
	// ModelNone steps one parameter at a time, a number by one level, the
	// parameters taking turns (see CopulaMethod.neighbour).
	ModelNone Model = "none"
)

// GCOptions are the copula's variant. The zero value is the default, chosen
// by bench/copula.sh's table (docs/tune.md).
type GCOptions struct {
	Marginals Marginals
	Order     Order
	Rest      Rest
	// Local, when above 0, is how many of the copula's samples are
	// proposed before the neighbourhood search takes over (see
	// CopulaMethod.neighbour): the copula's samples find the basin, its
	// neighbours refine within it, which the copula cannot: it takes no
	// feedback. The copula's next sample comes in when the search has gone
	// as many evaluations as the space has parameters without improving,
	// or has no step left. -1 is never (the chapter's GC; Rest still
	// applies).
	Local int
	Model Model
}

func (g GCOptions) withDefaults() GCOptions {
	if g.Marginals == "" {
		g.Marginals = MarginalsSpace
	}
	if g.Order == "" {
		g.Order = OrderFrequent
	}
	if g.Rest == "" {
		g.Rest = RestLocal
	}
	if g.Local == 0 {
		g.Local = defaultLocal
	}
	if g.Model == "" {
		g.Model = ModelQuad
	}
	return g
}

// String is the variant as --gc takes it.
func (g GCOptions) String() string {
	g = g.withDefaults()
	return fmt.Sprintf("marginals=%s,order=%s,rest=%s,local=%d,model=%s", g.Marginals, g.Order, g.Rest, g.Local, g.Model)
}

// ParseGCOptions parses --gc values: comma-separated key=value pairs among
// marginals=space|data, order=frequent|drawn, rest=local|stop, local=N,
// model=quad|none.
func ParseGCOptions(specs []string) (GCOptions, error) {
	var g GCOptions
	for _, spec := range specs {
		for _, kv := range strings.Split(spec, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
			ok := false
			switch k {
			case "marginals":
				g.Marginals, ok = Marginals(v), v == string(MarginalsSpace) || v == string(MarginalsData)
			case "order":
				g.Order, ok = Order(v), v == string(OrderFrequent) || v == string(OrderDrawn)
			case "rest":
				g.Rest, ok = Rest(v), v == string(RestLocal) || v == string(RestStop)
			case "model":
				g.Model, ok = Model(v), v == string(ModelQuad) || v == string(ModelNone)
			case "local":
				n, err := strconv.Atoi(v)
				g.Local, ok = n, err == nil && (n > 0 || n == -1)
			}
			if !ok {
				return g, fmt.Errorf("--gc %q: want marginals=space|data, order=frequent|drawn, rest=local|stop, local=N (N > 0, or -1 for never) or model=quad|none", kv)
			}
		}
	}
	return g.withDefaults(), nil
}

// defaultLocal is GCOptions.Local's default, chosen by bench/copula.sh.
const defaultLocal = 3

// maxDraws bounds the draws spent finding one new feasible configuration.
const maxDraws = 10000

// frequentDraws is how many conditional samples OrderFrequent ranks.
const frequentDraws = 2000

// CopulaMethod proposes the copula's conditional samples, then neighbours
// of the best evaluation. The copula itself takes no feedback (the chapter
// finds refitting on its own samples only narrows it); the neighbourhood
// search, after GCOptions.Local proposals or once the copula has nothing
// new, does.
type CopulaMethod struct {
	s        *Sampler
	opt      GCOptions
	maximize bool
	seen     map[string]bool
	queue    []Config       // OrderFrequent's ranked configurations not yet proposed
	count    map[string]int // how often each configuration was drawn in frequentDraws
	dry      bool           // the copula produced nothing new in maxDraws draws
	told     []Observation
	stall    int    // evaluations since the best last improved
	cycle    int    // the parameter the neighbourhood search changes next
	from     Config // the neighbourhood search's last step: from, to
	to       Config
	r        *rand.Rand
	random   *RandomMethod
	task     Task
	sources  []Observation // for the surrogate (ModelQuad)
	model    *surrogate    // fitted on sources and told; nil until needed or where it cannot be
	picked   bool          // the surrogate's predicted best was proposed (or is not to be)
	// FromCopula counts the proposals that came from the copula; the rest
	// came from the neighbourhood search or, once it had none, random.
	FromCopula int
}

// NewCopulaMethod fits a copula on the sources and conditions it on the task.
func NewCopulaMethod(s *Space, sources []Observation, t Task, o FitOptions, seed uint64) (*CopulaMethod, error) {
	o.GC = o.GC.withDefaults()
	c, err := Fit(s, sources, o)
	if err != nil {
		return nil, err
	}
	smp, err := c.Condition(t, seed)
	if err != nil {
		return nil, err
	}
	m := &CopulaMethod{s: smp, opt: o.GC, maximize: o.Maximize, seen: map[string]bool{},
		r: rand.New(rand.NewPCG(seed, 0x3c6ef372fe94f82b)), random: NewRandomMethod(s, t, seed),
		task: t, sources: sources, picked: o.GC.Model != ModelQuad || o.GC.Local < 0}
	if o.GC.Order == OrderFrequent {
		// Drawn order leaves the sampler's stream as the chapter's GC
		// draws it (and its neighbours' ties to chance).
		m.queue, m.count = smp.Ranked(frequentDraws)
	}
	return m, nil
}

// Name is "gc".
func (m *CopulaMethod) Name() string { return "gc" }

// Sampler is the conditioned sampler, for its statistics.
func (m *CopulaMethod) Sampler() *Sampler { return m.s }

// Next proposes the copula's next new feasible configuration, or, after
// GCOptions.Local of those, a neighbour of the best evaluation; when the
// copula has nothing new, the rest of the budget as GCOptions.Rest says.
func (m *CopulaMethod) Next() (Config, error) {
	// A search that went a step per parameter without improving is at a
	// local optimum of the neighbourhood: the copula's next sample follows.
	// After the copula's first sample, the surrogate's predicted best: the
	// copula's mode and the regression's, two guesses that fail apart.
	if !m.picked && m.FromCopula >= 1 {
		m.picked = true
		if c := m.predictedBest(); c != nil {
			return m.propose(c, false), nil
		}
	}
	if m.opt.Local > 0 && m.FromCopula >= m.opt.Local && m.stall < len(m.s.c.space.Params) {
		if c := m.neighbour(); c != nil {
			return m.propose(c, false), nil
		}
	}
	for len(m.queue) > 0 {
		c := m.queue[0]
		m.queue = m.queue[1:]
		if !m.seen[c.Key()] {
			return m.propose(c, true), nil
		}
	}
	if !m.dry {
		if got := m.s.Unique(1, m.seen, maxDraws); len(got) == 1 {
			return m.propose(got[0], true), nil
		}
		m.dry = true
	}
	if m.opt.Rest == RestStop {
		return nil, fmt.Errorf("gc: %w after %d draws (%v): the copula reaches too few configurations; more or more varied source evaluations widen it, or --gc rest=local spends the rest", ErrExhausted, maxDraws, m.s.Stats)
	}
	if c := m.neighbour(); c != nil {
		return m.propose(c, false), nil
	}
	c, err := m.random.Next()
	if err != nil {
		return nil, fmt.Errorf("gc: %w: every feasible configuration is evaluated", ErrExhausted)
	}
	m.seen[c.Key()] = true
	return c, nil
}

func (m *CopulaMethod) propose(c Config, fromCopula bool) Config {
	m.seen[c.Key()] = true
	m.random.seen[c.Key()] = true
	if fromCopula {
		m.FromCopula++
		m.stall = 0
	}
	return c
}

// Tell records the result for the neighbourhood search; the copula ignores it.
func (m *CopulaMethod) Tell(c Config, r Result) {
	if r.Violation != "" || math.IsNaN(r.Objective) {
		m.stall++ // a violation improves nothing, and is never a centre of the search
		return
	}
	if len(m.told) > 0 && !better(r.Objective, Best(m.told, 0, m.maximize)[0].Objective, m.maximize) {
		m.stall++
	} else {
		m.stall = 0
	}
	m.told = append(m.told, Observation{Config: c, Objective: r.Objective})
}

// neighbour is the neighbourhood search's next step, or nil when no
// evaluation has an unevaluated feasible neighbour. A neighbour differs
// from the best evaluation (the next best when it has none) in one
// parameter: a number one level up or down, a category or boolean another.
// When the last step made the best, it is taken again (a tile that grew
// and got faster grows once more); otherwise the parameters take turns (a
// coordinate search: the copula's samples share their categories, and a
// search led by the copula's preferences alone kept them). Within one, a
// number steps the way the evaluations so far improve (slope): the
// copula's samples fall short of an optimum that moves faster than its
// line, and the copula's own preference points back at them. Where the
// evaluations do not say, and for a category, the neighbour the copula
// draws most often goes first.
func (m *CopulaMethod) neighbour() Config {
	ranked := Best(m.told, 1, m.maximize)
	if m.opt.Model == ModelQuad && m.fit() {
		return m.modelStep(ranked)
	}
	if c := m.again(ranked); c != nil {
		return c
	}
	sp := m.s.c.space
	for _, ob := range ranked {
		for k := range sp.Params {
			i := (m.cycle + k) % len(sp.Params)
			cands := m.around(ob.Config, i)
			if len(cands) == 0 {
				continue
			}
			m.r.Shuffle(len(cands), func(a, b int) { cands[a], cands[b] = cands[b], cands[a] })
			sort.SliceStable(cands, func(a, b int) bool { return m.count[cands[a].Key()] > m.count[cands[b].Key()] })
			if numericKind(sp.Params[i].Kind) {
				if up := m.slope(i); up != 0 {
					sort.SliceStable(cands, func(a, b int) bool { return float64(cands[a][i]-cands[b][i])*up > 0 })
				}
			}
			m.cycle, m.from, m.to = i+1, ob.Config, cands[0]
			return cands[0]
		}
	}
	return nil
}

// fit refits the surrogate on the sources and the evaluations so far; false
// where it cannot be fitted or is not to be trusted (too few evaluations
// for its terms, or a poor leave-one-out fit: see fitSurrogate), and the
// search then steps as model=none does.
func (m *CopulaMethod) fit() bool {
	obs := append([]Observation(nil), m.sources...)
	for _, ob := range m.told {
		obs = append(obs, Observation{Task: m.task, Config: ob.Config, Objective: ob.Objective})
	}
	s, err := fitSurrogate(m.s.c.space, obs, len(m.sources), m.maximize)
	if err != nil {
		m.model = nil
		return false
	}
	m.model = s
	return true
}

// modelStep is the unevaluated feasible configuration that changes one or
// two parameters of the best evaluation (the next best where it has none)
// and that the surrogate predicts best, or nil. A number may change by any
// number of levels: where the copula's samples fall several levels short
// of an optimum that moves along a curve, the surrogate's curve reaches it
// in one step, where one level a step did not within the budget.
func (m *CopulaMethod) modelStep(ranked []Observation) Config {
	sp := m.s.c.space
	buf := make([]float64, 0, 64)
	for _, ob := range ranked {
		var best Config
		bestY := math.Inf(1)
		consider := func(c Config) {
			if m.seen[c.Key()] || sp.Feasible(c, m.task) != nil {
				return
			}
			if y := m.model.predict(c, m.task, buf); y < bestY {
				best, bestY = append(Config(nil), c...), y
			}
		}
		c := append(Config(nil), ob.Config...)
		for i, p := range sp.Params {
			for li := range p.Levels {
				if li == ob.Config[i] {
					continue
				}
				c[i] = li
				consider(c)
				for j := i + 1; j < len(sp.Params); j++ {
					for lj := range sp.Params[j].Levels {
						if lj == ob.Config[j] {
							continue
						}
						c[j] = lj
						consider(c)
					}
					c[j] = ob.Config[j]
				}
			}
			c[i] = ob.Config[i]
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// maxEnumerate is the largest space predictedBest walks whole; a larger one
// it searches among the copula's ranked samples.
const maxEnumerate = 50000

// predictedBest is the unevaluated feasible configuration the surrogate,
// fitted on the sources, predicts best for the task, or nil.
func (m *CopulaMethod) predictedBest() Config {
	if !m.fit() {
		return nil
	}
	sp := m.s.c.space
	var best Config
	bestY := math.Inf(1)
	buf := make([]float64, 0, 64)
	consider := func(c Config) bool {
		if !m.seen[c.Key()] {
			if y := m.model.predict(c, m.task, buf); y < bestY {
				best, bestY = c, y
			}
		}
		return true
	}
	if sp.Size() <= maxEnumerate {
		sp.Enumerate(m.task, consider)
		return best
	}
	for _, c := range m.queue {
		consider(c)
	}
	return best
}

// around is c's unevaluated feasible neighbours in parameter i.
func (m *CopulaMethod) around(c Config, i int) []Config {
	sp, p := m.s.c.space, m.s.c.space.Params[i]
	var out []Config
	for l := range p.Levels {
		if l == c[i] || (numericKind(p.Kind) && abs(l-c[i]) != 1) {
			continue
		}
		n := append(Config(nil), c...)
		n[i] = l
		if !m.seen[n.Key()] && sp.Feasible(n, m.s.task) == nil {
			out = append(out, n)
		}
	}
	return out
}

// again repeats the last step of a number when it made the best, or nil.
func (m *CopulaMethod) again(ranked []Observation) Config {
	if len(ranked) == 0 || m.to == nil || ranked[0].Config.Key() != m.to.Key() {
		return nil
	}
	sp := m.s.c.space
	c := append(Config(nil), m.to...)
	for i := range c {
		d := m.to[i] - m.from[i]
		if d == 0 {
			continue
		}
		c[i] += d
		if !numericKind(sp.Params[i].Kind) || c[i] < 0 || c[i] >= len(sp.Params[i].Levels) {
			return nil
		}
	}
	if m.seen[c.Key()] || sp.Feasible(c, m.s.task) != nil {
		return nil
	}
	m.from, m.to = m.to, c
	return c
}

// slope is the direction in parameter i's levels that the evaluations so
// far improve in: +1 up, -1 down, 0 when they do not say (the sign of the
// covariance of the level and the objective).
func (m *CopulaMethod) slope(i int) float64 {
	if len(m.told) < 2 {
		return 0
	}
	mx, my := 0.0, 0.0
	for _, ob := range m.told {
		mx += float64(ob.Config[i]) / float64(len(m.told))
		my += ob.Objective / float64(len(m.told))
	}
	cov := 0.0
	for _, ob := range m.told {
		cov += (float64(ob.Config[i]) - mx) * (ob.Objective - my)
	}
	if m.maximize {
		cov = -cov
	}
	switch {
	case cov < 0:
		return 1
	case cov > 0:
		return -1
	}
	return 0
}

func numericKind(k Kind) bool { return k == Int || k == Ordinal }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Ranked draws n conditional samples and returns their distinct feasible
// configurations, most frequent first (ties in the order first drawn), and
// how often each was drawn.
func (s *Sampler) Ranked(n int) ([]Config, map[string]int) {
	count := map[string]int{}
	var order []Config
	for i := 0; i < n; i++ {
		c := s.Draw()
		k := c.Key()
		if count[k] == 0 {
			if s.c.space.Feasible(c, s.task) != nil {
				count[k] = -1
				s.Stats.Infeasible++
				continue
			}
			order = append(order, c)
		}
		if count[k] > 0 {
			s.Stats.Duplicates++
		}
		if count[k] >= 0 {
			count[k]++
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return count[order[a].Key()] > count[order[b].Key()] })
	return order, count
}
