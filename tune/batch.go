package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// SearchParallel runs a method for up to budget evaluations with up to
// parallel of them at once; e must be safe for concurrent use (a
// SlurmEvaluator is: each evaluation is a job on a node of its own).
//
// It proposes parallel configurations at once, then one more each time an
// evaluation ends, after telling the method that result: the batch is the
// method's next parallel asks before their tells. The copula and random
// search take no feedback, so their batch is simply parallel distinct draws;
// TPE proposes from the results told so far, and its pending trials are
// never proposed twice. Iterations are numbered, told and passed to
// progress in the order they finish, which is the order the search saw
// them. It stops proposing at the first evaluation that fails outright or
// when the method is exhausted, waits for those in flight, and returns what
// it has with the error.
func SearchParallel(ctx context.Context, s *Space, t Task, m Method, e Evaluator, budget, parallel int, maximize bool, progress func(Iteration)) (Trace, error) {
	if parallel < 1 {
		return Trace{}, fmt.Errorf("parallel %d: at least 1", parallel)
	}
	type done struct {
		c   Config
		r   Result
		err error
	}
	tr := Trace{Method: m.Name(), Task: t}
	best := math.NaN()
	results := make(chan done)
	launched, running := 0, 0
	var stop error
	launch := func() {
		for stop == nil && running < parallel && launched < budget {
			if err := ctx.Err(); err != nil {
				stop = err
				return
			}
			c, err := m.Next()
			if err != nil {
				stop = err
				return
			}
			launched++
			running++
			go func(c Config) {
				r, err := e.Evaluate(ctx, t, c)
				results <- done{c, r, err}
			}(c)
		}
	}
	var failed []error
	for launch(); running > 0; launch() {
		d := <-results
		running--
		if d.err != nil {
			failed = append(failed, fmt.Errorf("evaluation (%s %v): %w", m.Name(), s.Values(d.c), d.err))
			if stop == nil {
				stop = d.err
			}
			continue
		}
		m.Tell(d.c, d.r)
		if d.r.Violation == "" && !math.IsNaN(d.r.Objective) && (math.IsNaN(best) || better(d.r.Objective, best, maximize)) {
			best = d.r.Objective
		}
		it := Iteration{N: len(tr.Iterations) + 1, Method: m.Name(), Config: d.c, Values: s.Values(d.c), Result: d.r, Best: best}
		tr.Iterations = append(tr.Iterations, it)
		if progress != nil {
			progress(it)
		}
	}
	if len(failed) > 0 {
		return tr, errors.Join(failed...)
	}
	return tr, stop
}
