package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/c-bata/goptuna"
	"github.com/c-bata/goptuna/tpe"
)

// ErrExhausted is returned by a method with no new configuration to offer.
var ErrExhausted = errors.New("no new configuration to propose")

// Method proposes configurations one at a time and is told each result.
type Method interface {
	Name() string
	Next() (Config, error)
	Tell(c Config, r Result)
}

// maxDraws bounds the draws spent finding one new feasible configuration.
const maxDraws = 10000

// Copula proposes the copula's conditional samples in the order drawn. It
// takes no feedback: the chapter finds refitting on its own samples only
// narrows it.
type CopulaMethod struct {
	s    *Sampler
	seen map[string]bool
}

// NewCopulaMethod fits a copula on the sources and conditions it on the task.
func NewCopulaMethod(s *Space, sources []Observation, t Task, o FitOptions, seed uint64) (*CopulaMethod, error) {
	c, err := Fit(s, sources, o)
	if err != nil {
		return nil, err
	}
	smp, err := c.Condition(t, seed)
	if err != nil {
		return nil, err
	}
	return &CopulaMethod{s: smp, seen: map[string]bool{}}, nil
}

// Name is "gc".
func (m *CopulaMethod) Name() string { return "gc" }

// Sampler is the conditioned sampler, for its statistics.
func (m *CopulaMethod) Sampler() *Sampler { return m.s }

// Next draws the next unique feasible sample.
func (m *CopulaMethod) Next() (Config, error) {
	got := m.s.Unique(1, m.seen, maxDraws)
	if len(got) == 0 {
		return nil, fmt.Errorf("gc: %w after %d draws (%+v)", ErrExhausted, maxDraws, m.s.Stats)
	}
	return got[0], nil
}

// Tell does nothing: see CopulaMethod.
func (m *CopulaMethod) Tell(Config, Result) {}

// RandomMethod proposes feasible configurations uniformly, without repeats.
type RandomMethod struct {
	space *Space
	task  Task
	r     *rand.Rand
	seen  map[string]bool
}

// NewRandomMethod returns random search for a task.
func NewRandomMethod(s *Space, t Task, seed uint64) *RandomMethod {
	return &RandomMethod{space: s, task: t, r: rand.New(rand.NewPCG(seed, 0x6a09e667f3bcc909)), seen: map[string]bool{}}
}

// Name is "random".
func (m *RandomMethod) Name() string { return "random" }

// Next draws a configuration not proposed before.
func (m *RandomMethod) Next() (Config, error) {
	for d := 0; d < maxDraws; d++ {
		c := make(Config, len(m.space.Params))
		for i, p := range m.space.Params {
			c[i] = m.r.IntN(len(p.Levels))
		}
		if k := c.Key(); !m.seen[k] && m.space.Feasible(c, m.task) == nil {
			m.seen[k] = true
			return c, nil
		}
	}
	return nil, fmt.Errorf("random: %w after %d draws", ErrExhausted, maxDraws)
}

// Tell does nothing.
func (m *RandomMethod) Tell(Config, Result) {}

// DefaultMethod proposes the space's default configuration once.
type DefaultMethod struct {
	space *Space
	done  bool
}

// NewDefaultMethod returns the untuned default.
func NewDefaultMethod(s *Space) *DefaultMethod { return &DefaultMethod{space: s} }

// Name is "default".
func (m *DefaultMethod) Name() string { return "default" }

// Next is the default, then ErrExhausted.
func (m *DefaultMethod) Next() (Config, error) {
	if m.done {
		return nil, fmt.Errorf("default: %w", ErrExhausted)
	}
	m.done = true
	return m.space.Default(), nil
}

// Tell does nothing.
func (m *DefaultMethod) Tell(Config, Result) {}

// TPEMethod is Bayesian optimisation from scratch: goptuna's
// tree-structured Parzen estimator over the parameters' level indices
// (categoricals as categories), driven ask-and-tell.
type TPEMethod struct {
	space    *Space
	task     Task
	study    *goptuna.Study
	maximize bool
	trials   map[string]int     // configuration key -> the trial that proposed it
	told     map[string]float64 // configurations told, for re-proposals
	fallback *RandomMethod
}

// NewTPEMethod returns TPE for a task; maximize says a larger objective is better.
func NewTPEMethod(s *Space, t Task, maximize bool, seed uint64) (*TPEMethod, error) {
	dir := goptuna.StudyDirectionMinimize
	if maximize {
		dir = goptuna.StudyDirectionMaximize
	}
	study, err := goptuna.CreateStudy("heatsink-tune",
		goptuna.StudyOptionDirection(dir),
		goptuna.StudyOptionSampler(tpe.NewSampler(tpe.SamplerOptionSeed(int64(seed)))),
		goptuna.StudyOptionLogger(nil))
	if err != nil {
		return nil, fmt.Errorf("tpe: create study: %w", err)
	}
	return &TPEMethod{space: s, task: t, study: study, maximize: maximize,
		trials: map[string]int{}, told: map[string]float64{}, fallback: NewRandomMethod(s, t, seed)}, nil
}

// Name is "tpe".
func (m *TPEMethod) Name() string { return "tpe" }

// Next asks the study for a trial. An infeasible proposal is failed, a
// repeat is told its known result, and neither is returned; after 100 such
// in a row, a random new configuration stands in, so the method never stalls.
func (m *TPEMethod) Next() (Config, error) {
	for try := 0; try < 100; try++ {
		id, err := m.study.Storage.CreateNewTrial(m.study.ID)
		if err != nil {
			return nil, fmt.Errorf("tpe: new trial: %w", err)
		}
		c, err := m.suggest(goptuna.Trial{Study: m.study, ID: id})
		if err != nil {
			return nil, err
		}
		k := c.Key()
		if v, ok := m.told[k]; ok {
			m.finish(id, v, goptuna.TrialStateComplete)
			continue
		}
		if _, ok := m.trials[k]; ok || m.space.Feasible(c, m.task) != nil {
			m.finish(id, 0, goptuna.TrialStateFail)
			continue
		}
		m.trials[k] = id
		m.fallback.seen[k] = true
		return c, nil
	}
	c, err := m.fallback.Next()
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (m *TPEMethod) suggest(tr goptuna.Trial) (Config, error) {
	c := make(Config, len(m.space.Params))
	for i, p := range m.space.Params {
		if p.Kind == Categorical {
			v, err := tr.SuggestCategorical(p.Name, p.Levels)
			if err != nil {
				return nil, fmt.Errorf("tpe: suggest %s: %w", p.Name, err)
			}
			for l, lv := range p.Levels {
				if lv == v {
					c[i] = l
				}
			}
			continue
		}
		l, err := tr.SuggestStepInt(p.Name, 0, len(p.Levels)-1, 1)
		if err != nil {
			return nil, fmt.Errorf("tpe: suggest %s: %w", p.Name, err)
		}
		c[i] = l
	}
	return c, nil
}

func (m *TPEMethod) finish(id int, v float64, state goptuna.TrialState) {
	if state == goptuna.TrialStateComplete {
		_ = m.study.Storage.SetTrialValue(id, v)
	}
	_ = m.study.Storage.SetTrialState(id, state)
}

// Tell records a result on the trial that proposed the configuration. A
// violation is told as the worst value seen, so the estimator learns to
// avoid the region without the objective itself being trusted.
func (m *TPEMethod) Tell(c Config, r Result) {
	k := c.Key()
	v := r.Objective
	if r.Violation != "" || math.IsNaN(v) {
		v = m.worst()
	}
	m.told[k] = v
	if id, ok := m.trials[k]; ok {
		m.finish(id, v, goptuna.TrialStateComplete)
		delete(m.trials, k)
	}
}

func (m *TPEMethod) worst() float64 {
	w := math.NaN()
	for _, v := range m.told {
		if math.IsNaN(w) || (m.maximize && v < w) || (!m.maximize && v > w) {
			w = v
		}
	}
	if math.IsNaN(w) {
		return 0
	}
	return w
}

// Evaluator evaluates a configuration for a task.
type Evaluator interface {
	Evaluate(ctx context.Context, t Task, c Config) (Result, error)
}

// Result is one evaluation's outcome.
type Result struct {
	Objective float64
	// Violation, when not empty, says which constraint the evaluation broke
	// (throttling, temperature, power); its objective is not a candidate.
	Violation string
	// Metrics are the evaluation's other measurements by name (with units:
	// peak_temp_c, energy_j, ...).
	Metrics map[string]float64
	// Run is where the evaluation is recorded, if it is.
	Run string
}
