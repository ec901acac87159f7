package analysis

import (
	"math"
	"strings"
)

// Why: an episode's baseline begins as soon as the previous load of
// another GPU of the host has ended (episodes.go), so a GPU its neighbour
// heated spends the start of its baseline shedding that heat. The idle
// mean is then above the GPU's rest, while the end of its own load (the
// plateau, or the last readings of a lower bound) has long lost it: the
// rise, and with it the °C/W, reads low. On the simulated fleet of
// docs/survey.md a GPU planted at 0.040 °C/W read 0.0364 downstream of a
// neighbour that heats it by 0.025 °C/W. A hotter-running GPU downstream
// of a hot one would hide that way.

// correctNeighbourDecay adds back, to the thermal resistance of each GPU
// episode whose baseline follows another GPU's load, the part of that
// load's heat that was still in the baseline and gone by the end of the
// load. The heat at the end of the other load is the coupling's own
// measurement for that episode (its rise_c, over this GPU's reference
// before that load); it is taken to leave at the GPU's own time constant
// (the median cooldown τ of its episodes, else the load τ), as the
// coupling's own decay correction takes it.
func correctNeighbourDecay(rows []ComponentResult, eps []*Episode, cs []Coupling) {
	for i := range rows {
		row := &rows[i]
		kind := ""
		switch {
		case strings.Contains(row.ID, KindGPUCore+":"):
			kind = "core"
		case strings.Contains(row.ID, KindGPUMem+":"):
			kind = "memory"
		default:
			continue
		}
		tau := ownTauS(row.Episodes)
		for j := range row.Episodes {
			r := &row.Episodes[j]
			if r.Fingerprint == nil || r.Fingerprint.ThermalResistanceCPerW == nil || r.Fingerprint.PowerW == nil || r.Fingerprint.IdlePowerW == nil || r.Episode >= len(eps) {
				continue
			}
			e := eps[r.Episode]
			src, heat, ok := heatBeforeBaseline(e, eps, cs, kind)
			if !ok || tau <= 0 {
				continue
			}
			dp := *r.Fingerprint.PowerW - *r.Fingerprint.IdlePowerW
			// The rise is read at the end of the load, or at a reacted
			// load's peak.
			ref := e.EndS
			if p := r.Fingerprint.PeakAfterS; p != nil {
				ref = e.StartS + *p
			}
			c := decayCorrectionC(heat, tau, e.Baseline.Start-src.EndS, e.Baseline.End-src.EndS, ref-src.EndS)
			if c <= 0 || dp <= 0 {
				continue
			}
			fp := r.Fingerprint
			fp.NeighbourDecayC, fp.NeighbourDecayFrom = ptr(c), src.GPU
			seen := map[*float64]bool{} // a lower bound's Lo is its value
			for _, p := range []*float64{fp.ThermalResistanceCPerW, fp.ThermalResistanceLoCPerW, fp.ThermalResistanceHiCPerW, fp.EndOfLoadCPerW} {
				if p != nil && !seen[p] {
					seen[p] = true
					*p += c / dp
				}
			}
		}
	}
}

// heatBeforeBaseline finds the load of another GPU of e's host that ended
// last before e's baseline began, and the heat it left in e's GPU (the
// coupling's rise for that episode); false where there is none, the
// coupling did not measure it, or it left none.
func heatBeforeBaseline(e *Episode, eps []*Episode, cs []Coupling, kind string) (*Episode, float64, bool) {
	if e.Baseline == nil || e.GPU == "" {
		return nil, 0, false
	}
	var src *Episode
	for _, o := range eps {
		if o.Host == e.Host && o.GPU != "" && o.GPU != e.GPU && o.EndS <= e.Baseline.Start+1e-9 && (src == nil || o.EndS > src.EndS) {
			src = o
		}
	}
	if src == nil {
		return nil, 0, false
	}
	for _, c := range cs {
		if c.Host != e.Host || c.Source != src.GPU || c.Neighbour != e.GPU || c.Kind != kind {
			continue
		}
		for _, ce := range c.Episodes {
			if ce.Episode == src.Index && ce.RiseC > 0 {
				return src, ce.RiseC, true
			}
		}
	}
	return nil, 0, false
}

// decayCorrectionC is how much heat that leaves at time constant tau from
// heatC at x = 0 raises the mean over [a, b] above its level at x = end:
// what the idle mean of a baseline [a, b] held that the end of the load
// no longer does.
func decayCorrectionC(heatC, tau, a, b, end float64) float64 {
	if b <= a || tau <= 0 {
		return 0
	}
	mean := heatC * tau / (b - a) * (math.Exp(-a/tau) - math.Exp(-b/tau))
	return mean - heatC*math.Exp(-end/tau)
}

// ownTauS is a GPU component's time constant: the median cooldown τ of
// its episodes, else the median load τ; 0 where neither was fitted.
func ownTauS(rs []EpisodeResult) float64 {
	var cool, load []float64
	for _, r := range rs {
		if r.CooldownFit != nil {
			cool = append(cool, r.CooldownFit.CoolTauS)
		}
		if r.LoadFit != nil {
			load = append(load, r.LoadFit.TauS)
		}
	}
	switch {
	case len(cool) > 0:
		return median(cool)
	case len(load) > 0:
		return median(load)
	}
	return 0
}
