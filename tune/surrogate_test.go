package tune

import (
	"context"
	"strings"
	"testing"
)

// The surrogate, fitted on 40 random source evaluations at each of three
// tasks alone, predicts a configuration within 5 % of the optimum at a task
// beyond them (n = 80, where the optimum's tile moves with n² and the
// copula's line falls 2-4 levels short: see
// TestTheSearchStepsTheWayTheEvaluationsImprove), between them, and below
// them, far more often than the copula's most frequent sample (10, 20, 14
// of 20 seeds against 0, 0, 3: the copula samples near the sources' best
// share, the surrogate from how every evaluation falls off around it).
func TestTheSurrogatePredictsTheOptimumAlongACurve(t *testing.T) {
	s, tab := quadraticWide(t)
	for _, tc := range []struct {
		sources []float64
		n       float64
		want    int // of 20 source samples, at least this many predict within 5 %
	}{
		{[]float64{20, 40, 60}, 80, 10},
		{[]float64{20, 60, 80}, 40, 20},
		{[]float64{40, 60, 80}, 20, 14},
	} {
		task := Task{"n": tc.n}
		opt := tab.Ranked(task, false)[0]
		hits, copula := 0, 0
		for seed := uint64(1); seed <= 20; seed++ {
			var src []Observation
			for _, n := range tc.sources {
				src = append(src, tab.Sample(Task{"n": n}, 40, seed*1000+uint64(n))...)
			}
			m := &CopulaMethod{s: &Sampler{c: &Copula{space: s}}, task: task, sources: src, seen: map[string]bool{}}
			c := m.predictedBest()
			y, _ := tab.Evaluate(context.Background(), task, c)
			if y.Objective <= 1.05*opt {
				hits++
			}
			gc, err := NewCopulaMethod(s, src, task, FitOptions{}, seed)
			if err != nil {
				t.Fatal(err)
			}
			if y, _ := tab.Evaluate(context.Background(), task, gc.queue[0]); y.Objective <= 1.05*opt {
				copula++
			}
		}
		t.Logf("sources %v, n=%g: %d of 20 (the copula's most frequent sample: %d)", tc.sources, tc.n, hits, copula)
		if hits <= copula {
			t.Errorf("sources %v, n=%g: the surrogate's guess within 5 %% in %d of 20, the copula's first in %d", tc.sources, tc.n, hits, copula)
		}
		if hits < tc.want {
			t.Errorf("sources %v, n=%g: %d of 20 predicted bests within 5 %% of the optimum, want >= %d", tc.sources, tc.n, hits, tc.want)
		}
	}
}

// A number's log is a term of its own only where it adds a shape: its
// values positive, spanning a factor of 4, not already evenly spaced in
// log (an ordinal of powers of two is linear in its level's log).
func TestLogScalesAreForNumbersThatSpanFactorsUnevenly(t *testing.T) {
	for _, tc := range []struct {
		param string
		want  bool
	}{
		{"{name: p, type: int, min: 1, max: 16}", true},
		{"{name: p, type: int, min: 4, max: 64, step: 4}", true},
		{"{name: p, type: ordinal, values: [1, 2, 4, 8, 16]}", false},
		{"{name: p, type: int, min: 0, max: 16}", false},
		{"{name: p, type: int, min: 10, max: 20}", false},
		{"{name: p, type: categorical, values: [a, b, c]}", false},
		{"{name: p, type: bool}", false},
	} {
		s, err := ParseSpace("p.yaml", []byte("params:\n  - "+tc.param+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := logScales(s)[0] != nil; got != tc.want {
			t.Errorf("%s: log scale %v, want %v", tc.param, got, tc.want)
		}
	}
}

// The surrogate is used only where it can be trusted: enough evaluations
// for its terms, and a fit that predicts the evaluations it leaves out.
// Otherwise the search steps as model=none does.
func TestTheSurrogateRefusesFewOrUnpredictableEvaluations(t *testing.T) {
	s, tab := quadraticWide(t)
	noise := rng(7)
	for _, tc := range []struct {
		name    string
		perTask int
		shuffle bool // the objectives replaced by noise
		err     string
	}{
		{"40 per task", 40, false, ""},
		{"6 per task", 6, false, "evaluations for"},
		{"40 per task of noise", 40, true, "predicts held-out evaluations"},
	} {
		var src []Observation
		for _, n := range []float64{20, 40, 60} {
			src = append(src, tab.Sample(Task{"n": n}, tc.perTask, uint64(n))...)
		}
		if tc.shuffle {
			for i := range src {
				src[i].Objective = 1 + noise.Float64()
			}
		}
		m, err := fitSurrogate(s, src, len(src), false)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err == "" && m.r2 < 0.9:
			t.Errorf("%s: leave-one-out R² %.2f, want >= 0.9 on a noise-free quadratic", tc.name, m.r2)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want one saying %q", tc.name, err, tc.err)
		}
	}
}
