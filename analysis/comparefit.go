package analysis

import (
	"fmt"
	"math"
)

// Estimate is a fitted value with its confidence interval.
type Estimate struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// FitDifference is run − reference for one fitted quantity, with the
// half-width of its interval: each estimate's half-width on the side
// facing the other, combined in quadrature (the two fits' errors are
// independent). WithinNoise says |Value| ≤ HalfWidth: the data cannot tell
// the two apart.
type FitDifference struct {
	Value       float64 `json:"value"`
	HalfWidth   float64 `json:"half_width"`
	WithinNoise bool    `json:"within_noise"`
}

// Differ returns b − a with its interval (see Difference).
func Differ(a, b Estimate) FitDifference {
	d := b.Value - a.Value
	var ha, hb float64
	if d >= 0 { // b above a: a's upper side, b's lower side
		ha, hb = a.Hi-a.Value, b.Value-b.Lo
	} else {
		ha, hb = a.Value-a.Lo, b.Hi-b.Value
	}
	hw := math.Hypot(ha, hb)
	return FitDifference{Value: d, HalfWidth: hw, WithinNoise: math.Abs(d) <= hw}
}

// fitSummaries fills s's fitted quantities for kind in r: the mean over
// the kind's components with a fit, each side of the interval combined as
// the root of the summed squares over n (independent errors).
func fitSummaries(s *KindSummary, kind string, r *Report) {
	var tau, rise, cool []Estimate
	for _, c := range r.Components {
		if c.Kind != kind {
			continue
		}
		if f := c.LoadFit; f != nil {
			tau = append(tau, Estimate{f.TauS, f.TauLoS, f.TauHiS})
			rise = append(rise, Estimate{f.RiseC, f.RiseLoC, f.RiseHiC})
		}
		if f := c.CooldownFit; f != nil {
			cool = append(cool, Estimate{f.CoolTauS, f.CoolTauLoS, f.CoolTauHiS})
		}
	}
	mean := func(key string, es []Estimate) *Estimate {
		if len(es) == 0 {
			if s.Components > 0 {
				s.NotComputed[key] = "no component of this kind has the fit"
			}
			return nil
		}
		var v, lo, hi float64
		for _, e := range es {
			v += e.Value
			lo += (e.Value - e.Lo) * (e.Value - e.Lo)
			hi += (e.Hi - e.Value) * (e.Hi - e.Value)
		}
		n := float64(len(es))
		v /= n
		return &Estimate{Value: v, Lo: v - math.Sqrt(lo)/n, Hi: v + math.Sqrt(hi)/n}
	}
	s.TauS, s.RiseC, s.CoolTauS = mean("tau_s", tau), mean("rise_c", rise), mean("cool_tau_s", cool)
}

// fitRatios compare the kind's fitted time constants and rise in s with
// the reference, saying when a difference is within the noise.
func fitRatios(kind string, ref, s KindSummary) []Ratio {
	name := KindName(kind)
	var out []Ratio
	for _, q := range []struct {
		key, what, unit string
		a, b            *Estimate
	}{
		{"tau_s", "time constant under load", "s", ref.TauS, s.TauS},
		{"rise_c", "rise to the plateau", "°C", ref.RiseC, s.RiseC},
		{"cool_tau_s", "cooldown time constant", "s", ref.CoolTauS, s.CoolTauS},
	} {
		r := Ratio{Quantity: q.key, Run: s.Run, Reference: ref.Run}
		if q.a == nil || q.b == nil {
			r.Text = fmt.Sprintf("%s %s not compared: no fit in %s", name, q.what, missing(ref.Run, q.a == nil, s.Run, q.b == nil))
			out = append(out, r)
			continue
		}
		d := Differ(*q.a, *q.b)
		r.Difference = &d
		if q.a.Value != 0 {
			r.Value = ptr(q.b.Value / q.a.Value)
		}
		both := fmt.Sprintf("%.3g %s [%.3g, %.3g] in %s, %.3g %s [%.3g, %.3g] in %s", q.b.Value, q.unit, q.b.Lo, q.b.Hi, s.Run,
			q.a.Value, q.unit, q.a.Lo, q.a.Hi, ref.Run)
		if d.WithinNoise {
			r.Text = fmt.Sprintf("%s %s: %s; the difference %+.2g ± %.2g %s is within the noise", name, q.what, both, d.Value, d.HalfWidth, q.unit)
		} else {
			r.Text = fmt.Sprintf("%s %s: %s; %s's is %.2fx %s's (difference %+.2g ± %.2g %s)", name, q.what, both, s.Run, *r.Value, ref.Run, d.Value, d.HalfWidth, q.unit)
		}
		out = append(out, r)
	}
	return out
}
