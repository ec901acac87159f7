package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// After the load the component cools as T0 + A e^(-(t-tE)/τ); it is back
// within tol of the idle maximum T0 at tE + τ ln(A/tol).
func TestReturnToIdleFirstOrder(t *testing.T) {
	m := firstOrder{T0: 35, DT: 40, Tau: 120, LoadS: 600}
	tt, v := sample(m.at, -300, 3000, 0, nil)
	a := m.peak() - m.T0
	want := m.Tau * math.Log(a/1.0)
	got, err := ReturnToIdle(tt, v, 600, 35, 1, 60, 5)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "return to idle", got, math.Ceil(want), 0) // the first 1 Hz reading at or below the limit
}

// With uniform noise ±a the idle maximum is about T0 + a and a reading
// can exceed the curve by a: the return lies between the times the curve
// reaches T0 + tol + 2a and T0 + tol.
func TestReturnToIdleNoisy(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := firstOrder{T0: 35, DT: 40, Tau: 120, LoadS: 600}
	const noise = 0.2
	tt, v := sample(m.at, -600, 3000, noise, rng)
	idle, err := Idle(tt, v, -600, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReturnToIdle(tt, v, 600, idle.Max, 1, 60, 5)
	if err != nil {
		t.Fatal(err)
	}
	a := m.peak() - m.T0
	lo := m.Tau * math.Log(a/(1+2*noise))
	hi := m.Tau * math.Log(a/1.0)
	if got < lo-1 || got > hi+1 {
		t.Errorf("return to idle = %.0f s, want within [%.0f, %.0f]", got, lo, hi)
	}
}

func TestReturnToIdleHoldAndGaps(t *testing.T) {
	// Idle at 40 (max), load ends at 10; back at 20, a spike at 50 s, then
	// idle for good from 51 s.
	var tt, v []float64
	for s := 10; s <= 200; s++ {
		x := 40.0
		if s < 20 || s == 50 {
			x = 45
		}
		tt, v = append(tt, float64(s)), append(v, x)
	}
	got, err := ReturnToIdle(tt, v, 10, 40, 1, 60, 5)
	if err != nil || got != 41 {
		t.Errorf("spike inside the hold: got %v, %v; want 41 s (51 s - 10 s)", got, err)
	}
	// A 10 s hole (longer than the 5 s gap limit) restarts the hold after it.
	var gt, gv []float64
	for i := range tt {
		if tt[i] > 60 && tt[i] < 71 {
			continue
		}
		gt, gv = append(gt, tt[i]), append(gv, v[i])
	}
	got, err = ReturnToIdle(gt, gv, 10, 40, 1, 60, 5)
	if err != nil || got != 61 {
		t.Errorf("gap inside the hold: got %v, %v; want 61 s (71 s - 10 s)", got, err)
	}
	// NaN breaks the hold too.
	v[100] = math.NaN() // t = 110
	got, err = ReturnToIdle(tt, v, 10, 40, 1, 60, 5)
	if err != nil || got != 101 {
		t.Errorf("NaN inside the hold: got %v, %v; want 101 s", got, err)
	}
}

func TestReturnToIdleNotReached(t *testing.T) {
	m := firstOrder{T0: 35, DT: 40, Tau: 600, LoadS: 600}
	tt, v := sample(m.at, -300, 1500, 0, nil)
	_, err := ReturnToIdle(tt, v, 600, 35, 1, 60, 5)
	if err == nil || !strings.HasPrefix(err.Error(), "not reached") || !strings.Contains(err.Error(), "900 s recorded after the load") {
		t.Errorf("err = %v, want \"not reached\" naming the 900 s watched", err)
	}
	// Cut 30 s after the load: too short to judge, and said so.
	if _, err := ReturnToIdle(tt[:931], v[:931], 600, 35, 1, 60, 5); err == nil || !strings.HasPrefix(err.Error(), "not reached: only 30 s recorded after the load, under the 60 s") {
		t.Errorf("30 s after the load: err = %v", err)
	}
	if _, err := ReturnToIdle(tt, v, 5000, 35, 1, 60, 5); err == nil || !strings.Contains(err.Error(), "no readings after") {
		t.Errorf("load end after the data: err = %v", err)
	}
	if _, err := ReturnToIdle(tt, v, 600, 35, -1, 60, 5); err == nil {
		t.Error("negative tolerance accepted")
	}
}
