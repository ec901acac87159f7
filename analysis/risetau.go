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

// SettledTauWindowS is how far back SettledTau looks for the earlier
// estimate that the current one must agree with.
const SettledTauWindowS = 15.0

// settledTauAgreement is how closely (relative) the two estimates must
// agree: the real 120 s H100 loads moved under 10 % per 10 s once past
// three slow time constants, and by 20-30 % before.
const settledTauAgreement = 0.10

// SettledTau measures the slow time constant of a rise still in progress:
// x are seconds since the load began, v the readings (°C) and idleMeanC
// the level before the load. It fits the load model (one or two
// exponentials, as FitLoad, τ the slow one) to all readings and to those
// up to SettledTauWindowS earlier, and reports τ once both fits hold
// (plateau in the data, τ's interval within a factor maxTauSpread), agree
// within 10 %, and the readings span three or more of it. The error says
// why not yet.
func SettledTau(x, v []float64, idleMeanC float64) (float64, error) {
	if len(x) == 0 {
		return 0, fmt.Errorf("no readings of the load yet")
	}
	end := x[len(x)-1]
	now, err := riseTau(x, v, idleMeanC, end)
	if err != nil {
		return 0, err
	}
	before, err := riseTau(x, v, idleMeanC, end-SettledTauWindowS)
	if err != nil {
		return 0, fmt.Errorf("τ %.1f s over %.0f s, but not %.0f s earlier: %w", now, end, SettledTauWindowS, err)
	}
	if d := math.Abs(now-before) / now; d > settledTauAgreement {
		return 0, fmt.Errorf("τ still moving: %.1f s over %.0f s, %.1f s %.0f s earlier", now, end, before, SettledTauWindowS)
	}
	if end < 4*now {
		return 0, fmt.Errorf("τ %.1f s: the load has run %.0f s, under four of it", now, end)
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
