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
	// ridge is the penalty chosen; r2 the share of the within-task
	// variance the fit predicts of each evaluation left out.
	ridge, r2 float64
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

// ridges are the penalties on every coefficient but the intercept's,
// relative to the evaluations' count, that the fit chooses among by
// leave-one-out error: the smallest makes the collinear task-squared terms
// of one or two source tasks solvable and is small against the targets'
// curvature; the larger ones keep a fit on few evaluations from chasing
// noise.
var ridges = []float64{1e-3, 1e-2, 1e-1, 1}

// evalsPerTerm is how many evaluations the surrogate needs per term to be
// fitted at all. bench/copula.sh, 6 source evaluations per task (18, for 17
// or 29 terms), 100 seeds: fitted regardless, with the leave-one-out gate
// below, the search fell from 90 to 78 % of seeds within 5 % on
// small-linear at n = 80 and from 71 to 54 % on smooth-quadratic at n = 50;
// at 1 per term the same; at 2 it is not fitted and the search is
// model=none's, seed for seed. With 40 per task (120) it is fitted.
const evalsPerTerm = 2

// minR2 is the least share of the within-task variance the surrogate must
// predict of evaluations it was not fitted on (leave-one-out) to be used;
// below it the search steps as with model=none: a model that cannot
// predict the evaluations it has should not choose the next one.
const minR2 = 0.5

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
	n := len(use)
	var rows [][]float64
	ys := make([]float64, n)
	for k, ob := range use {
		if len(ob.Config) != len(s.Params) {
			return nil, fmt.Errorf("fit surrogate: evaluation %d has %d parameters, the space %d", k, len(ob.Config), len(s.Params))
		}
		rows = append(rows, m.features(ob.Config, ob.Task, nil))
		ys[k] = m.response(ob.Objective)
	}
	d := len(rows[0])
	if n < evalsPerTerm*d {
		return nil, fmt.Errorf("fit surrogate: %d evaluations for %d terms; need %d", n, d, evalsPerTerm*d)
	}
	xtx := mat.NewSymDense(d, nil)
	xty := mat.NewVecDense(d, nil)
	for k, phi := range rows {
		for i := range d {
			xty.SetVec(i, xty.AtVec(i)+wt[k]*phi[i]*ys[k])
			for j := i; j < d; j++ {
				xtx.SetSym(i, j, xtx.At(i, j)+wt[k]*phi[i]*phi[j])
			}
		}
	}
	sst := withinTask(s, use, ys, wt)
	var bestSSE float64
	m.w, m.ridge, bestSSE = chooseRidge(xtx, xty, rows, ys, wt)
	if m.w == nil {
		return nil, fmt.Errorf("fit surrogate on %d evaluations of %d terms: singular at every ridge", n, d)
	}
	m.r2 = 1 - bestSSE/sst
	if sst == 0 || m.r2 < minR2 {
		return nil, fmt.Errorf("fit surrogate on %d evaluations of %d terms: it predicts held-out evaluations with R² %.2f, under %.2f", n, d, m.r2, minR2)
	}
	return m, nil
}

// chooseRidge solves the weighted normal equations at each of ridges and
// keeps the solution whose leave-one-out residuals (from the hat matrix's
// diagonal: no refits) have the least weighted sum of squares; nil where
// every one is singular.
func chooseRidge(xtx *mat.SymDense, xty *mat.VecDense, rows [][]float64, ys, wt []float64) (w []float64, ridge, sse float64) {
	d, n := xty.Len(), len(rows)
	sse = math.Inf(1)
	for _, lambda := range ridges {
		a := mat.NewSymDense(d, nil)
		a.CopySym(xtx)
		for i := 1; i < d; i++ {
			a.SetSym(i, i, a.At(i, i)+lambda*float64(n))
		}
		var ch mat.Cholesky
		if !ch.Factorize(a) {
			continue
		}
		var sol mat.VecDense
		if err := ch.SolveVecTo(&sol, xty); err != nil {
			continue
		}
		loo := 0.0
		var z mat.VecDense
		for k, phi := range rows {
			v := mat.NewVecDense(d, phi)
			if err := ch.SolveVecTo(&z, v); err != nil {
				loo = math.Inf(1)
				break
			}
			h := wt[k] * mat.Dot(v, &z)
			e := (ys[k] - mat.Dot(v, &sol)) / math.Max(1-h, 1e-6)
			loo += wt[k] * e * e
		}
		if loo < sse {
			w, ridge, sse = append([]float64(nil), sol.RawVector().Data...), lambda, loo
		}
	}
	return w, ridge, sse
}

// withinTask is the weighted sum of squares of ys around each task's mean:
// what a surrogate has to explain (a task's level it gets from its task
// terms alone).
func withinTask(s *Space, obs []Observation, ys, wt []float64) float64 {
	key := func(t Task) string {
		var b []byte
		for _, f := range s.Task {
			b = fmt.Appendf(b, "%g,", t[f.Name])
		}
		return string(b)
	}
	sum, sw := map[string]float64{}, map[string]float64{}
	for k, ob := range obs {
		sum[key(ob.Task)] += wt[k] * ys[k]
		sw[key(ob.Task)] += wt[k]
	}
	sst := 0.0
	for k, ob := range obs {
		e := ys[k] - sum[key(ob.Task)]/sw[key(ob.Task)]
		sst += wt[k] * e * e
	}
	return sst
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
