package tune

import (
	"context"
	"errors"
	"testing"
)

// wideSpace is bench/copulabench's wide space and its smooth-quadratic
// target: the optimum's tile grows with n², its unroll linearly, algo a and
// pack matter, layout does not. A copula of sources n = 20, 40, 60 must
// extrapolate to n = 80, where the optimum's tile is beyond every source's.
func wideSpace(t *testing.T) (*Space, *Table) {
	t.Helper()
	s, err := ParseSpace("wide.yaml", []byte(`
task:
  - {name: n, min: 10, max: 100}
params:
  - {name: tile, type: int, min: 1, max: 16}
  - {name: unroll, type: ordinal, values: [1, 2, 4, 8, 16]}
  - {name: algo, type: categorical, values: [a, b, c]}
  - {name: layout, type: categorical, values: [p, q, r, s]}
  - {name: pack, type: bool}
`))
	if err != nil {
		t.Fatal(err)
	}
	tab := NewTable(s)
	for _, n := range []float64{20, 40, 60, 80} {
		s.Enumerate(Task{"n": n}, func(c Config) bool {
			dt := float64(c[0]+1) - (1 + 15*(n/100)*(n/100))
			du := float64(c[1]) - (0.5 + 0.03*n)
			tab.Add(Task{"n": n}, c, 1+0.03*dt*dt+0.04*du*du+[]float64{0, 0.08, 0.25}[c[2]]+0.06*float64(1-c[4]))
			return true
		})
	}
	return s, tab
}

// At an extrapolated task of a smooth target whose optimum moves faster
// than linearly, the default GC's best of 10 is within 5 % of the optimum in
// many more source samples than before the neighbourhood search took the
// sources' order of importance and the other side of a bad numeric step and
// chance task correlations were dropped: 31 of these 50 noise-free samples,
// before 19 (the benchmark, with 1 % noise: 42 % of 50 seeds before,
// docs/tune.md).
func TestTheCopulaFindsAnExtrapolatedSmoothOptimum(t *testing.T) {
	s, tab := wideSpace(t)
	task := Task{"n": 80}
	opt := tab.Ranked(task, false)[0]
	within := 0
	const seeds = 50
	for seed := uint64(1); seed <= seeds; seed++ {
		var src []Observation
		for _, n := range []float64{20, 40, 60} {
			src = append(src, tab.Sample(Task{"n": n}, 40, seed*1000+uint64(n))...)
		}
		m, err := NewCopulaMethod(s, src, task, FitOptions{}, seed)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Search(context.Background(), s, task, m, tab, 10, false, nil)
		if err != nil && !errors.Is(err, ErrExhausted) {
			t.Fatal(err)
		}
		if tr.BestAfter(10)/opt <= 1.05 {
			within++
		}
	}
	if within < 28 {
		t.Errorf("within 5 %% of the optimum at n=80 in %d of %d source samples, want at least 28", within, seeds)
	}
}

// The neighbourhood search's order: a categorical the sources show no
// effect of comes after every parameter that matters.
func TestImportanceOrderPutsAnIrrelevantParameterLast(t *testing.T) {
	s, tab := wideSpace(t)
	var src []Observation
	for _, n := range []float64{20, 40, 60} {
		src = append(src, tab.Sample(Task{"n": n}, 200, uint64(n))...)
	}
	order := importanceOrder(s, src, false)
	if order[0] != 0 || order[len(order)-1] != 3 {
		t.Errorf("order %v: want tile (0) first and layout (3) last", order)
	}
}
