package tune

import (
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// importanceOrder is the space's parameter indices, the one whose level
// matters most to the sources' objectives first: by a Kruskal–Wallis test of
// each parameter's levels, within each source task (objectives of different
// tasks are not comparable, ranks within one are), the statistics and their
// degrees of freedom summed over the tasks, ordered by the test's p-value.
//
// The neighbourhood search visits parameters in this order. With a budget of
// a few evaluations after the copula's samples, a coordinate search that
// gives an irrelevant categorical (one the sources show no effect of) its
// turn before a boolean that matters runs out before it reaches the
// boolean: on the wide benchmark space's extrapolated task, most misses
// were an algo or pack the search never got to (docs/tune.md).
func importanceOrder(s *Space, obs []Observation, maximize bool) []int {
	np := len(s.Params)
	h, df := make([]float64, np), make([]float64, np)
	for _, g := range groupByTask(s, obs) {
		n := float64(len(g))
		if len(g) < 2 {
			continue
		}
		rank := midRanks(g, maximize)
		for j, p := range s.Params {
			sum := make([]float64, len(p.Levels))
			cnt := make([]float64, len(p.Levels))
			for i, ob := range g {
				if j < len(ob.Config) && ob.Config[j] >= 0 && ob.Config[j] < len(p.Levels) {
					sum[ob.Config[j]] += rank[i]
					cnt[ob.Config[j]]++
				}
			}
			seen := 0.0
			for l := range sum {
				if cnt[l] == 0 {
					continue
				}
				seen++
				d := sum[l]/cnt[l] - (n+1)/2
				h[j] += 12 / (n * (n + 1)) * cnt[l] * d * d
			}
			if seen > 1 {
				df[j] += seen - 1
			}
		}
	}
	p := make([]float64, np)
	for j := range p {
		p[j] = 1
		if df[j] > 0 {
			p[j] = distuv.ChiSquared{K: df[j]}.Survival(h[j])
		}
	}
	order := make([]int, np)
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return p[order[a]] < p[order[b]] })
	return order
}

// midRanks is each observation's rank by objective, best 1, ties sharing
// their mean rank.
func midRanks(g []Observation, maximize bool) []float64 {
	idx := make([]int, len(g))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return better(g[idx[a]].Objective, g[idx[b]].Objective, maximize) })
	rank := make([]float64, len(g))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && g[idx[j+1]].Objective == g[idx[i]].Objective {
			j++
		}
		for k := i; k <= j; k++ {
			rank[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return rank
}
