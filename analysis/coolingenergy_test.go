package analysis

import (
	"math"
	"testing"
)

func TestIntegrateTrapezoidClippedAndGaps(t *testing.T) {
	// v = 2t at 1 Hz: the integral over [a, b] is b² - a², exact for a line
	// even when the span's edges fall between readings.
	tt, v := sample(func(x float64) float64 { return 2 * x }, 0, 100, 0, nil)
	in, err := Integrate(tt, v, 10.5, 40.25, 5)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "integral", in.Value, 40.25*40.25-10.5*10.5, 1e-9)
	near(t, "gap", in.GapS, 0, 0)

	// A 20 s hole is bridged linearly (still exact for a line) and counted.
	var gt, gv []float64
	for i := range tt {
		if tt[i] > 50 && tt[i] < 70 {
			continue
		}
		gt, gv = append(gt, tt[i]), append(gv, v[i])
	}
	in, err = Integrate(gt, gv, 0, 100, 5)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "bridged integral", in.Value, 100*100, 1e-9)
	near(t, "gap", in.GapS, 20, 1e-9)

	// A span reaching past the data counts the uncovered part as gap.
	in, err = Integrate(tt, v, 90, 130, 5)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "partial integral", in.Value, 100*100-90*90, 1e-9)
	near(t, "uncovered", in.GapS, 30, 1e-9)

	// NaN readings are skipped as if absent.
	v[20] = math.NaN()
	in, err = Integrate(tt, v, 0, 100, 5)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "integral over a NaN", in.Value, 100*100, 1e-9)

	if _, err := Integrate(tt, v, 200, 300, 5); err == nil {
		t.Error("span without readings gave an integral")
	}
	if _, err := Integrate(tt, v, 50, 40, 5); err == nil {
		t.Error("reversed span gave an integral")
	}
}

func TestUnaccountedNeedsEveryPart(t *testing.T) {
	tn := []float64{0, 1, 2, 3}
	pn := []float64{1000, 1000, 1000, math.NaN()}
	gpuT, gpuV := []float64{0, 1, 2, 3}, []float64{300, 400, 500, 500}
	raplT, raplV := []float64{0.5, 1.5, 2.5}, []float64{100, 200, 300} // interpolated, never extrapolated
	got := Unaccounted(tn, pn, [][]float64{gpuT, raplT}, [][]float64{gpuV, raplV}, 1)
	// t=0: rapl's first reading is at 0.5, nothing before: NaN.
	want := []float64{math.NaN(), 1000 - 400 - 150, 1000 - 500 - 250, math.NaN()}
	for k := range want {
		if math.IsNaN(want[k]) != math.IsNaN(got[k]) || (!math.IsNaN(want[k]) && got[k] != want[k]) {
			t.Errorf("unaccounted[%d] = %v, want %v", k, got[k], want[k])
		}
	}
}
