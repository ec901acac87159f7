package tune

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// surrogate predicts a configuration's objective at a task from every
// evaluation so far, the sources' and the target task's: a ridge regression
// on a second-order expansion of the configuration and the task. The
// copula sees only each source task's best share and couples its variables
// linearly, so its conditional cannot follow an optimum that moves with the
// task faster than a line, and it says nothing of how much worse a
// neighbour is; the surrogate uses the bad evaluations too, and its terms
// in a number times the task's square let the optimum move along a curve
// (three source tasks determine one).
//
// The expansion: for each number (a level scaled to [-0.5, 0.5]) its value,
// square, and value times each task feature and its square; for each pair
// of numbers their product; for each category or boolean but the first an
// indicator, and the indicator times each task feature; each task feature
// and its square; for a number on a log scale (see logScale) the log too,
// its square and its product with each task feature; the task terms absorb
// each task's level. The response is the objective, negated when
// maximising, so a smaller prediction is always better: its log fitted the
// far configurations' flattening and not the bowl, and missed the optimum of
// the benchmark's quadratic target at n = 50 in 58 of 100 seeds against 0.
//
// The target task's own evaluations weigh taskWeight times a source's: they
// are few, and the only ones at the task.
type surrogate struct {
	space      *Space
	tmean, tsd []float64
	neg        bool
	w          []float64
	// logScale is, for a number whose values are positive and span a
	// factor of 4 or more but are not already spaced by a constant factor
	// (an ordinal 1, 2, 4, 8), the log of each level's value scaled to
	// [-0.5, 0.5]: a tile's cost goes with its log as often as with its
	// value (the benchmark's interaction target, a work size tile×unroll,
	// went from 84 to 100 % of seeds within 5 % at n = 80 with it). Nil
	// for other parameters. Its task terms are linear only: with the
	// square too, the extrapolated quadratic target fell from 96 to 82 %.
	logScale [][]float64
}

// taskWeight is the weight of an evaluation at the task being tuned,
// relative to a source's (bench/copula.sh: 1, 5 and 20 were within noise of
// each other; 5 was the best on the extrapolated quadratic target).
const taskWeight = 5

// ridge is the surrogate's penalty on every coefficient but the
// intercept's, relative to the evaluations' count: enough to make the
// collinear task-squared terms of one or two source tasks solvable, small
// against the targets' curvature.
const ridge = 1e-3

// fitSurrogate fits the surrogate on obs (every one with a finite
// objective), the first nsrc of them the sources; it needs at least two.
func fitSurrogate(s *Space, obs []Observation, nsrc int, maximize bool) (*surrogate, error) {
	var use []Observation
	var wt []float64
	for i, ob := range obs {
		if !math.IsNaN(ob.Objective) && !math.IsInf(ob.Objective, 0) {
			use = append(use, ob)
			if i < nsrc {
				wt = append(wt, 1)
			} else {
				wt = append(wt, taskWeight)
			}
		}
	}
	if len(use) < 2 {
		return nil, fmt.Errorf("fit surrogate: %d finite evaluations; need at least 2", len(use))
	}
	m := &surrogate{space: s, neg: maximize, tmean: make([]float64, len(s.Task)), tsd: make([]float64, len(s.Task))}
	for k, f := range s.Task {
		var sum, sq float64
		for i, ob := range use {
			v, ok := ob.Task[f.Name]
			if !ok {
				return nil, fmt.Errorf("fit surrogate: evaluation %d has no task feature %s", i, f.Name)
			}
			sum += v
			sq += v * v
		}
		n := float64(len(use))
		m.tmean[k] = sum / n
		m.tsd[k] = math.Sqrt(math.Max(sq/n-m.tmean[k]*m.tmean[k], 0))
		if m.tsd[k] == 0 {
			m.tsd[k] = 1
		}
	}
	m.logScale = logScales(s)
	var phi []float64
	phi = m.features(use[0].Config, use[0].Task, phi[:0])
	d := len(phi)
	a := mat.NewSymDense(d, nil)
	b := mat.NewVecDense(d, nil)
	for k, ob := range use {
		if len(ob.Config) != len(s.Params) {
			return nil, fmt.Errorf("fit surrogate: an evaluation has %d parameters, the space %d", len(ob.Config), len(s.Params))
		}
		phi = m.features(ob.Config, ob.Task, phi[:0])
		y := m.response(ob.Objective)
		for i := range d {
			b.SetVec(i, b.AtVec(i)+wt[k]*phi[i]*y)
			for j := i; j < d; j++ {
				a.SetSym(i, j, a.At(i, j)+wt[k]*phi[i]*phi[j])
			}
		}
	}
	for i := 1; i < d; i++ {
		a.SetSym(i, i, a.At(i, i)+ridge*float64(len(use)))
	}
	var w mat.VecDense
	if err := w.SolveVec(a, b); err != nil {
		return nil, fmt.Errorf("fit surrogate on %d evaluations of %d terms: %w", len(use), d, err)
	}
	m.w = w.RawVector().Data
	return m, nil
}

func (m *surrogate) response(y float64) float64 {
	if m.neg {
		y = -y
	}
	return y
}

// predict is the predicted response of c at t: smaller is better.
func (m *surrogate) predict(c Config, t Task, buf []float64) float64 {
	phi := m.features(c, t, buf[:0])
	y := 0.0
	for i, f := range phi {
		y += f * m.w[i]
	}
	return y
}

// features appends the expansion of (c, t) to dst.
func (m *surrogate) features(c Config, t Task, dst []float64) []float64 {
	s := m.space
	tau := make([]float64, len(s.Task))
	dst = append(dst, 1)
	for k, f := range s.Task {
		tau[k] = (t[f.Name] - m.tmean[k]) / m.tsd[k]
		dst = append(dst, tau[k], tau[k]*tau[k])
	}
	var nums, logs []float64
	for i, p := range s.Params {
		if numericKind(p.Kind) {
			u := 0.0
			if len(p.Levels) > 1 {
				u = float64(c[i])/float64(len(p.Levels)-1) - 0.5
			}
			nums = append(nums, u)
			if lg := m.logScale[i]; lg != nil {
				logs = append(logs, lg[c[i]])
			}
			continue
		}
		for l := 1; l < len(p.Levels); l++ {
			ind := b2f(c[i] == l)
			dst = append(dst, ind)
			for _, x := range tau {
				dst = append(dst, ind*x)
			}
		}
	}
	for _, u := range nums {
		dst = append(dst, u, u*u)
		for _, x := range tau {
			dst = append(dst, u*x, u*x*x)
		}
	}
	for _, v := range logs {
		dst = append(dst, v, v*v)
		for _, x := range tau {
			dst = append(dst, v*x)
		}
	}
	nums = append(nums, logs...)
	for i := range nums {
		for j := i + 1; j < len(nums); j++ {
			dst = append(dst, nums[i]*nums[j])
		}
	}
	return dst
}

// logScales is surrogate.logScale for a space's parameters.
func logScales(s *Space) [][]float64 {
	out := make([][]float64, len(s.Params))
	for i, p := range s.Params {
		if !numericKind(p.Kind) || len(p.Numbers) < 3 {
			continue
		}
		lo, hi := floats(p.Numbers)
		if lo <= 0 || hi < 4*lo {
			continue
		}
		lg := make([]float64, len(p.Numbers))
		geometric := true
		step := math.Log(p.Numbers[1] / p.Numbers[0])
		for l, v := range p.Numbers {
			lg[l] = (math.Log(v)-math.Log(lo))/(math.Log(hi)-math.Log(lo)) - 0.5
			if l > 0 && math.Abs(math.Log(v/p.Numbers[l-1])-step) > 1e-9 {
				geometric = false
			}
		}
		if !geometric {
			out[i] = lg
		}
	}
	return out
}
