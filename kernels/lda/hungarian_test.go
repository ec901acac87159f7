package lda

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// hungarian solves the square assignment problem: it returns, for each
// row, the column assigned to it, minimising the total cost. It is the
// O(n³) shortest-augmenting-path form of Kuhn and Munkres' method with
// row and column potentials (gonum has none).
func hungarian(cost [][]float64) []int {
	n := len(cost)
	inf := math.Inf(1)
	u, v := make([]float64, n+1), make([]float64, n+1)
	p, way := make([]int, n+1), make([]int, n+1) // p[col] = row matched to col (1-based, 0 none)
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		minv := make([]float64, n+1)
		used := make([]bool, n+1)
		for j := range minv {
			minv[j] = inf
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], inf, 0
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				if cur := cost[i0-1][j-1] - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	assign := make([]int, n)
	for j := 1; j <= n; j++ {
		if p[j] > 0 {
			assign[p[j]-1] = j - 1
		}
	}
	return assign
}

// The assignment solver finds the optimum that trying every permutation
// finds, on random matrices small enough to enumerate.
func TestHungarianFindsTheOptimalAssignment(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 1 + r.IntN(6)
		cost := make([][]float64, n)
		for i := range cost {
			cost[i] = make([]float64, n)
			for j := range cost[i] {
				cost[i][j] = float64(r.IntN(20)) // ties included
			}
		}
		got := hungarian(cost)
		seen := make([]bool, n)
		sum := 0.0
		for i, j := range got {
			if seen[j] {
				t.Fatalf("column %d assigned twice: %v", j, got)
			}
			seen[j] = true
			sum += cost[i][j]
		}
		best := math.Inf(1)
		perm := make([]int, n)
		for i := range perm {
			perm[i] = i
		}
		for {
			s := 0.0
			for i, j := range perm {
				s += cost[i][j]
			}
			best = min(best, s)
			if !nextPermutation(perm) {
				break
			}
		}
		if sum != best {
			t.Fatalf("cost %v: assignment %v costs %g, the optimum is %g", cost, got, sum, best)
		}
	}
}

func nextPermutation(p []int) bool {
	i := len(p) - 2
	for i >= 0 && p[i] >= p[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(p) - 1
	for p[j] <= p[i] {
		j--
	}
	p[i], p[j] = p[j], p[i]
	slices.Reverse(p[i+1:])
	return true
}
