package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestIdleStatsOverBaselineOnly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := firstOrder{T0: 35, DT: 40, Tau: 120, LoadS: 600}
	// Baseline is t in [-600, 0): the heating after 0 must not leak in.
	tt, v := sample(m.at, -600, 1200, 0.5, rng)
	st, err := Idle(tt, v, -600, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.N != 600 {
		t.Errorf("N = %d, want 600 readings", st.N)
	}
	// Uniform noise ±0.5 on 600 readings: the mean is within 3σ/√n of T0
	// (σ = 0.5/√3), the extremes within 0.02 of T0 ± 0.5.
	near(t, "mean", st.Mean, 35, 3*0.5/math.Sqrt(3)/math.Sqrt(600))
	near(t, "min", st.Min, 34.5, 0.02)
	near(t, "max", st.Max, 35.5, 0.02)
}

func TestIdleSkipsNaNAndReportsEmptyBaseline(t *testing.T) {
	tt := []float64{0, 1, 2, 3, 4}
	v := []float64{30, math.NaN(), 32, math.Inf(1), 34}
	st, err := Idle(tt, v, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if st.N != 3 || st.Min != 30 || st.Max != 34 || st.Mean != 32 {
		t.Errorf("got %+v, want N=3 min 30 mean 32 max 34", st)
	}
	if _, err := Idle(tt, v, 10, 20); err == nil || !strings.Contains(err.Error(), "no readings in the baseline") {
		t.Errorf("empty baseline: err = %v", err)
	}
	if _, err := Idle(tt, []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()}, 0, 5); err == nil {
		t.Error("all-NaN baseline gave statistics")
	}
}
