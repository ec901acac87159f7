package analysis

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// The p-value computed another way: for Student's t with ν degrees of
// freedom, P(|T| > t) = I_{ν/(ν+t²)}(ν/2, 1/2), the regularised incomplete
// beta function; the slope's t statistic comes from the correlation r as
// t = r √(ν / (1 - r²)).
func pValueByBeta(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	r := sxy / math.Sqrt(sxx*syy)
	nu := n - 2
	tt := r * math.Sqrt(nu/(1-r*r))
	return mathext.RegIncBeta(nu/2, 0.5, nu/(nu+tt*tt))
}

func TestLinearFitPValueMatchesIncompleteBeta(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		name  string
		slope float64
		n     int
	}{{"strong", 0.05, 40}, {"weak", 0.004, 25}, {"none", 0, 30}, {"few", 0.02, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			var x, y []float64
			for i := 0; i < tc.n; i++ {
				temp := 40 + 40*rng.Float64()
				x = append(x, temp)
				y = append(y, 10+tc.slope*temp+0.1*rng.NormFloat64())
			}
			f, err := LinearFit(x, y)
			if err != nil {
				t.Fatal(err)
			}
			want := pValueByBeta(x, y)
			near(t, "p-value", f.PValue, want, 1e-9+1e-6*want)
			if tc.slope == 0.05 && (f.PValue > 1e-6 || math.Abs(f.Slope-0.05) > 0.01) {
				t.Errorf("strong slope: slope %.4f p %.3g", f.Slope, f.PValue)
			}
		})
	}
}

func TestLinearFitRefusals(t *testing.T) {
	if _, err := LinearFit([]float64{1, 2}, []float64{1, 2}); err == nil {
		t.Error("2 points accepted")
	}
	if _, err := LinearFit([]float64{5, 5, 5}, []float64{1, 2, 3}); err == nil {
		t.Error("constant x accepted")
	}
	if _, err := LinearFit([]float64{1, 2, 3}, []float64{4, 4, 4}); err == nil {
		t.Error("constant y accepted (its r² would be 0/0)")
	}
	if _, err := LinearFit([]float64{1, 2, 3}, []float64{1, 2}); err == nil {
		t.Error("mismatched lengths accepted")
	}
	f, err := LinearFit([]float64{1, 2, 3, 4}, []float64{3, 5, 7, 9})
	if err != nil || f.PValue != 0 || f.Slope != 2 || f.Intercept != 1 || f.R2 != 1 {
		t.Errorf("exact line: %+v, %v", f, err)
	}
}
