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

// A command that starts slowly (Python importing CuPy) does no GPU work in
// its first seconds. On the cupy hold of 2026-11-28 (model from its free
// run: idle 36, fast 25.8, slow 3.2 °C, τ 10.2 s; set point 54 °C) the card,
// warm from the free run, cooled 43 → 42 °C over the first second, and the
// first-second test fell back to the plain pause for the whole run (a
// 44 ↔ 57 °C sawtooth). main's a744932 no longer falls back on a rise too
// small, but the test is then spent on a second without work: a plant
// rising five times the model's once the work begins (20 °C at a duty of
// 0.16) goes uncaught. Ticks in which NVML saw the GPU idle go to
// StepQuiet, which starts over from each reading, so the first second in
// which the job works is tested: trusted when the duty is realised, not
// at 20 °C.
func TestFirstSecondWaitsForACommandsFirstWork(t *testing.T) {
	m := hold.Model{BaseC: 36, FastC: 25.8, SlowC: 3.2, TauS: 10.2, Source: "H100 cupy, 2026-11-28"}
	realised := func(u float64) float64 { return math.Round(m.FastC*u + m.SlowC*u*(1-math.Exp(-1/m.TauS))) }
	tooHigh := func(float64) float64 { return 20 }
	for _, c := range []struct {
		name      string
		quiet     bool // the idle seconds go to StepQuiet
		rise      func(u float64) float64
		wantPause bool
	}{
		{"quiet, then the duty realised", true, realised, false},
		{"quiet, then 20 °C", true, tooHigh, true},
		{"Step alone, then 20 °C: the test spent on the idle second", false, tooHigh, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctrl, err := hold.New(hold.Options{SetC: 54, Model: &m, IntervalS: 1})
			if err != nil {
				t.Fatal(err)
			}
			st := ctrl.Step(43, true)
			for _, r := range []float64{42, 41, 41} {
				if c.quiet {
					st = ctrl.StepQuiet(r, true)
				} else {
					st = ctrl.Step(r, true)
				}
				if st.Mode != hold.ModeModel || st.Duty <= 0 {
					t.Fatalf("idle at %v °C: %+v, want the model's mode at a duty over 0", r, st)
				}
			}
			next := ctrl.Step(41+c.rise(st.Duty), true)
			if fell := next.Mode == hold.ModePause; fell != c.wantPause {
				t.Fatalf("after a rise of %.0f °C at duty %.3f: %+v, want the plain pause %v", c.rise(st.Duty), st.Duty, next, c.wantPause)
			}
		})
	}
}
