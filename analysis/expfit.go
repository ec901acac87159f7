package analysis

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Exponential models are fitted by variable projection: for a given time
// constant the model is linear in its levels and amplitudes, which are then
// solved exactly by least squares, so the nonlinear search is over the time
// constants alone (one dimension for a rise or a single decay, a profile over
// the slow one for a double decay). A grid over log τ followed by a golden
// section search cannot be trapped by a poor starting guess the way
// Levenberg-Marquardt from one start can, and the same residual-sum profile
// gives τ's confidence interval directly.

// ExpFit is an exponential model fitted by least squares to readings y at
// times x (seconds after the model's origin).
type ExpFit struct {
	// Taus are the time constants (s), slowest first.
	Taus []float64
	// Coef are the linear coefficients: the level, then one amplitude per
	// time constant, in the model's own parametrisation.
	Coef []float64
	// TauLo and TauHi bound Taus[0] (confidence level Level), from the
	// profile of the residual sum of squares.
	TauLo, TauHi float64
	// CoefCov is the covariance of Coef from the linearised model (τ's
	// uncertainty included), inflated like the interval (see Inflation).
	CoefCov [][]float64
	Level   float64
	N       int
	SSE     float64
	R2      float64
	RMS     float64
	// Rho1 is the lag-1 autocorrelation of the residuals; Inflation =
	// (1+ρ₁)/(1−ρ₁) (at least 1) widens every interval for residuals that are
	// not independent, as whole-degree sensors on a slow curve make them.
	Rho1, Inflation float64
	// AICc is the corrected Akaike information criterion of the fit.
	AICc float64
	// TQuant is the two-sided Student t quantile for intervals from CoefCov.
	TQuant float64
}

// basis writes into dst the model's column for one time constant τ; the
// model is a constant plus one such column per τ.
type basis func(dst, x []float64, tau float64)

// riseBasis is T(x) = T0 + Σ ΔT_k·(1 − e^(−x/τ_k)).
func riseBasis(dst, x []float64, tau float64) {
	for i, v := range x {
		dst[i] = -math.Expm1(-v / tau)
	}
}

// decayBasis is T(x) = T∞ + Σ A_k·e^(−x/τ_k).
func decayBasis(dst, x []float64, tau float64) {
	for i, v := range x {
		dst[i] = math.Exp(-v / tau)
	}
}

// columns returns the model's columns for time constants taus: a constant
// then one column per τ.
func columns(b basis, x, taus []float64) [][]float64 {
	cols := [][]float64{make([]float64, len(x))}
	for i := range x {
		cols[0][i] = 1
	}
	for _, tau := range taus {
		c := make([]float64, len(x))
		b(c, x, tau)
		cols = append(cols, c)
	}
	return cols
}

// lsq solves min ‖y − Σ c_k·cols[k]‖² by modified Gram-Schmidt, and
// reports ok=false when the columns are (numerically) dependent.
func lsq(cols [][]float64, y []float64) (coef []float64, sse float64, ok bool) {
	p, n := len(cols), len(y)
	q := make([][]float64, p)
	r := make([][]float64, p)
	for k := range p {
		r[k] = make([]float64, p)
		v := append([]float64(nil), cols[k]...)
		n0 := norm(v)
		for j := range k {
			d := dot(q[j], v)
			r[j][k] = d
			for i := range v {
				v[i] -= d * q[j][i]
			}
		}
		nk := norm(v)
		if n0 == 0 || nk <= 1e-9*n0 {
			return nil, 0, false
		}
		r[k][k] = nk
		for i := range v {
			v[i] /= nk
		}
		q[k] = v
	}
	res := append([]float64(nil), y...)
	qy := make([]float64, p)
	for k := range p {
		qy[k] = dot(q[k], res)
		for i := range n {
			res[i] -= qy[k] * q[k][i]
		}
	}
	coef = make([]float64, p)
	for k := p - 1; k >= 0; k-- {
		s := qy[k]
		for j := k + 1; j < p; j++ {
			s -= r[k][j] * coef[j]
		}
		coef[k] = s / r[k][k]
	}
	return coef, dot(res, res), true
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }

// sseProfile evaluates the residual sum of squares of the best linear
// coefficients at given time constants, +Inf where they cannot be solved:
// the same modified Gram-Schmidt steps as lsq, in the same order, so the
// same numbers. A fit evaluates it thousands of times (a grid and a golden
// section over τ, the interval's walk and bisections, and with two time
// constants a search over the fast one at each slow one), so it keeps what
// successive evaluations share instead of allocating every column each
// time, which was a fifth of a report's time: the constant column and y's
// part orthogonal to it are made once per fit, the slow column and y's
// part orthogonal to both once per slow τ, and only the new column is
// computed at each evaluation, into a reused buffer.
type sseProfile struct {
	b    basis
	x    []float64
	q0   []float64 // the constant column, normalised
	res0 []float64 // y less its projection on q0
	// slow is the τ that q1 and res1 were made for; slowOK whether its
	// column is independent of the constant.
	slow     float64
	slowOK   bool
	q1, res1 []float64 // slow column orthonormalised against q0; res0 less its projection on q1
	v        []float64 // the column being evaluated
}

func newSSEProfile(b basis, x, y []float64) *sseProfile {
	n := len(x)
	buf := make([]float64, 5*n)
	p := &sseProfile{b: b, x: x, q0: buf[:n:n], res0: buf[n : 2*n : 2*n], q1: buf[2*n : 3*n : 3*n], res1: buf[3*n : 4*n : 4*n], v: buf[4*n:]}
	for i := range p.q0 {
		p.q0[i] = 1
	}
	nk := norm(p.q0)
	for i := range p.q0 {
		p.q0[i] /= nk
	}
	copy(p.res0, y)
	qy := dot(p.q0, p.res0)
	for i := range p.res0 {
		p.res0[i] -= qy * p.q0[i]
	}
	return p
}

// orthonormal makes p.v, the column of τ, orthonormal to q0 and, with two
// time constants, to q1, and returns its product with res; ok is false
// where the column is (numerically) dependent on the others. The loops are
// lsq's steps fused into fewer passes over the readings, each sum taken in
// lsq's order, so the numbers are lsq's.
func (p *sseProfile) orthonormal(tau float64, withSlow bool, res []float64) (qy float64, ok bool) {
	v, q0, q1 := p.v, p.q0, p.q1[:len(p.v)]
	p.b(v, p.x, tau)
	var n0, d0 float64
	for i, c := range v {
		n0 += c * c
		d0 += q0[i] * c
	}
	nk := 0.0
	if withSlow {
		d1 := 0.0
		for i := range v {
			v[i] -= d0 * q0[i]
			d1 += q1[i] * v[i]
		}
		for i := range v {
			v[i] -= d1 * q1[i]
			nk += v[i] * v[i]
		}
	} else {
		for i := range v {
			v[i] -= d0 * q0[i]
			nk += v[i] * v[i]
		}
	}
	n0, nk = math.Sqrt(n0), math.Sqrt(nk)
	if n0 == 0 || nk <= 1e-9*n0 {
		return 0, false
	}
	res = res[:len(v)]
	for i := range v {
		v[i] /= nk
		qy += v[i] * res[i]
	}
	return qy, true
}

// sse returns the residual sum of squares left in res after removing its
// projection qy on p.v.
func (p *sseProfile) sse(res []float64, qy float64) float64 {
	v := p.v[:len(res)]
	s := 0.0
	for i, r := range res {
		r -= qy * v[i]
		s += r * r
	}
	if math.IsNaN(s) {
		return math.Inf(1)
	}
	return s
}

// one is the SSE of the model with the single time constant tau.
func (p *sseProfile) one(tau float64) float64 {
	qy, ok := p.orthonormal(tau, false, p.res0)
	if !ok {
		return math.Inf(1)
	}
	return p.sse(p.res0, qy)
}

// two is the SSE of the model with time constants slow and fast.
func (p *sseProfile) two(slow, fast float64) float64 {
	if slow != p.slow || p.slow == 0 {
		var qy float64
		p.slow = slow
		qy, p.slowOK = p.orthonormal(slow, false, p.res0)
		if p.slowOK {
			copy(p.q1, p.v)
			for i, r := range p.res0 {
				p.res1[i] = r - qy*p.q1[i]
			}
		}
	}
	if !p.slowOK {
		return math.Inf(1)
	}
	qy, ok := p.orthonormal(fast, true, p.res1)
	if !ok {
		return math.Inf(1)
	}
	return p.sse(p.res1, qy)
}

// minimise1D finds the minimum of f over log τ in [lo, hi] with a grid of
// steps points and a golden-section refinement between the best point's
// neighbours. It returns the argument, the minimum, and whether the minimum
// lies on the search's edge (the data do not bound τ there).
func minimise1D(f func(float64) float64, lo, hi float64, steps int) (arg, val float64, edge bool) {
	la, lb := math.Log(lo), math.Log(hi)
	best, bi := math.Inf(1), -1
	g := make([]float64, steps)
	for i := range steps {
		g[i] = la + (lb-la)*float64(i)/float64(steps-1)
		if v := f(math.Exp(g[i])); v < best {
			best, bi = v, i
		}
	}
	if bi < 0 {
		return math.NaN(), math.Inf(1), true
	}
	a, b := g[max(bi-1, 0)], g[min(bi+1, steps-1)]
	const phi = 0.6180339887498949
	c, d := b-phi*(b-a), a+phi*(b-a)
	fc, fd := f(math.Exp(c)), f(math.Exp(d))
	for range 60 {
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - phi*(b-a)
			fc = f(math.Exp(c))
		} else {
			a, c, fc = c, d, fd
			d = a + phi*(b-a)
			fd = f(math.Exp(d))
		}
		if b-a < 1e-4 { // 0.01 % in τ: far inside any interval
			break
		}
	}
	arg, val = math.Exp((a+b)/2), f(math.Exp((a+b)/2))
	if best < val {
		arg, val = math.Exp(g[bi]), best
	}
	return arg, val, bi == 0 || bi == steps-1
}

// errUnbounded says the data leave τ unbounded within the search.
var errUnbounded = errors.New("the data do not bound the time constant")

// fitExp fits basis b with nTau (1 or 2) time constants searched over
// [tauMin, tauMax], and bounds the first at confidence level. With two, the
// second is the fast one, kept at most half the first so the two cannot
// swap or merge.
func fitExp(b basis, x, y []float64, nTau int, tauMin, tauMax, level float64) (*ExpFit, error) {
	n := len(x)
	p := 1 + 2*nTau // levels + amplitudes + time constants
	if n < p+3 {
		return nil, fmt.Errorf("%d readings; a %d-parameter fit needs at least %d", n, p, p+3)
	}
	if !(tauMin > 0) || !(tauMax > tauMin) {
		return nil, fmt.Errorf("time-constant search range %.3g–%.3g s is empty", tauMin, tauMax)
	}
	const sep = 2.0
	// profile returns the SSE minimised over every time constant but the
	// first (slow) one, and the fast one it chose.
	sp := newSSEProfile(b, x, y)
	profile := func(tau float64) (float64, float64) {
		if nTau == 1 {
			return sp.one(tau), 0
		}
		hi := tau / sep
		if hi <= tauMin {
			return math.Inf(1), 0
		}
		fast, v, _ := minimise1D(func(tf float64) float64 { return sp.two(tau, tf) }, tauMin, hi, 16)
		return v, fast
	}
	prof := func(tau float64) float64 { v, _ := profile(tau); return v }
	steps := 120
	if nTau > 1 {
		steps = 48
	}
	tau, sse, edge := minimise1D(prof, tauMin, tauMax, steps)
	if math.IsInf(sse, 1) {
		return nil, errors.New("no time constant gives a solvable fit")
	}
	if edge {
		return nil, fmt.Errorf("%w: the best fit lies at the edge of %.3g–%.3g s", errUnbounded, tauMin, tauMax)
	}
	taus := []float64{tau}
	if nTau > 1 {
		_, fast := profile(tau)
		taus = append(taus, fast)
	}
	cols := columns(b, x, taus)
	coef, sse, ok := lsq(cols, y)
	if !ok {
		return nil, errors.New("the fitted model's columns are dependent")
	}
	f := &ExpFit{Taus: taus, Coef: coef, N: n, SSE: sse, Level: level}
	mean := 0.0
	for _, v := range y {
		mean += v
	}
	mean /= float64(n)
	sst := 0.0
	res := make([]float64, n)
	for i, v := range y {
		sst += (v - mean) * (v - mean)
		m := 0.0
		for k, c := range cols {
			m += coef[k] * c[i]
		}
		res[i] = v - m
	}
	f.R2 = 1
	if sst > 0 {
		f.R2 = 1 - sse/sst
	}
	f.RMS = math.Sqrt(sse / float64(n))
	num, den := 0.0, 0.0
	for i := range res {
		den += res[i] * res[i]
		if i > 0 {
			num += res[i] * res[i-1]
		}
	}
	if den > 0 {
		f.Rho1 = num / den
	}
	rho := math.Min(f.Rho1, 0.9)
	f.Inflation = math.Max(1, (1+rho)/(1-rho))
	dof := float64(n - p)
	s2 := sse / dof * f.Inflation
	k := float64(p + 1) // + the noise variance
	// A perfect fit has no log-likelihood; a floor of a micro-degree keeps
	// the criterion finite and still ranks a closer fit better.
	f.AICc = float64(n)*math.Log(math.Max(sse/float64(n), 1e-12)) + 2*k + 2*k*(k+1)/math.Max(float64(n)-k-1, 1)

	// Profile interval: τ values whose profiled SSE exceeds the minimum by
	// no more than F(1, n−p) quantile × s².
	fq := distuv.F{D1: 1, D2: dof}.Quantile(level)
	limit := sse + fq*math.Max(s2, 1e-12)
	bound := func(to float64) (float64, bool) {
		// Walk out from the optimum in growing steps until the profile
		// exceeds the limit, then bisect (in log τ) between the last two.
		in, out := tau, tau
		for step := 1.02; ; step *= 1.3 {
			if to > tau {
				out = math.Min(in*step, to)
			} else {
				out = math.Max(in/step, to)
			}
			if prof(out) > limit {
				break
			}
			if out == to {
				return to, false
			}
			in = out
		}
		for range 20 {
			m := math.Sqrt(in * out)
			if prof(m) > limit {
				out = m
			} else {
				in = m
			}
		}
		return math.Sqrt(in * out), true
	}
	var okLo, okHi bool
	f.TauLo, okLo = bound(tauMin)
	f.TauHi, okHi = bound(tauMax)
	if !okLo || !okHi {
		return f, fmt.Errorf("%w: its %.0f %% interval reaches the search edge (%.3g–%.3g s)", errUnbounded, 100*level, tauMin, tauMax)
	}

	// Linearised covariance for the linear coefficients, with τ's own
	// column (numerical derivative) so their errors include τ's.
	jac := mat.NewDense(n, p, nil)
	for i := range n {
		for k := range cols {
			jac.Set(i, k, cols[k][i])
		}
	}
	for j, t := range taus {
		h := t * 1e-5
		up := append([]float64(nil), taus...)
		up[j] = t + h
		cu := columns(b, x, up)
		for i := range n {
			d := 0.0
			for k := range cu {
				d += coef[k] * (cu[k][i] - cols[k][i])
			}
			jac.Set(i, len(cols)+j, d/h)
		}
	}
	var jtj, cov mat.Dense
	jtj.Mul(jac.T(), jac)
	f.TQuant = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.Quantile(0.5 + level/2)
	if err := cov.Inverse(&jtj); err != nil {
		return f, fmt.Errorf("the fit's covariance cannot be computed: %w", err)
	}
	f.CoefCov = make([][]float64, len(coef))
	for k := range coef {
		f.CoefCov[k] = make([]float64, len(coef))
		for j := range coef {
			f.CoefCov[k][j] = s2 * cov.At(k, j)
		}
	}
	return f, nil
}
