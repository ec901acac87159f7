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
}

// NeighbourCoupling measures the coupling matrix of every host's GPUs from
// the episodes and the components' readings.
func NeighbourCoupling(eps []*Episode, comps []*Component) []Coupling {
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
					c := byID[prefix(h)+kind+":"+nb]
					out = append(out, couple(h, src, nb, kind, c, eps))
				}
			}
		}
	}
	return out
}

// couple measures one entry of the matrix.
func couple(host, src, nb, kind string, c *Component, eps []*Episode) Coupling {
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
		// heats it too) would be counted as the source's heat; one loaded
		// shortly before the baseline would still be cooling in it: five
		// minutes of margin.
		if busy(eps, host, src, e.Baseline.Start-300, e.EndS) {
			continue
		}
		w := endRiseS(e.Load())
		mb, sb, okb := blockMean(c.T, c.V, e.Baseline.Start, e.Baseline.End)
		ml, sl, okl := blockMean(c.T, c.V, e.EndS-w, e.EndS)
		if !okb || !okl {
			continue
		}
		dp := *e.PowerW - *e.IdlePowerW
		se := math.Sqrt(sb*sb + sl*sl + res*res/6)
		cp.Episodes = append(cp.Episodes, CouplingEpisode{Episode: e.Index, PowerAboveIdleW: dp, RiseC: ml - mb, CPerW: (ml - mb) / dp, SECPerW: se / dp})
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
	return []Definition{{"coupling", "for each ordered pair of GPUs of a host (source, neighbour) and each of core and memory: over every episode of the source with a baseline during which no other GPU of the host (the neighbour or a third one) had an episode from 300 s before that baseline to the end of the load, the neighbour's mean over the last min(60 s, ¼ of the load) minus its mean over the source's baseline, over the source's power_w − idle_power_w; c_per_w is the mean over those episodes, lo..hi ±1.96 SE, SE the episodes' standard errors combined (each from 10 s block means and the sensor resolution r as r²/12 per mean), or the spread of the episodes' values where there are three or more and it is larger. A neighbour that had not settled by the end of a short load makes it an underestimate. \"not measured\" where no such episode exists"}}
}
