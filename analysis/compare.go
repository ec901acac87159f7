package analysis

import (
	"fmt"
	"math"
	"sort"
)

// Comparison sets several runs side by side: each run's own report, a
// summary per component kind, and ratios against the first run (the
// reference), e.g. immersion against air, or one workload against another.
type Comparison struct {
	Schema int `json:"schema"`
	// Labels name the runs A, B, C... in the order given.
	Labels []string         `json:"labels"`
	Runs   []*Report        `json:"runs"`
	Kinds  []KindComparison `json:"kinds"`
	// CoolingEnergy compares the runs' cooling energy with the reference.
	CoolingEnergy []Ratio `json:"cooling_energy_ratios"`
	// Workload compares each workload metric's median across the runs,
	// with or without temperatures.
	Workload []MetricComparison `json:"workload"`
	// Verdicts compare every GPU of every run with its like peers across
	// all runs and hosts; Coupling gathers the runs' neighbour heating,
	// labelled by run (gpus.go).
	Verdicts []Verdict  `json:"verdicts,omitempty"`
	Coupling []Coupling `json:"coupling,omitempty"`
}

// KindComparison is one component kind across runs.
type KindComparison struct {
	Kind   string        `json:"kind"`
	PerRun []KindSummary `json:"per_run"`
	Ratios []Ratio       `json:"ratios"`
}

// KindSummary condenses the components of one kind in one run: the mean
// over them of idle mean, heat interval and steepest rise, the largest
// maximum, and the longest return to idle (the run is back at idle only
// when its slowest component is).
type KindSummary struct {
	Run               string            `json:"run"`
	Components        int               `json:"components"`
	IdleMeanC         *float64          `json:"idle_mean_c"`
	MaxC              *float64          `json:"max_c"`
	HeatIntervalSPerC *float64          `json:"heat_interval_s_per_c"`
	SteepestSPerC     *float64          `json:"steepest_s_per_c"`
	ReturnToIdleS     *float64          `json:"return_to_idle_s"`
	TauS              *Estimate         `json:"tau_s"`
	RiseC             *Estimate         `json:"rise_c"`
	CoolTauS          *Estimate         `json:"cool_tau_s"`
	NotComputed       map[string]string `json:"not_computed,omitempty"`
}

// Ratio compares one quantity of run Run with the reference run. Value is
// Run's figure over the reference's, except for heat intervals, where it is
// the reference's over Run's, so that above 1 always reads "more" in Text.
type Ratio struct {
	Quantity  string   `json:"quantity"`
	Run       string   `json:"run"`
	Reference string   `json:"reference"`
	Value     *float64 `json:"value"`
	// Difference is Run's fitted value minus the reference's, for the
	// fitted quantities (tau_s, rise_c, cool_tau_s).
	Difference *FitDifference `json:"difference,omitempty"`
	Text       string         `json:"text"`
}

// KindName returns a component kind as people say it ("GPU core"), or ""
// for a kind the analysis does not know. It is a function, not an exported
// map, so no importer can change what every report calls a kind.
func KindName(kind string) string {
	switch kind {
	case KindGPUCore:
		return "GPU core"
	case KindGPUMem:
		return "GPU memory"
	case KindCPU:
		return "CPU"
	case KindNVMe:
		return "NVMe"
	case KindCoolant:
		return "coolant"
	case KindWater:
		return "facility water"
	}
	return ""
}

// Compare compares reports; the first is the reference.
func Compare(reports []*Report) *Comparison {
	cmp := &Comparison{Schema: ReportSchema, Runs: reports, Kinds: []KindComparison{}, CoolingEnergy: []Ratio{}}
	for i := range reports {
		cmp.Labels = append(cmp.Labels, runLabel(i))
	}
	kinds := map[string]bool{}
	for _, r := range reports {
		for _, c := range r.Components {
			kinds[c.Kind] = true
		}
	}
	var order []string
	for k := range kinds {
		order = append(order, k)
	}
	sort.Slice(order, func(i, j int) bool { return kindOrder[order[i]] < kindOrder[order[j]] })
	for _, kind := range order {
		kc := KindComparison{Kind: kind}
		for i, r := range reports {
			kc.PerRun = append(kc.PerRun, summarise(cmp.Labels[i], kind, r))
		}
		ref := kc.PerRun[0]
		for _, s := range kc.PerRun[1:] {
			kc.Ratios = append(kc.Ratios, heatRatio(kind, ref, s), idleRatio(kind, ref, s))
			kc.Ratios = append(kc.Ratios, fitRatios(kind, ref, s)...)
		}
		cmp.Kinds = append(cmp.Kinds, kc)
	}
	cmp.compareGPUs()
	for i, r := range reports[min(1, len(reports)):] {
		ref := reports[0].CoolingEnergy
		ce := r.CoolingEnergy
		q := Ratio{Quantity: "cooling_energy_kj", Run: cmp.Labels[i+1], Reference: cmp.Labels[0]}
		switch {
		case ref.EnergyKJ == nil || ce.EnergyKJ == nil:
			q.Text = fmt.Sprintf("cooling energy not compared: not computed for %s", missing(cmp.Labels[0], ref.EnergyKJ == nil, cmp.Labels[i+1], ce.EnergyKJ == nil))
		case *ref.EnergyKJ == 0:
			q.Text = fmt.Sprintf("cooling energy not compared: %s spent none", cmp.Labels[0])
		default:
			v := *ce.EnergyKJ / *ref.EnergyKJ
			q.Value = &v
			q.Text = fmt.Sprintf("cooling took %.2fx the energy in %s (%s, %.1f kJ) as in %s (%s, %.1f kJ)",
				v, q.Run, ce.Cooling, *ce.EnergyKJ, q.Reference, ref.Cooling, *ref.EnergyKJ)
		}
		cmp.CoolingEnergy = append(cmp.CoolingEnergy, q)
	}
	cmp.Workload = compareWorkloads(reports)
	return cmp
}

func runLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("R%d", i+1)
}

func missing(a string, ma bool, b string, mb bool) string {
	switch {
	case ma && mb:
		return a + " and " + b
	case ma:
		return a
	}
	return b
}

func summarise(label, kind string, r *Report) KindSummary {
	s := KindSummary{Run: label, NotComputed: map[string]string{}}
	var idle, hi, st []float64
	mx, rt := math.Inf(-1), math.Inf(-1)
	for _, c := range r.Components {
		if c.Kind != kind {
			continue
		}
		s.Components++
		if c.IdleMeanC != nil {
			idle = append(idle, *c.IdleMeanC)
		}
		if c.HeatIntervalSPerC != nil {
			hi = append(hi, *c.HeatIntervalSPerC)
		}
		if c.SteepestSPerC != nil {
			st = append(st, *c.SteepestSPerC)
		}
		if c.MaxC != nil {
			mx = math.Max(mx, *c.MaxC)
		}
		if c.ReturnToIdleS != nil {
			rt = math.Max(rt, *c.ReturnToIdleS)
		} else {
			rt = math.Inf(1) // one component not back means the kind is not back
			s.NotComputed["return_to_idle_s"] = c.ID + ": " + c.NotComputed["return_to_idle_s"]
		}
	}
	fitSummaries(&s, kind, r)
	if s.Components == 0 {
		for _, k := range []string{"idle_mean_c", "max_c", "heat_interval_s_per_c", "steepest_s_per_c", "return_to_idle_s", "tau_s", "rise_c", "cool_tau_s"} {
			s.NotComputed[k] = "no component of this kind in the run"
		}
		return s
	}
	mean := func(key string, v []float64) *float64 {
		if len(v) == 0 {
			s.NotComputed[key] = "not computed for any component of this kind"
			return nil
		}
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		return ptr(sum / float64(len(v)))
	}
	s.IdleMeanC = mean("idle_mean_c", idle)
	s.HeatIntervalSPerC = mean("heat_interval_s_per_c", hi)
	s.SteepestSPerC = mean("steepest_s_per_c", st)
	if !math.IsInf(mx, -1) {
		s.MaxC = ptr(mx)
	} else {
		s.NotComputed["max_c"] = "not computed for any component of this kind"
	}
	if !math.IsInf(rt, 0) {
		s.ReturnToIdleS = ptr(rt)
	}
	if len(s.NotComputed) == 0 {
		s.NotComputed = nil
	}
	return s
}

// heatRatio says how much faster the kind accumulates heat in s than in the
// reference: a shorter heat interval (s/°C) is faster.
func heatRatio(kind string, ref, s KindSummary) Ratio {
	q := Ratio{Quantity: "heat_interval_s_per_c", Run: s.Run, Reference: ref.Run}
	name := KindName(kind)
	if ref.HeatIntervalSPerC == nil || s.HeatIntervalSPerC == nil {
		q.Text = fmt.Sprintf("%s heat accumulation not compared: no heat interval for %s", name,
			missing(ref.Run, ref.HeatIntervalSPerC == nil, s.Run, s.HeatIntervalSPerC == nil))
		return q
	}
	v := *ref.HeatIntervalSPerC / *s.HeatIntervalSPerC
	q.Value = &v
	switch {
	case v >= 1.005:
		q.Text = fmt.Sprintf("%s accumulates heat %.2fx faster in %s than in %s", name, v, s.Run, ref.Run)
	case v <= 1/1.005:
		q.Text = fmt.Sprintf("%s accumulates heat %.2fx slower in %s than in %s", name, 1/v, s.Run, ref.Run)
	default:
		q.Text = fmt.Sprintf("%s accumulates heat at the same rate in %s and %s", name, s.Run, ref.Run)
	}
	return q
}

// idleRatio compares return-to-idle times.
func idleRatio(kind string, ref, s KindSummary) Ratio {
	q := Ratio{Quantity: "return_to_idle_s", Run: s.Run, Reference: ref.Run}
	name := KindName(kind)
	switch {
	case ref.ReturnToIdleS == nil || s.ReturnToIdleS == nil:
		q.Text = fmt.Sprintf("%s return to idle not compared: not reached or not computed in %s", name,
			missing(ref.Run, ref.ReturnToIdleS == nil, s.Run, s.ReturnToIdleS == nil))
	case *ref.ReturnToIdleS == 0 || *s.ReturnToIdleS == 0:
		q.Text = fmt.Sprintf("%s returns to idle in %.0f s in %s and %.0f s in %s", name, *s.ReturnToIdleS, s.Run, *ref.ReturnToIdleS, ref.Run)
	default:
		v := *s.ReturnToIdleS / *ref.ReturnToIdleS
		q.Value = &v
		q.Text = fmt.Sprintf("%s takes %.2fx as long to return to idle in %s (%.0f s) as in %s (%.0f s)", name, v, s.Run, *s.ReturnToIdleS, ref.Run, *ref.ReturnToIdleS)
	}
	return q
}
