package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestHeatIntervalFirstOrderNoiseFree(t *testing.T) {
	m := firstOrder{T0: 35, DT: 40, Tau: 120, LoadS: 300}
	tt, v := sample(m.at, -300, 900, 0, nil)
	got, tPeak, peak, err := HeatInterval(tt, v, Span{0, 300, false}, 35, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Still rising at the end of the load: the peak is the last load reading.
	near(t, "t_peak", tPeak, 300, 0)
	near(t, "T_peak", peak, m.peak(), 1e-9)
	near(t, "heat interval", got, 300/(m.peak()-35), 1e-9)
}

// NVML reports whole degrees: the load-phase maximum is floor(T(end)) and is
// first reached at t* = -τ ln(1 - (floor(T(end)) - T0)/ΔT), rounded up to the
// next 1 Hz reading.
func TestHeatIntervalIntegerReadings(t *testing.T) {
	m := firstOrder{T0: 35, DT: 40, Tau: 120, LoadS: 600}
	tt, v := sample(func(x float64) float64 { return math.Floor(m.at(x)) }, -300, 900, 0, nil)
	top := math.Floor(m.peak())
	tStar := math.Ceil(-m.Tau * math.Log(1-(top-m.T0)/m.DT))
	got, tPeak, peak, err := HeatInterval(tt, v, Span{0, 600, false}, 35, 1)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "T_peak", peak, top, 0)
	near(t, "t_peak", tPeak, tStar, 0)
	near(t, "heat interval", got, tStar/(top-35), 1e-9)
}

// With noise ±0.3 °C the maximum can come up to Δ = 2·0.3/slope(end)
// seconds before the end of the load; the interval is bounded accordingly.
func TestHeatIntervalWithNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := firstOrder{T0: 35, DT: 40, Tau: 300, LoadS: 600}
	tt, v := sample(m.at, -300, 1200, 0.3, rng)
	idle, err := Idle(tt, v, -300, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, tPeak, _, err := HeatInterval(tt, v, Span{0, 600, false}, idle.Mean, 1)
	if err != nil {
		t.Fatal(err)
	}
	slopeEnd := m.DT / m.Tau * math.Exp(-m.LoadS/m.Tau)
	early := 2 * 0.3 / slopeEnd
	if tPeak < 600-early || tPeak > 600 {
		t.Errorf("t_peak = %.0f, want within [%.0f, 600]", tPeak, 600-early)
	}
	lo := (600 - early) / (m.peak() + 0.3 - 35 + 0.05)
	hi := 600 / (m.peak() - 0.3 - 35 - 0.05)
	if got < lo || got > hi {
		t.Errorf("heat interval = %.3f s/°C, want within [%.3f, %.3f]", got, lo, hi)
	}
}

func TestHeatIntervalRefusesNoRise(t *testing.T) {
	flat := func(float64) float64 { return 40 }
	tt, v := sample(flat, -100, 400, 0, nil)
	_, _, _, err := HeatInterval(tt, v, Span{0, 300, false}, 40, 1)
	if err == nil || !strings.Contains(err.Error(), "above the idle mean") {
		t.Errorf("flat series: err = %v, want a refusal naming the rise", err)
	}
	// A rise of 0.5 °C with a 1 °C minimum is refused, with 0.4 accepted.
	step := func(x float64) float64 { return 40 + 0.5*math.Min(1, math.Max(0, x/100)) }
	tt, v = sample(step, -100, 400, 0, nil)
	if _, _, _, err := HeatInterval(tt, v, Span{0, 300, false}, 40, 1); err == nil {
		t.Error("0.5 °C rise accepted with a 1 °C minimum")
	}
	if got, _, _, err := HeatInterval(tt, v, Span{0, 300, false}, 40, 0.4); err != nil || math.Abs(got-200) > 1e-9 {
		t.Errorf("0.5 °C rise with 0.4 minimum: %v, %v; want 100 s / 0.5 °C = 200 s/°C", got, err)
	}
	if _, _, _, err := HeatInterval(tt, v, Span{1000, 2000, false}, 40, 1); err == nil || !strings.Contains(err.Error(), "no readings") {
		t.Errorf("load outside the data: err = %v", err)
	}
}

// The least-squares slope of ΔT(1-e^(-t/τ)) over [0, w], in closed form:
// 12/w³ ∫(t - w/2) f(t) dt, with ∫(t-w/2)e^(-t/τ)dt = τ²(1-e^(-w/τ)) - τw e^(-w/τ) - (w/2)τ(1-e^(-w/τ)).
func lsSlopeExp(dT, tau, w float64) float64 {
	e := math.Exp(-w / tau)
	i := tau*tau*(1-e) - tau*w*e - w/2*tau*(1-e)
	return -dT * 12 / (w * w * w) * i
}

func TestSteepestRiseIsAtLoadStart(t *testing.T) {
	m := firstOrder{T0: 35, DT: 40, Tau: 300, LoadS: 900}
	// Sampled at 10 Hz so the discrete fit matches the continuous one.
	var tt, v []float64
	for s := -3000; s <= 12000; s++ {
		x := float64(s) / 10
		tt, v = append(tt, x), append(v, m.at(x))
	}
	got, at, err := SteepestRise(tt, v, 0, 900, 60, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := 1 / lsSlopeExp(m.DT, m.Tau, 60)
	near(t, "steepest s/°C", got, want, want*0.002)
	near(t, "window start", at, 0, 0)
	// The steepest instantaneous slope is ΔT/τ; the 60 s fit is a little flatter.
	if got <= m.Tau/m.DT {
		t.Errorf("fitted %.4f s/°C is steeper than the instantaneous maximum %.4f", got, m.Tau/m.DT)
	}
}

func TestSteepestRiseNoisyAndGapped(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := firstOrder{T0: 35, DT: 40, Tau: 300, LoadS: 900}
	tt, v := sample(m.at, -300, 1500, 0.2, rng)
	got, _, err := SteepestRise(tt, v, 0, 900, 60, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := 1 / lsSlopeExp(m.DT, m.Tau, 60)
	near(t, "noisy steepest", got, want, want*0.05)

	// Remove the first 120 s of the load: the windows there are not
	// covered, so the steepest rise moves to the first full window after.
	var gt, gv []float64
	for i := range tt {
		if tt[i] > 0 && tt[i] < 120 {
			continue
		}
		gt, gv = append(gt, tt[i]), append(gv, v[i])
	}
	got, at, err := SteepestRise(gt, gv, 0, 900, 60, 5)
	if err != nil {
		t.Fatal(err)
	}
	if at < 120 {
		t.Errorf("window at %.0f s spans the gap", at)
	}
	wantGap := 1 / (lsSlopeExp(m.DT, m.Tau, 60) * math.Exp(-120/m.Tau))
	near(t, "steepest after the gap", got, wantGap, wantGap*0.06)
}

func TestSteepestRiseRefusals(t *testing.T) {
	tt, v := sample(func(x float64) float64 { return 50 - x/100 }, 0, 600, 0, nil)
	if _, _, err := SteepestRise(tt, v, 0, 600, 60, 5); err == nil || !strings.Contains(err.Error(), "never rises") {
		t.Errorf("falling series: err = %v", err)
	}
	if _, _, err := SteepestRise(tt, v, 0, 30, 60, 5); err == nil || !strings.Contains(err.Error(), "window") {
		t.Errorf("load shorter than the window: err = %v", err)
	}
	if _, _, err := SteepestRise(tt, v, 0, 600, 0, 5); err == nil {
		t.Error("zero window accepted")
	}
}
