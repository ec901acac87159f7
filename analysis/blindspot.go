package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// BlindSpot is the immersion blind spot for one component: a tank's
// controller sees only the coolant, so what matters is how far the
// hardware rose while the coolant barely moved, and whether the hardware
// neared its own limit before the coolant (and so the controller) reacted.
// Times (_at_s) are seconds since the run's start.
type BlindSpot struct {
	Component string `json:"component"`
	Coolant   string `json:"coolant"`
	// FromS and ToS are the span both rises are taken over: the load
	// (trimmed to its powered span where the power shows the work ended
	// early).
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	// RiseC and CoolantRiseC are the peak over the span less the idle mean
	// over the baseline, of the component and of the coolant.
	RiseC        float64 `json:"rise_c"`
	CoolantRiseC float64 `json:"coolant_rise_c"`
	PeakC        float64 `json:"peak_c"`
	// Limit is the component's own limit; NearLimitAtS the first time from
	// the start of the load to the end of the recording that it came
	// within NearLimitC of it (nil: it never did, or no limit recorded).
	Limit        *Limit   `json:"limit"`
	NearLimitC   float64  `json:"near_limit_c"`
	NearLimitAtS *float64 `json:"near_limit_at_s"`
	// CoolantMovedAtS is the first time after the start of the load that
	// the coolant's smoothed readings stood CoolantMoveC above its idle
	// mean (nil: never, to the end of the recording).
	CoolantMoveC    float64  `json:"coolant_move_c"`
	CoolantMovedAtS *float64 `json:"coolant_moved_at_s"`
	// ControllerC is the coolant temperature the tank's controller acts at
	// (the --controller-c option, else the setpoint the tank recorded) and
	// ControllerSource which of them; ControllerReachedAtS when the coolant
	// first reached it (nil: never).
	ControllerC          *float64 `json:"controller_c"`
	ControllerSource     string   `json:"controller_source,omitempty"`
	ControllerReachedAtS *float64 `json:"controller_reached_at_s"`
}

// blindSpot fills rep.BlindSpot for every hardware component of a run with
// a tank coolant temperature.
func (a *analyzer) blindSpot(coolants []*Component) {
	rep := a.rep
	rep.BlindSpot = []BlindSpot{}
	switch {
	case len(coolants) == 0:
		rep.NotComputed["blind_spot"] = "no tank coolant temperature recorded (not an immersed run)"
		return
	case a.ph.Load == nil || a.ph.Baseline == nil:
		rep.NotComputed["blind_spot"] = "needs a baseline and a load phase"
		return
	}
	load := *a.ph.Load
	var whyNot []string
	for _, cr := range rep.Components {
		c := cr.Series
		if c == nil || c.Kind == KindCoolant || c.Kind == KindWater || cr.IdleMeanC == nil || cr.LoadPeakC == nil {
			continue
		}
		cool := coolantFor(c, coolants)
		if cool == nil {
			whyNot = append(whyNot, c.ID+": several tanks recorded and none shares its host")
			continue
		}
		ci, err := Idle(cool.T, cool.V, a.ph.Baseline.Start, a.ph.Baseline.End)
		if err != nil {
			whyNot = append(whyNot, fmt.Sprintf("%s: coolant %s", c.ID, err))
			continue
		}
		_, coolPeak, err := Peak(cool.T, cool.V, load.Start, load.End)
		if err != nil {
			whyNot = append(whyNot, fmt.Sprintf("%s: coolant during the load: %s", c.ID, err))
			continue
		}
		b := BlindSpot{Component: c.ID, Coolant: cool.ID, FromS: load.Start, ToS: load.End,
			RiseC: *cr.LoadPeakC - *cr.IdleMeanC, CoolantRiseC: coolPeak - ci.Mean, PeakC: *cr.LoadPeakC,
			Limit: cr.Limit, NearLimitC: a.o.NearLimitC, CoolantMoveC: a.o.CoolantMoveC}
		if b.Limit != nil {
			b.NearLimitAtS = firstAtOrAbove(c.T, c.V, load.Start, b.Limit.C-a.o.NearLimitC)
		}
		sm := movingAverage(cool.T, cool.V, a.o.OnsetSmooth.Seconds())
		b.CoolantMovedAtS = firstAtOrAbove(cool.T, sm, load.Start, ci.Mean+a.o.CoolantMoveC)
		b.ControllerC, b.ControllerSource = a.controller(cool)
		if b.ControllerC != nil {
			b.ControllerReachedAtS = firstAtOrAbove(cool.T, cool.V, load.Start, *b.ControllerC)
		}
		rep.BlindSpot = append(rep.BlindSpot, b)
	}
	if len(rep.BlindSpot) == 0 {
		why := "no hardware component with idle statistics and a load peak"
		if len(whyNot) > 0 {
			why = strings.Join(whyNot, "; ")
		}
		rep.NotComputed["blind_spot"] = why
	}
}

// coolantFor is the coolant a component sits in: the only one, or the one
// on its host.
func coolantFor(c *Component, coolants []*Component) *Component {
	if len(coolants) == 1 {
		return coolants[0]
	}
	for _, k := range coolants {
		if k.Host == c.Host {
			return k
		}
	}
	return nil
}

// controller returns the coolant temperature the tank's controller acts
// at: the ControllerC option, else the lowest setpoint the tank recorded.
func (a *analyzer) controller(cool *Component) (*float64, string) {
	if a.o.ControllerC > 0 {
		return ptr(a.o.ControllerC), "option --controller-c"
	}
	best := math.Inf(1)
	for _, s := range a.r.Find(schema.Tank, schema.FieldSetpointC, func(s *Series) bool { return s.Tag(schema.TagTank) == cool.Tank }) {
		for _, x := range s.V {
			if x > 0 && !math.IsInf(x, 0) {
				best = math.Min(best, x)
			}
		}
	}
	if math.IsInf(best, 1) {
		return nil, ""
	}
	return ptr(best), "the tank's recorded setpoint_c"
}

// firstAtOrAbove is the first time at or after from that v reaches level.
func firstAtOrAbove(t, v []float64, from, level float64) *float64 {
	i, _ := window(t, from, from)
	for k := i; k < len(t); k++ {
		if v[k] >= level {
			return ptr(t[k])
		}
	}
	return nil
}

// Sentence says the blind spot of b in one sentence, for people.
func (b BlindSpot) Sentence() string {
	s := fmt.Sprintf("Under load %s rose %.1f °C over idle while the coolant, the only temperature the tank's controller sees, rose %.2f °C over the same %.0f s",
		b.Component, b.RiseC, math.Max(b.CoolantRiseC, 0), b.ToS-b.FromS)
	switch {
	case b.Limit == nil:
		s += "; it recorded no limit of its own"
	case b.NearLimitAtS == nil:
		s += fmt.Sprintf("; it stayed over %.3g °C below its %s (%.0f °C)", b.NearLimitC, b.Limit.Field, b.Limit.C)
	default:
		s += fmt.Sprintf("; it came within %.3g °C of its %s (%.0f °C) %.0f s into the load", b.NearLimitC, b.Limit.Field, b.Limit.C, *b.NearLimitAtS-b.FromS)
		if b.CoolantMovedAtS == nil || *b.CoolantMovedAtS > *b.NearLimitAtS {
			s += ", before the coolant had moved"
		}
	}
	if b.CoolantMovedAtS == nil {
		s += fmt.Sprintf("; the coolant never rose %.3g °C above its idle mean", b.CoolantMoveC)
	} else {
		s += fmt.Sprintf("; the coolant moved %.3g °C %.0f s into the load", b.CoolantMoveC, *b.CoolantMovedAtS-b.FromS)
	}
	if b.ControllerC != nil {
		if b.ControllerReachedAtS == nil {
			s += fmt.Sprintf(" and never reached the controller's %.1f °C", *b.ControllerC)
		} else {
			s += fmt.Sprintf(" and reached the controller's %.1f °C %.0f s into the load", *b.ControllerC, *b.ControllerReachedAtS-b.FromS)
		}
	}
	return s + "."
}
