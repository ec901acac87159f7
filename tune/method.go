package tune

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
)

// ErrExhausted is returned by a method with no new configuration to offer.
var ErrExhausted = errors.New("no new configuration to propose")

// Method proposes configurations one at a time and is told each result.
type Method interface {
	Name() string
	Next() (Config, error)
	Tell(c Config, r Result)
}

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
