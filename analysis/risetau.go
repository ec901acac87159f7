package analysis

import (
	"fmt"
	"math"
)

// A GPU's rise under a step of power has two parts: the die jumps within
// seconds, then its heatsink warms over tens of seconds. A time constant
// read off the whole rise (the time to 63 %) is pulled towards the jump:
// on the real H100s of testdata/ it measured 10-12 s where the load fit
// over two minutes gives 14-17 s for the core, and a survey that sized its
// loads from the jump cut them before the heatsink had warmed. The slow
// time constant is only fixed once the readings reach well past it, so a
// measurement during a load has to wait until the fit stops moving.

// settledTauBack is how many readings back SettledTau looks for the
// earlier estimate the current one must agree with: 15 s at 1 Hz.
const settledTauBack = 15

// settledTauAgreement is how closely (relative) the two estimates must
// agree: the real 120 s H100 loads moved under 10 % per 10 s once past
// four slow time constants, and by 15-30 % before.
const settledTauAgreement = 0.10

// SettledTau measures the slow time constant of a rise still in progress:
// x are seconds since the load began, v the readings (°C) and idleMeanC
// the level before the load. It fits the load model (one or two
// exponentials, as FitLoad, τ the slow one) to all readings and to all but
// the last 15 (15 s at 1 Hz), and reports τ once both fits hold (plateau
// in the data, τ's interval within a factor maxTauSpread), agree within
// 10 %, and the readings span four or more of it. The error says why not
// yet. On the real H100 DGEMM loads of testdata/ it settles 65-80 s into
// the load at 16 s, which the full two-minute fits put at 14-18 s.
func SettledTau(x, v []float64, idleMeanC float64) (float64, error) {
	if len(x) == 0 {
		return 0, fmt.Errorf("no readings of the load yet")
	}
	if len(x) != len(v) {
		return 0, fmt.Errorf("%d times but %d readings", len(x), len(v))
	}
	if len(x) <= settledTauBack+minFitReadings {
		return 0, fmt.Errorf("%d readings of the load; τ is measured from %d on", len(x), settledTauBack+minFitReadings+1)
	}
	end, earlier := x[len(x)-1], x[len(x)-1-settledTauBack]
	now, err := riseTau(x, v, idleMeanC, end)
	if err != nil {
		return 0, err
	}
	before, err := riseTau(x, v, idleMeanC, earlier)
	if err != nil {
		return 0, fmt.Errorf("τ %.3g s over %.3g s, but not over the first %.3g s: %w", now, end, earlier, err)
	}
	if d := math.Abs(now-before) / now; d > settledTauAgreement {
		return 0, fmt.Errorf("τ still moving: %.3g s over %.3g s, %.3g s over the first %.3g s", now, end, before, earlier)
	}
	if end < 4*now {
		return 0, fmt.Errorf("τ %.3g s: the load has run %.3g s, under four of it", now, end)
	}
	return now, nil
}

// riseTau is the load fit's slow τ over the readings up to x ≤ to.
func riseTau(x, v []float64, idleMeanC, to float64) (float64, error) {
	o := DefaultOptions()
	load := Span{Start: 0, End: to}
	if err := loadOvershoot(x, v, load, idleMeanC); err != nil {
		return 0, err
	}
	f, err := FitLoad(x, v, load, idleMeanC, o.MinRise, o.MaxGap.Seconds(), 1-o.Alpha)
	if err != nil {
		return 0, err
	}
	if err := determined(f.TauLoS, f.TauHiS); err != nil {
		return 0, err
	}
	return f.TauS, nil
}
