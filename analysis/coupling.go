package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Coupling is how much one GPU (Source) heats another (Neighbour) on the
// same host: over every episode in which the source was loaded while the
// neighbour stayed idle, the neighbour's rise over its own baseline per
// watt the source drew above its idle. One entry per ordered pair and
// kind (core or memory); CPerW is absent with the reason in NotComputed
// ("not measured: ...") where no such episode exists.
type Coupling struct {
	Host      string            `json:"host,omitempty"`
	Source    string            `json:"source"`
	Neighbour string            `json:"neighbour"`
	Kind      string            `json:"kind"`
	CPerW     *float64          `json:"c_per_w"`
	LoCPerW   *float64          `json:"lo_c_per_w"`
	HiCPerW   *float64          `json:"hi_c_per_w"`
	Episodes  []CouplingEpisode `json:"episodes"`
	// Run labels the run in a comparison of several.
	Run         string `json:"run,omitempty"`
	NotComputed string `json:"not_computed,omitempty"`
}

// CouplingEpisode is one episode behind a coupling: the source's power
// above idle, the neighbour's rise at the end of the load over its mean in
// the source's baseline, their ratio and its standard error.
type CouplingEpisode struct {
	Episode         int     `json:"episode"`
	PowerAboveIdleW float64 `json:"power_above_idle_w"`
	RiseC           float64 `json:"rise_c"`
	CPerW           float64 `json:"c_per_w"`
	SECPerW         float64 `json:"se_c_per_w"`
	// BaselineExcessC is how far the neighbour was above its own rest in
	// the source's baseline (still cooling from its own load), and
	// DecayCorrectionC how much of that it would have lost by the end of
	// the load at its own time constant, subtracted from the reference;
	// both absent when it was at rest or its rest or τ is unknown.
	BaselineExcessC  *float64 `json:"baseline_excess_c"`
	DecayCorrectionC *float64 `json:"decay_correction_c"`
}

// neighbourRest returns a GPU's rest temperature before `before` (the idle
// mean of its latest own episode that started earlier) and its time
// constant (the median over its episodes of the cooldown fit's τ, else the
// load fit's).
func neighbourRest(own []EpisodeResult, eps []*Episode, before float64) (restC, tauS float64, ok bool) {
	found := false
	var cool, load []float64
	for _, r := range own {
		if eps[r.Episode].StartS < before && r.IdleMeanC != nil {
			restC, found = *r.IdleMeanC, true
		}
		if r.CooldownFit != nil {
			cool = append(cool, r.CooldownFit.CoolTauS)
		}
		if r.LoadFit != nil {
			load = append(load, r.LoadFit.TauS)
		}
	}
	switch {
	case !found:
		return 0, 0, false
	case len(cool) > 0:
		return restC, median(cool), true
	case len(load) > 0:
		return restC, median(load), true
	}
	return 0, 0, false
}

// NeighbourCoupling measures the coupling matrix of every host's GPUs from
// the episodes, the components' readings and their results per episode
// (rows, whose Episodes are filled).
func NeighbourCoupling(eps []*Episode, comps []*Component, rows []ComponentResult) []Coupling {
	results := map[string][]EpisodeResult{}
	for _, r := range rows {
		results[r.ID] = r.Episodes
	}
	byID := map[string]*Component{}
	gpus := map[string][]string{} // host -> GPU indices
	for _, c := range comps {
		byID[c.ID] = c
		if c.Kind == KindGPUCore && c.Err == nil {
			gpus[c.Host] = append(gpus[c.Host], c.ID[strings.LastIndex(c.ID, ":")+1:])
		}
	}
	hosts := make([]string, 0, len(gpus))
	for h := range gpus {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	prefix := func(host string) string {
		if len(hosts) > 1 && host != "" {
			return host + "/"
		}
		return ""
	}
	var out []Coupling
	for _, h := range hosts {
		for _, src := range gpus[h] {
			for _, nb := range gpus[h] {
				if src == nb {
					continue
				}
				for _, kind := range []string{KindGPUCore, KindGPUMem} {
					id := prefix(h) + kind + ":" + nb
					out = append(out, couple(h, src, nb, kind, byID[id], results[id], eps))
				}
			}
		}
	}
	return out
}

// couple measures one entry of the matrix from the neighbour's readings c
// and its own episodes' results own.
func couple(host, src, nb, kind string, c *Component, own []EpisodeResult, eps []*Episode) Coupling {
	cp := Coupling{Host: host, Source: src, Neighbour: nb, Kind: map[string]string{KindGPUCore: "core", KindGPUMem: "memory"}[kind], Episodes: []CouplingEpisode{}}
	if c == nil || c.Err != nil || len(c.T) == 0 {
		cp.NotComputed = fmt.Sprintf("not measured: GPU %s has no %s temperature readings", nb, cp.Kind)
		return cp
	}
	res := SensorResolution(c.V)
	for _, e := range eps {
		if e.Host != host || e.GPU != src || e.Baseline == nil || e.PowerW == nil || e.IdlePowerW == nil || *e.PowerW <= *e.IdlePowerW {
			continue
		}
		// Any other GPU loaded meanwhile (the neighbour, or a third that
		// heats it too) would be counted as the source's heat.
		if busy(eps, host, src, e.Baseline.Start, e.EndS) {
			continue
		}
		w := endRiseS(e.Load())
		mb, sb, okb := blockMean(c.T, c.V, e.Baseline.Start, e.Baseline.End)
		ml, sl, okl := blockMean(c.T, c.V, e.EndS-w, e.EndS)
		if !okb || !okl {
			continue
		}
		ce := CouplingEpisode{Episode: e.Index, PowerAboveIdleW: *e.PowerW - *e.IdlePowerW}
		// A neighbour still cooling from its own load would have gone on
		// cooling: its baseline's excess over its rest decays with its
		// own time constant until the end of the source's load.
		ref := mb
		if rest, tau, ok := neighbourRest(own, eps, e.Baseline.Start); ok && mb > rest {
			dt := (e.EndS - w/2) - (e.Baseline.Start+e.Baseline.End)/2
			ce.BaselineExcessC = ptr(mb - rest)
			ref = rest + (mb-rest)*math.Exp(-dt/tau)
			ce.DecayCorrectionC = ptr(mb - ref)
		}
		se := math.Sqrt(sb*sb + sl*sl + res*res/6)
		ce.RiseC = ml - ref
		ce.CPerW, ce.SECPerW = ce.RiseC/ce.PowerAboveIdleW, se/ce.PowerAboveIdleW
		cp.Episodes = append(cp.Episodes, ce)
	}
	k := len(cp.Episodes)
	if k == 0 {
		cp.NotComputed = fmt.Sprintf("not measured: no episode loaded GPU %s while GPU %s stayed idle", src, nb)
		return cp
	}
	sum, se2 := 0.0, 0.0
	for _, ce := range cp.Episodes {
		sum += ce.CPerW
		se2 += ce.SECPerW * ce.SECPerW
	}
	mean := sum / float64(k)
	se := math.Sqrt(se2) / float64(k)
	if k >= 3 {
		ss := 0.0
		for _, ce := range cp.Episodes {
			ss += (ce.CPerW - mean) * (ce.CPerW - mean)
		}
		se = math.Max(se, math.Sqrt(ss/float64(k-1)/float64(k)))
	}
	cp.CPerW, cp.LoCPerW, cp.HiCPerW = ptr(mean), ptr(mean-1.96*se), ptr(mean+1.96*se)
	return cp
}

// busy reports whether a GPU of host other than src has an episode
// overlapping from..to.
func busy(eps []*Episode, host, src string, from, to float64) bool {
	for _, o := range eps {
		if o.Host == host && o.GPU != "" && o.GPU != src && o.StartS < to && o.EndS > from {
			return true
		}
	}
	return false
}

// blockMean is the mean of the readings from..to and its standard error
// from the means of 10 s blocks (the readings are autocorrelated; blocks
// of 10 s at 1 Hz are nearly independent for noise, not for drift).
func blockMean(t, v []float64, from, to float64) (mean, se float64, ok bool) {
	i, j := window(t, from, to)
	if j-i < 3 {
		return 0, 0, false
	}
	var blocks []float64
	sum, n, bsum, bn, bstart := 0.0, 0, 0.0, 0, t[i]
	for k := i; k < j; k++ {
		if t[k]-bstart >= 10 && bn > 0 {
			blocks = append(blocks, bsum/float64(bn))
			bsum, bn, bstart = 0, 0, t[k]
		}
		sum += v[k]
		n++
		bsum += v[k]
		bn++
	}
	if bn > 0 {
		blocks = append(blocks, bsum/float64(bn))
	}
	mean = sum / float64(n)
	if len(blocks) < 2 {
		return mean, 0, true
	}
	ss := 0.0
	for _, b := range blocks {
		ss += (b - mean) * (b - mean)
	}
	return mean, math.Sqrt(ss / float64(len(blocks)-1) / float64(len(blocks))), true
}

// couplingDefinitions state how the coupling is measured.
func couplingDefinitions() []Definition {
	return []Definition{{"coupling", "for each ordered pair of GPUs of a host (source, neighbour) and each of core and memory: over every episode of the source with a baseline during which no other GPU of the host (the neighbour or a third one) had an episode from the start of that baseline to the end of the load, the neighbour's mean over the last min(60 s, ¼ of the load) minus its reference, over the source's power_w − idle_power_w. The reference is the neighbour's mean over the source's baseline; where that lies above the neighbour's rest (the idle mean before its own latest load), the excess is taken to decay with the neighbour's own τ (median cool_tau_s of its episodes, else tau_s) from the middle of the baseline to the middle of the end window (baseline_excess_c, decay_correction_c); c_per_w is the mean over those episodes, lo..hi ±1.96 SE, SE the episodes' standard errors combined (each from 10 s block means and the sensor resolution r as r²/12 per mean), or the spread of the episodes' values where there are three or more and it is larger. A neighbour that had not settled by the end of a short load makes it an underestimate. \"not measured\" where no such episode exists"}}
}
