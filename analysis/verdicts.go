package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Verdict compares one GPU's metric with its like peers (same model,
// similar load power) within a node and across nodes and runs: the median
// of its episodes' values, the peers' median and spread, its robust z-score
// and what it means in words.
type Verdict struct {
	// Run labels the run in a comparison of several (A, B, ...).
	Run       string   `json:"run,omitempty"`
	Host      string   `json:"host,omitempty"`
	Component string   `json:"component"`
	GPU       string   `json:"gpu"`
	Metric    string   `json:"metric"`
	Value     float64  `json:"value"`
	Lo        *float64 `json:"lo"`
	Hi        *float64 `json:"hi"`
	Episodes  int      `json:"episodes"`
	// LowerBound means every episode behind Value gave only a lower bound.
	LowerBound bool    `json:"lower_bound,omitempty"`
	Peers      int     `json:"peers"`
	PeerMedian float64 `json:"peer_median"`
	// PeerMAD is the peers' median absolute deviation; RobustZ is
	// (value − peer_median) / (1.4826 · peer_mad), absent when the MAD is 0.
	PeerMAD float64  `json:"peer_mad"`
	RobustZ *float64 `json:"robust_z"`
	// Status is "outlier" (|z| ≥ 3.5 among three or more), "differs"
	// (its own interval excludes the peers' median), "typical" (neither,
	// or within 10 % of the median), or "no peers".
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// verdictMetric is a fingerprint metric compared, with its unit and the
// component kind it belongs to.
type verdictMetric struct {
	name, kind, unit string
	prec             int
}

// verdictMetrics are the metrics compared, in the order verdicts list them.
func verdictMetrics() []verdictMetric {
	return []verdictMetric{
		{"thermal_resistance_c_per_w", KindGPUCore, "°C/W", 4},
		{"thermal_resistance_c_per_w", KindGPUMem, "°C/W", 4},
		{"idle_mean_c", KindGPUCore, "°C", 1},
		{"tau_s", KindGPUCore, "s", 0},
		{"throttle_thermal_share", KindGPUCore, "", 2},
		{"sm_clock_median_mhz", KindGPUCore, "MHz", 0},
		{"throughput_per_w", KindGPUCore, "/W", 3},
	}
}

// gpuSummary is one GPU component's medians over its episodes.
type gpuSummary struct {
	run, host, id, gpu, model string
	powerW, idlePowerW        float64
	values                    map[string]summaryValue
	// alone says the values come from episodes with no neighbour loaded.
	alone bool
}

type summaryValue struct {
	v, lo, hi  float64
	hasLo      bool
	hasHi      bool
	n          int
	lowerBound bool
}

// Verdicts compares every GPU of reps (a report's hosts, or the runs of a
// comparison, labelled by labels when given) with its like peers.
func Verdicts(reps []*Report, labels []string) []Verdict {
	var sums []gpuSummary
	for i, r := range reps {
		label := ""
		if labels != nil {
			label = labels[i]
		}
		for _, c := range r.Components {
			if (c.Kind == KindGPUCore || c.Kind == KindGPUMem) && len(c.Episodes) > 0 && c.Episodes[0].Fingerprint != nil {
				sums = append(sums, summarise1(label, c))
			}
		}
	}
	var out []Verdict
	for _, m := range verdictMetrics() {
		var ss []gpuSummary
		for _, s := range sums {
			if _, ok := s.values[m.name]; ok && kindOf(s.id) == m.kind {
				ss = append(ss, s)
			}
		}
		for _, g := range likeGroups(ss) {
			out = append(out, judge(g, m.name, m.unit, m.prec)...)
		}
	}
	slices.SortStableFunc(out, func(a, b Verdict) int {
		return cmp.Or(cmp.Compare(a.Run, b.Run), cmp.Compare(a.Host, b.Host), cmp.Compare(a.Component, b.Component))
	})
	return out
}

func kindOf(id string) string {
	id = id[strings.LastIndex(id, "/")+1:]
	k, _, _ := strings.Cut(id, ":")
	return k
}

// summarise1 takes the median over a component's episodes of each metric,
// from the fitted episodes only where there are any.
func summarise1(run string, c ComponentResult) gpuSummary {
	s := gpuSummary{run: run, host: c.Host, id: c.ID, gpu: c.ID[strings.LastIndex(c.ID, ":")+1:], values: map[string]summaryValue{}}
	var pw, ipw []float64
	get := map[string]func(e EpisodeResult) (v, lo, hi *float64, bound bool){
		"thermal_resistance_c_per_w": func(e EpisodeResult) (*float64, *float64, *float64, bool) {
			return e.ThermalResistanceCPerW, e.ThermalResistanceLoCPerW, e.ThermalResistanceHiCPerW, e.ThermalResistanceFrom != "load_fit"
		},
		"idle_mean_c": func(e EpisodeResult) (*float64, *float64, *float64, bool) { return e.IdleMeanC, nil, nil, false },
		"tau_s": func(e EpisodeResult) (*float64, *float64, *float64, bool) {
			if e.LoadFit == nil {
				return nil, nil, nil, false
			}
			return e.TauS, &e.LoadFit.TauLoS, &e.LoadFit.TauHiS, false
		},
		"throttle_thermal_share": func(e EpisodeResult) (*float64, *float64, *float64, bool) {
			return e.ThrottleThermalShare, nil, nil, false
		},
		"sm_clock_median_mhz": func(e EpisodeResult) (*float64, *float64, *float64, bool) { return e.SMClockMedianMHz, nil, nil, false },
		"throughput_per_w":    func(e EpisodeResult) (*float64, *float64, *float64, bool) { return e.ThroughputPerW, nil, nil, false },
	}
	for _, e := range c.Episodes {
		if s.model == "" {
			s.model = e.Model
		}
		if e.PowerW != nil && e.IdlePowerW != nil {
			pw, ipw = append(pw, *e.PowerW), append(ipw, *e.IdlePowerW)
		}
	}
	if len(pw) > 0 {
		s.powerW, s.idlePowerW = median(pw), median(ipw)
	}
	// Episodes with a neighbour loaded carry its heat: they count only
	// where the GPU has no episode alone.
	eps := slices.DeleteFunc(slices.Clone(c.Episodes), func(e EpisodeResult) bool { return len(e.NeighboursLoaded) > 0 })
	if len(eps) == 0 {
		eps = c.Episodes
	}
	s.alone = len(eps) < len(c.Episodes) || len(c.Episodes[0].NeighboursLoaded) == 0
	for name, f := range get {
		var fitted, bounds [3][]float64
		for _, e := range eps {
			v, lo, hi, bound := f(e)
			if v == nil {
				continue
			}
			dst := &fitted
			if bound {
				dst = &bounds
			}
			dst[0] = append(dst[0], *v)
			if lo != nil {
				dst[1] = append(dst[1], *lo)
			}
			if hi != nil {
				dst[2] = append(dst[2], *hi)
			}
		}
		use, lb := fitted, false
		if len(use[0]) == 0 {
			use, lb = bounds, true
		}
		if len(use[0]) == 0 {
			continue
		}
		sv := summaryValue{v: median(use[0]), n: len(use[0]), lowerBound: lb}
		if len(use[1]) == len(use[0]) {
			sv.lo, sv.hasLo = median(use[1]), true
		}
		if len(use[2]) == len(use[0]) {
			sv.hi, sv.hasHi = median(use[2]), true
		}
		s.values[name] = sv
	}
	return s
}

// likeGroups splits GPUs into groups of one model whose load powers lie
// within 20 % of the group's lowest.
func likeGroups(ss []gpuSummary) [][]gpuSummary {
	slices.SortStableFunc(ss, func(a, b gpuSummary) int {
		return cmp.Or(cmp.Compare(a.model, b.model), cmp.Compare(a.powerW, b.powerW))
	})
	var out [][]gpuSummary
	for _, s := range ss {
		if n := len(out); n > 0 {
			first := out[n-1][0]
			if first.model == s.model && s.powerW <= 1.2*first.powerW {
				out[n-1] = append(out[n-1], s)
				continue
			}
		}
		out = append(out, []gpuSummary{s})
	}
	return out
}

// judge compares each GPU of a like group on one metric.
func judge(g []gpuSummary, metric, unit string, prec int) []Verdict {
	vals := make([]float64, len(g))
	hosts, dps := map[string]bool{}, make([]float64, len(g))
	for i, s := range g {
		vals[i] = s.values[metric].v
		hosts[s.run+"/"+s.host] = true
		dps[i] = s.powerW - s.idlePowerW
	}
	med := median(vals)
	md := mad(vals, med)
	dp := median(dps)
	scope := "the node's"
	if len(hosts) > 1 {
		scope = fmt.Sprintf("the %d hosts' and runs'", len(hosts))
	}
	var out []Verdict
	for _, s := range g {
		sv := s.values[metric]
		v := Verdict{Run: s.run, Host: s.host, Component: s.id, GPU: s.gpu, Metric: metric, Value: sv.v, Episodes: sv.n,
			LowerBound: sv.lowerBound, Peers: len(g), PeerMedian: med, PeerMAD: md}
		if sv.hasLo {
			v.Lo = ptr(sv.lo)
		}
		if sv.hasHi {
			v.Hi = ptr(sv.hi)
		}
		if md > 0 {
			v.RobustZ = ptr((sv.v - med) / (madSigma * md))
		}
		what := fmt.Sprintf("GPU %s", s.gpu)
		if s.host != "" {
			what += " of " + s.host
		}
		if s.run != "" {
			what += " in run " + s.run
		}
		if kindOf(s.id) == KindGPUMem {
			what += " (memory)"
		}
		val := fmt.Sprintf("%.*f %s", prec, sv.v, unit)
		if sv.lowerBound {
			val = "at least " + val
		}
		switch {
		case len(g) < 2:
			v.Status = "no peers"
			v.Reason = fmt.Sprintf("%s: %s %s; no like GPU (same model, load power within 20 %%) to compare with", what, metric, val)
			out = append(out, v)
			continue
		// A difference under 10 % of the median is no verdict however
		// alike the peers are (a MAD near 0 makes any z large).
		case math.Abs(sv.v-med) < 0.1*math.Abs(med):
			v.Status = "typical"
		case v.RobustZ != nil && len(g) >= 3 && math.Abs(*v.RobustZ) >= 3.5:
			v.Status = "outlier"
		case v.Lo != nil && v.Hi != nil && (med < *v.Lo || med > *v.Hi):
			v.Status = "differs"
		default:
			v.Status = "typical"
		}
		rel := "equal to"
		if med != 0 && sv.v != med {
			pct := 100 * math.Abs(sv.v-med) / math.Abs(med)
			rel = fmt.Sprintf("%.0f %% %s", pct, map[bool]string{true: "above", false: "below"}[sv.v > med])
		}
		v.Reason = fmt.Sprintf("%s: %s %s, %s %s median of %d like GPUs (%.*f %s)", what, metric, val, rel, scope, len(g), prec, med, unit)
		if metric == "thermal_resistance_c_per_w" && dp > 0 {
			d := (sv.v - med) * dp
			v.Reason += fmt.Sprintf("; %.1f °C %s at equal power (%.0f W above idle)", math.Abs(d), map[bool]string{true: "hotter", false: "cooler"}[d >= 0], dp)
		}
		if v.RobustZ != nil {
			v.Reason += fmt.Sprintf("; robust z %.2f", *v.RobustZ)
		}
		if !s.alone {
			v.Reason += "; every episode of it had a neighbour loaded too"
		}
		v.Reason += "; " + v.Status
		if v.Status == "typical" && v.RobustZ != nil && math.Abs(*v.RobustZ) >= 3.5 {
			// Read alone, "z -28.5; typical" looks like a contradiction.
			v.Reason += " (within 10 % of the median: peers this alike make any z large)"
		}
		out = append(out, v)
	}
	return out
}

// verdictDefinitions state how GPUs are compared.
func verdictDefinitions() []Definition {
	return []Definition{{"verdicts", "each GPU's value of a metric is the median over its episodes in which no other GPU of the host was loaded (over all its episodes where it has none alone, said in the reason), of those with a load fit where it has any, else of the lower bounds (marked); GPUs are compared only with those of the same model whose median load power is within 20 % of the lowest of their group; peer_median and peer_mad are the group's median and median absolute deviation, robust_z = (value − peer_median)/(1.4826·peer_mad). Status: typical where the value lies within 10 % of the peers' median (however alike the peers, whose MAD near 0 makes any z large); else outlier where |robust_z| ≥ 3.5 among three or more GPUs; else differs where the GPU's own interval excludes the peers' median; else typical. \"°C hotter at equal power\" = (value − peer_median) × the group's median power above idle. A verdict on a GPU's thermal resistance cannot tell apart its own cooling (heatsink, paste, fan), its slot in the airflow (inlet air already warmed by others) and its neighbours' heat while they were loaded too; the coupling matrix measures the last where single-GPU episodes exist"}}
}
