package analysis

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Fit is an ordinary least-squares line y = Intercept + Slope·x with its
// coefficient of determination and the two-sided p-value of the slope (the
// probability of a slope at least this steep if y did not depend on x).
type Fit struct {
	N         int     `json:"n"`
	Slope     float64 `json:"slope"`
	Intercept float64 `json:"intercept"`
	R2        float64 `json:"r2"`
	PValue    float64 `json:"p_value"`
	// SlopeSE is the slope's standard error, for its confidence interval
	// (slope ± t(n−2)·SE).
	SlopeSE float64 `json:"slope_se"`
}

// LinearFit fits y on x by least squares (gonum's stat.LinearRegression) and
// tests the slope with Student's t distribution on n-2 degrees of freedom.
// It needs at least three points, and x and y that vary; a perfect fit has
// p-value 0.
func LinearFit(x, y []float64) (Fit, error) {
	n := len(x)
	if n != len(y) {
		return Fit{}, fmt.Errorf("%d x values but %d y values", n, len(y))
	}
	if n < 3 {
		return Fit{}, fmt.Errorf("%d points; a fit with a p-value needs at least 3", n)
	}
	mx := stat.Mean(x, nil)
	sxx := 0.0
	for _, v := range x {
		sxx += (v - mx) * (v - mx)
	}
	if sxx == 0 {
		return Fit{}, fmt.Errorf("all %d x values are %.3g: nothing to regress on", n, x[0])
	}
	if allEqual(y, y[0]) {
		return Fit{}, fmt.Errorf("all %d y values are %.4g: no dependence to fit", n, y[0])
	}
	a, b := stat.LinearRegression(x, y, nil, false)
	f := Fit{N: n, Slope: b, Intercept: a, R2: stat.RSquared(x, y, nil, a, b)}
	sse := 0.0
	for i := range x {
		r := y[i] - (a + b*x[i])
		sse += r * r
	}
	dof := float64(n - 2)
	se := math.Sqrt(sse / dof / sxx)
	f.SlopeSE = se
	switch {
	case se == 0 && b == 0:
		f.PValue = 1
	case se == 0:
		f.PValue = 0
	default:
		tt := math.Abs(b / se)
		f.PValue = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: dof}.Survival(tt)
	}
	return f, nil
}

func allEqual(v []float64, to float64) bool {
	for _, x := range v {
		if x != to {
			return false
		}
	}
	return true
}
