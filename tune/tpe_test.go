package tune

import (
	"context"
	"slices"
	"testing"
)

func tpeSearch(t *testing.T, s *Space, tab *Table, task Task, seed uint64, n int) Trace {
	t.Helper()
	m, err := NewTPEMethod(s, task, false, seed)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Search(context.Background(), s, task, m, tab, n, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func configs(tr Trace) []string {
	var out []string
	for _, it := range tr.Iterations {
		out = append(out, it.Config.Key())
	}
	return out
}

// One seed is one search: goptuna's TPE, which this replaces, drew from
// math/rand's randomly seeded global source and was not.
func TestTPEIsReproducibleUnderASeed(t *testing.T) {
	s, tab := synthetic(t)
	task := Task{"n": 150}
	for _, seed := range []uint64{1, 2, 3} {
		a, b := tpeSearch(t, s, tab, task, seed, 40), tpeSearch(t, s, tab, task, seed, 40)
		if !slices.Equal(configs(a), configs(b)) {
			t.Errorf("seed %d: two searches differ:\n%v\n%v", seed, configs(a), configs(b))
		}
	}
	if slices.Equal(configs(tpeSearch(t, s, tab, task, 1, 40)), configs(tpeSearch(t, s, tab, task, 2, 40))) {
		t.Error("seeds 1 and 2 gave the same search")
	}
}

// After its 10 random start-up evaluations TPE models the objective: its
// later evaluations are better on average than random search's, over many
// seeds, on a landscape with structure (the synthetic runtime: a quadratic
// bowl in the tile sizes).
func TestTPELearnsAfterItsStartup(t *testing.T) {
	s, tab := synthetic(t)
	task := Task{"n": 150}
	var tpeMean, randMean float64
	const seeds, evals = 10, 40
	for seed := uint64(1); seed <= seeds; seed++ {
		tp := tpeSearch(t, s, tab, task, seed, evals)
		rd, err := Search(context.Background(), s, task, NewRandomMethod(s, task, seed), tab, evals, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := tpeStartup; i < evals; i++ {
			tpeMean += tp.Iterations[i].Result.Objective
			randMean += rd.Iterations[i].Result.Objective
		}
	}
	if tpeMean >= 0.9*randMean {
		t.Errorf("TPE's evaluations after start-up average %.3f, random's %.3f: TPE learns nothing",
			tpeMean/(seeds*(evals-tpeStartup)), randMean/(seeds*(evals-tpeStartup)))
	}
	t.Logf("after start-up: TPE mean %.3f, random %.3f", tpeMean/(seeds*(evals-tpeStartup)), randMean/(seeds*(evals-tpeStartup)))
}

func TestTPEWeightsRampOlderObservationsDown(t *testing.T) {
	for _, tc := range []struct {
		n           int
		first, last float64
	}{{0, 0, 0}, {10, 1, 1}, {25, 1, 1}, {26, 1.0 / 26, 1}, {35, 1.0 / 35, 1}} {
		w := tpeWeights(tc.n)
		if len(w) != tc.n {
			t.Fatalf("n=%d: %d weights", tc.n, len(w))
		}
		if tc.n == 0 {
			continue
		}
		if w[0] != tc.first || w[tc.n-1] != tc.last {
			t.Errorf("n=%d: weights %v, want first %g last %g", tc.n, w, tc.first, tc.last)
		}
	}
}
