package hold

import (
	"fmt"
	"math"
)

// Model is how a component's temperature answers the job's duty u, the
// fraction of time the job runs (0 paused, 1 free):
//
//	T = BaseC + FastC·u_fast + x_slow,  τ_slow·dx_slow/dt = SlowC·u − x_slow
//
// where u_fast follows u within TauFastS (an H100's die: a sub-second jump of
// most of the rise) and the slow part follows with TauS (its heatsink: tens
// of seconds; a tank's coolant: tens of minutes). It is what heatsink's load
// fit measures on a free run (analysis.LoadFit: the rise above idle, its fast
// share and τ), with the power-to-temperature gain folded in: FastC + SlowC
// is the free-running rise above BaseC, so duty needs no watts.
type Model struct {
	BaseC    float64 `json:"base_c"`     // temperature with the job paused (idle)
	FastC    float64 `json:"fast_c"`     // rise that follows the duty within TauFastS
	SlowC    float64 `json:"slow_c"`     // rise that follows with TauS
	TauS     float64 `json:"tau_s"`      // the slow part's time constant
	TauFastS float64 `json:"tau_fast_s"` // the fast part's, 0 when quicker than the sampling showed
	// Source says where the model came from, for run.json and the report:
	// "run RUN_ID (dgemm, 2026-11-22)", "--hold-model", "sim".
	Source string `json:"source,omitempty"`
}

// RiseC is the free-running rise above BaseC.
func (m Model) RiseC() float64 { return m.FastC + m.SlowC }

// Validate refuses a model the controller cannot use, naming what is wrong.
func (m Model) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"base_c", m.BaseC}, {"fast_c", m.FastC}, {"slow_c", m.SlowC}, {"tau_s", m.TauS}, {"tau_fast_s", m.TauFastS}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("hold model: %s is %v", f.name, f.v)
		}
	}
	switch {
	case m.FastC < 0 || m.SlowC < 0:
		return fmt.Errorf("hold model: a rise is negative (fast_c %g, slow_c %g): the job would cool the component", m.FastC, m.SlowC)
	case m.RiseC() < 0.5:
		return fmt.Errorf("hold model: the job raises the component by %.2f °C running free: nothing to hold", m.RiseC())
	case m.TauS <= 0:
		return fmt.Errorf("hold model: tau_s %g must be positive", m.TauS)
	case m.TauFastS < 0 || m.TauFastS >= m.TauS:
		return fmt.Errorf("hold model: tau_fast_s %g must be from 0 to under tau_s %g", m.TauFastS, m.TauS)
	}
	return nil
}

// Scaled returns m with both rises multiplied by g: the model a gain error
// of g makes, or the refinement of one.
func (m Model) Scaled(g float64) Model {
	m.FastC *= g
	m.SlowC *= g
	return m
}

// FromLoadFit builds a model from a free run's load fit on the component
// (analysis.LoadFit's fields, passed as numbers so this package imports no
// analysis): idleC the idle mean, startC the fitted start, riseC the
// plateau's rise above idle, fastShare the fast part's share of
// plateau − start (NaN for a one-exponential fit), tauS and tauFastS.
// A jump faster than the sampling shows as startC above idleC: it is fast.
func FromLoadFit(idleC, startC, riseC, fastShare, tauS, tauFastS float64, source string) (Model, error) {
	jump := math.Max(0, startC-idleC)
	rest := riseC - jump
	fast := jump
	if !math.IsNaN(fastShare) && fastShare > 0 && rest > 0 {
		fast += fastShare * rest
	}
	if math.IsNaN(tauFastS) {
		tauFastS = 0
	}
	m := Model{BaseC: idleC, FastC: fast, SlowC: math.Max(0, riseC-fast), TauS: tauS, TauFastS: tauFastS, Source: source}
	if err := m.Validate(); err != nil {
		return Model{}, fmt.Errorf("from the load fit of %s: %w", source, err)
	}
	return m, nil
}
