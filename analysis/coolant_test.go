package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// onsetTime is when a first-order response reaches fraction of its
// load-phase rise: delay - τ ln(1 - fraction (1 - e^(-L/τ))).
func onsetTime(m firstOrder, fraction float64) float64 {
	return m.Delay - m.Tau*math.Log(1-fraction*(1-math.Exp(-m.LoadS/m.Tau)))
}

func TestCoolantLagFirstOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	hw := firstOrder{T0: 45, DT: 35, Tau: 90, LoadS: 1800}
	cool := firstOrder{T0: 30, DT: 8, Tau: 900, LoadS: 1800, Delay: 40}
	th, vh := sample(hw.at, -600, 5400, 0.2, rng)
	tc, vc := sample(cool.at, -600, 5400, 0.05, rng)
	lag, err := CoolantLag(th, vh, tc, vc, 0, 5400, 45, 30, 0.1, 15, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := onsetTime(cool, 0.1) - onsetTime(hw, 0.1)
	near(t, "lag", lag, want, 4)
	if want < 100 {
		t.Fatalf("test is too weak: expected lag %.0f s", want)
	}
}

func TestPeakDifferenceFirstOrder(t *testing.T) {
	hw := firstOrder{T0: 45, DT: 35, Tau: 90, LoadS: 1800}
	cool := firstOrder{T0: 30, DT: 8, Tau: 900, LoadS: 1800, Delay: 40}
	th, vh := sample(hw.at, -600, 5400, 0, nil)
	// The coolant read at 0.5 s offsets, so interpolation is exercised.
	var tc, vc []float64
	for s := -600; s <= 5400; s++ {
		x := float64(s) + 0.5
		tc, vc = append(tc, x), append(vc, cool.at(x))
	}
	got, at, err := PeakDifference(th, vh, tc, vc, 0, 5400, 5)
	if err != nil {
		t.Fatal(err)
	}
	// Independent: the largest difference of the two closed forms on a 0.01 s grid.
	want, wantAt := math.Inf(-1), 0.0
	for x := 0.0; x <= 5400; x += 0.01 {
		if d := hw.at(x) - cool.at(x); d > want {
			want, wantAt = d, x
		}
	}
	near(t, "peak difference", got, want, 0.02)
	near(t, "at", at, wantAt, 1)
}

func TestCoolantRefusals(t *testing.T) {
	th, vh := sample(func(float64) float64 { return 50 }, 0, 100, 0, nil)
	tc, vc := sample(func(float64) float64 { return 30 }, 500, 600, 0, nil)
	if _, _, err := PeakDifference(th, vh, tc, vc, 0, 100, 5); err == nil || !strings.Contains(err.Error(), "no coolant readings") {
		t.Errorf("disjoint coolant: err = %v", err)
	}
	tc, vc = sample(func(float64) float64 { return 30 }, 0, 100, 0, nil)
	if _, err := CoolantLag(th, vh, tc, vc, 0, 100, 50, 30, 0.1, 15, 1); err == nil || !strings.Contains(err.Error(), "hardware: rises only") {
		t.Errorf("flat hardware: err = %v", err)
	}
}
