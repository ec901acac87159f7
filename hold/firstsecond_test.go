package hold_test

import (
	"math"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/hold"
)

// The first second's trust test on the H100 DGEMM hold of 2026-11-27
// (model from its free run: idle 49, fast 12.8, slow 14.6 °C, τ 15.5 s,
// the fast part quicker than the sampling). The job started held at 59 °C,
// still warm from the run before, and the controller asked for a duty of
// 0.154. An actuator that realises it raises the reading by the fast part
// times the duty plus a little of the slow part, some 2 °C in whole
// degrees, which the controller trusts; the
// 10 °C the device showed (59 → 69, the job running nearly free on queued
// GEMMs) is rightly not trusted, and the hold falls back to the plain pause.
func TestFirstSecondTrustsARealisedDuty(t *testing.T) {
	m := hold.Model{BaseC: 49, FastC: 12.8, SlowC: 14.6, TauS: 15.5, Source: "H100 dgemm, 2026-11-27"}
	cases := []struct {
		name      string
		riseC     func(u float64) float64 // the second reading's rise at the first duty
		wantPause bool
	}{
		{"the duty realised", func(u float64) float64 {
			return math.Round(m.FastC*u + m.SlowC*u*(1-math.Exp(-1/m.TauS)))
		}, false},
		{"the duty realised, read a degree high", func(u float64) float64 {
			return math.Round(m.FastC*u+m.SlowC*u*(1-math.Exp(-1/m.TauS))) + 1
		}, false},
		{"the device's queued GEMMs: 10 °C", func(float64) float64 { return 10 }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctrl, err := hold.New(hold.Options{SetC: 65, Model: &m, IntervalS: 1})
			if err != nil {
				t.Fatal(err)
			}
			first := ctrl.Step(59, true)
			if first.Mode != hold.ModeModel || first.Duty < 0.1 || first.Duty > 0.3 {
				t.Fatalf("first step %+v, want the model's mode at a duty near 0.15", first)
			}
			second := ctrl.Step(59+c.riseC(first.Duty), true)
			fell := second.Mode == hold.ModePause
			if fell != c.wantPause {
				t.Fatalf("after a rise of %.0f °C at duty %.3f: mode %s (%q), want the plain pause %v",
					c.riseC(first.Duty), first.Duty, second.Mode, second.Changed, c.wantPause)
			}
			if fell && !strings.Contains(second.Changed, "first second") {
				t.Errorf("fell back for %q, want the first second's rise", second.Changed)
			}
		})
	}
}
