package tune

import (
	"context"
	"fmt"
	"math"
)

// Iteration is one evaluation of a search.
type Iteration struct {
	N      int // 1-based
	Method string
	Config Config
	Values map[string]string
	Result Result
	// Best is the best objective so far among evaluations without a
	// violation (NaN until there is one).
	Best float64
}

// Trace is a search's evaluations in order.
type Trace struct {
	Method     string
	Task       Task
	Iterations []Iteration
}

// Search runs a method for up to budget evaluations, calling progress (if
// not nil) after each. It stops early, with an error wrapping ErrExhausted,
// when the method has no new feasible configuration, and returns what it
// has with the error when an evaluation fails outright.
func Search(ctx context.Context, s *Space, t Task, m Method, e Evaluator, budget int, maximize bool, progress func(Iteration)) (Trace, error) {
	tr := Trace{Method: m.Name(), Task: t}
	best := math.NaN()
	for n := 1; n <= budget; n++ {
		if err := ctx.Err(); err != nil {
			return tr, err
		}
		c, err := m.Next()
		if err != nil {
			return tr, err
		}
		r, err := e.Evaluate(ctx, t, c)
		if err != nil {
			return tr, fmt.Errorf("evaluation %d (%s %v): %w", n, m.Name(), s.Values(c), err)
		}
		m.Tell(c, r)
		if r.Violation == "" && !math.IsNaN(r.Objective) && (math.IsNaN(best) || better(r.Objective, best, maximize)) {
			best = r.Objective
		}
		it := Iteration{N: n, Method: m.Name(), Config: c, Values: s.Values(c), Result: r, Best: best}
		tr.Iterations = append(tr.Iterations, it)
		if progress != nil {
			progress(it)
		}
	}
	return tr, nil
}

func better(a, b float64, maximize bool) bool {
	if maximize {
		return a > b
	}
	return a < b
}

// BestAfter is the best objective among the first n evaluations (NaN if none).
func (tr Trace) BestAfter(n int) float64 {
	if n > len(tr.Iterations) {
		n = len(tr.Iterations)
	}
	if n == 0 {
		return math.NaN()
	}
	return tr.Iterations[n-1].Best
}

// Mean is the mean objective of all evaluations without a violation.
func (tr Trace) Mean() float64 {
	s, k := 0.0, 0
	for _, it := range tr.Iterations {
		if it.Result.Violation == "" && !math.IsNaN(it.Result.Objective) {
			s += it.Result.Objective
			k++
		}
	}
	if k == 0 {
		return math.NaN()
	}
	return s / float64(k)
}
