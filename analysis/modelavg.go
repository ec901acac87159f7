package analysis

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// ModelFit is one admitted model's own (conditional) estimates: what the
// fit reports when that model alone is believed.
type ModelFit struct {
	Model string  `json:"model"`
	AICc  float64 `json:"aicc"`
	// Weight is the model's Akaike weight among the admitted models.
	Weight float64 `json:"weight"`
	// TauS is τ (the slow one) with its profile interval.
	TauS Estimate `json:"tau_s"`
	// RiseC is the load fit's rise with its interval (absent for a cooldown).
	RiseC *Estimate `json:"rise_c,omitempty"`
}

// akaikeWeights are w_i = e^(−Δ_i/2) / Σ_j e^(−Δ_j/2), Δ_i = AICc_i − min AICc
// (Burnham & Anderson 2002, §2.9): the relative support the data give each
// model of the set.
func akaikeWeights(aicc []float64) []float64 {
	lo := math.Inf(1)
	for _, a := range aicc {
		lo = math.Min(lo, a)
	}
	w := make([]float64, len(aicc))
	sum := 0.0
	for i, a := range aicc {
		w[i] = math.Exp(-(a - lo) / 2)
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// modelAverage returns the model-averaged estimate Σ w_i θ_i and the
// model-averaged tail-area interval (MATA, Turek & Fletcher 2012): the
// bounds L and U with Σ w_i P_i(θ < L) = Σ w_i P_i(θ > U) = α/2, where
// P_i is model i's sampling distribution of θ. Each P_i is a Student t
// with dof[i] degrees of freedom split at θ_i, scaled on each side so that
// its own central 1−α interval is exactly the model's interval [lo_i, hi_i]
// (a profile interval is asymmetric). With one model, or one weight of 1,
// this gives back that model's estimate and interval; with two that differ,
// it spans the spread between them as far as the weaker one has support,
// which a single model's interval, conditional on that model being right,
// leaves out. Burnham & Anderson's unconditional variance,
// [Σ w_i √(var_i + (θ_i − θ̄)²)]², is the same idea for symmetric intervals;
// MATA keeps the profile interval's asymmetry and, in Turek & Fletcher's
// simulations, holds its nominal coverage better.
func modelAverage(est []Estimate, w, dof []float64, level float64) Estimate {
	avg := Estimate{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, e := range est {
		avg.Value += w[i] * e.Value
		lo, hi = math.Min(lo, e.Lo), math.Max(hi, e.Hi)
	}
	if len(est) == 1 {
		return est[0]
	}
	q := make([]float64, len(est))
	for i := range est {
		q[i] = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof[i]}.Quantile(0.5 + level/2)
	}
	// cdf is Σ w_i P_i(θ ≤ x), non-decreasing in x; at min lo_i it is at
	// most α/2 and at max hi_i at least 1 − α/2, so both bounds lie between.
	cdf := func(x float64) float64 {
		p := 0.0
		for i, e := range est {
			var s float64
			if x < e.Value {
				s = (e.Value - e.Lo) / q[i]
			} else {
				s = (e.Hi - e.Value) / q[i]
			}
			switch {
			case s > 0:
				p += w[i] * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof[i]}.CDF((x-e.Value)/s)
			case x >= e.Value:
				p += w[i]
			}
		}
		return p
	}
	solve := func(target float64) float64 {
		a, b := lo, hi
		for range 60 {
			m := (a + b) / 2
			if cdf(m) < target {
				a = m
			} else {
				b = m
			}
		}
		return (a + b) / 2
	}
	alpha := 1 - level
	avg.Lo, avg.Hi = solve(alpha/2), solve(1-alpha/2)
	// A model with under α/2 of the weight but far away moves the mean
	// more than the tails: the interval is stretched to hold the estimate
	// it is reported with.
	avg.Lo, avg.Hi = math.Min(avg.Lo, avg.Value), math.Max(avg.Hi, avg.Value)
	return avg
}
