package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// SurveySchema is written into survey.json; readers refuse newer majors.
const SurveySchema = 1

// SurveyRule holds the constants of a survey's flags: when a GPU departs
// from its like peers, when one heats a neighbour, and when one drifted
// from its own last survey. See DefaultSurveyRule for the values and why.
type SurveyRule struct {
	// A GPU's thermal resistance (core or memory) is flagged against its
	// peers only when all three hold: robust z ≥ MinRobustZ against the
	// other like GPUs (their median and MAD, without it), the value
	// MinAbovePct or more above their median, and MinExcessC or more
	// hotter at its own power above idle. Only the hot side is flagged: a
	// GPU cooler than its peers is no fault.
	MinRobustZ  float64 `json:"min_robust_z"`
	MinAbovePct float64 `json:"min_above_pct"`
	MinExcessC  float64 `json:"min_excess_c"`
	// A pair is flagged for neighbour heating when the neighbour rises by
	// CouplingCPerW or more per watt the source draws above idle (its
	// interval's low end above 0), and by CouplingMinC or more at the
	// source's power.
	CouplingCPerW float64 `json:"coupling_c_per_w"`
	CouplingMinC  float64 `json:"coupling_min_c"`
	// A GPU drifted from its last survey (same UUID) when, at a power
	// above idle within DriftPowerPct of the last one's, its thermal
	// resistance rose by DriftPct or more and by DriftMinC or more at its
	// power, and the two intervals (where both exist) do not overlap.
	DriftPct      float64 `json:"drift_pct"`
	DriftMinC     float64 `json:"drift_min_c"`
	DriftPowerPct float64 `json:"drift_power_pct"`
	// A GPU was loaded by something other than the survey when its median
	// power in a phase the survey did not load it in lies ForeignLoadW
	// and ForeignLoadPct (of that level) or more above its quietest such
	// phase (surveyforeign.go).
	ForeignLoadW   float64 `json:"foreign_load_w"`
	ForeignLoadPct float64 `json:"foreign_load_pct"`
	// Where utilisation was recorded it is the evidence instead: a median
	// of ForeignLoadUtilPct or more in such a phase.
	ForeignLoadUtilPct float64 `json:"foreign_load_util_pct"`
}

// DefaultSurveyRule is the rule of docs/survey.md. Its thresholds come from
// the real 4×H100 node of testdata/h100x4-episodes: healthy GPUs there
// spread from 14 % below to 5 % above the node's median °C/W (core) and
// from 19 % below to 3 % above (memory), with robust z up to 5.4 on the
// cool side (four GPUs make a small MAD; the cool one, GPU 3, read low by
// GPU 2's heat in its baseline: with it added back, fingerprintdecay.go,
// all lie within 8 % below and 5 % above); the largest neighbour heating
// between healthy GPUs is 0.0104 °C/W (GPU 2 → 3, 6 °C at 600 W). A
// threshold of 20 % above the median and 5 °C at equal power lies beyond
// every healthy GPU and still catches a loss of a fifth of the cooling;
// 0.015 °C/W of neighbour heating is 44 % above the worst healthy pair.
// An idle GPU's median power there moved at most 3 W (of 70-74 W) while
// others were loaded or it cooled: 15 W and 25 % is five times that.
func DefaultSurveyRule() SurveyRule {
	return SurveyRule{MinRobustZ: 3.5, MinAbovePct: 20, MinExcessC: 5,
		CouplingCPerW: 0.015, CouplingMinC: 5,
		DriftPct: 10, DriftMinC: 3, DriftPowerPct: 15,
		ForeignLoadW: 15, ForeignLoadPct: 25, ForeignLoadUtilPct: 5}
}

// Text states the rule in words, for survey.json and the docs.
func (r SurveyRule) Text() string {
	return fmt.Sprintf("a GPU is flagged against its like peers (same model, load power within 20 %%) when its thermal resistance (core or memory, from the episodes with no neighbour loaded) has a robust z ≥ %g against the other like GPUs (their median and MAD, without it) AND lies %g %% or more above their median AND makes it %g °C or more hotter at its own power above idle; "+
		"a pair is flagged for neighbour heating when the neighbour rises %g °C/W or more per watt the source draws above idle (interval above 0) AND %g °C or more at the source's power; "+
		"a GPU drifted from its last survey (same UUID) when, at a power above idle within %g %% of the last one's, its thermal resistance rose %g %% or more AND %g °C or more at its power, the two intervals not overlapping; "+
		"a GPU was loaded by something other than the survey when its median utilisation in a phase the survey did not load it in is %g %% or more (where no utilisation was recorded: its median power there lies %g W AND %g %% or more above its quietest such phase)",
		r.MinRobustZ, r.MinAbovePct, r.MinExcessC, r.CouplingCPerW, r.CouplingMinC, r.DriftPowerPct, r.DriftPct, r.DriftMinC, r.ForeignLoadUtilPct, r.ForeignLoadW, r.ForeignLoadPct)
}

// Survey is survey.json: every GPU of the surveyed node with its
// fingerprint alone and together, the neighbour-heating matrix, the
// verdicts against like GPUs (the report's fields) and the flags.
type Survey struct {
	Schema int    `json:"schema"`
	RunID  string `json:"run_id"`
	Host   string `json:"host,omitempty"`
	// Against is the run ID of the earlier survey drift is measured
	// against; "" without one.
	Against  string       `json:"against,omitempty"`
	Rule     SurveyRule   `json:"rule"`
	RuleText string       `json:"rule_text"`
	GPUs     []SurveyGPU  `json:"gpus"`
	Coupling []Coupling   `json:"coupling"`
	Verdicts []Verdict    `json:"verdicts"`
	Flags    []SurveyFlag `json:"flags"`
	// Status is "clean" or "flagged"; NotComputed says what could not be
	// judged (no GPU episodes, no earlier GPU of the same UUID).
	Status      string            `json:"status"`
	NotComputed map[string]string `json:"not_computed,omitempty"`
}

// SurveyGPU is one GPU: who it is and how it behaved loaded alone and
// loaded together with all the others.
type SurveyGPU struct {
	Host  string `json:"host,omitempty"`
	Index string `json:"index"`
	UUID  string `json:"uuid,omitempty"`
	Model string `json:"model,omitempty"`
	// AloneCore and AloneMem are the fingerprints of its latest episode
	// with no neighbour loaded; TogetherCore and TogetherMem of its
	// episode with the most neighbours loaded. Nil where it had none.
	AloneCore    *Fingerprint `json:"alone_core"`
	AloneMem     *Fingerprint `json:"alone_mem"`
	TogetherCore *Fingerprint `json:"together_core"`
	TogetherMem  *Fingerprint `json:"together_mem"`
	// Rank is its place among the node's GPUs of its model.
	Rank *SurveyRank `json:"rank"`
}

// SurveyFlag is one finding of the rule.
type SurveyFlag struct {
	Host string `json:"host,omitempty"`
	GPU  string `json:"gpu"`
	// Kind is "peers" (departs from like GPUs), "neighbour" (heats GPU
	// Neighbour), "drift" (departs from its last survey) or
	// "foreign_load" (loaded by something other than the survey).
	Kind      string  `json:"kind"`
	Component string  `json:"component"`
	Neighbour string  `json:"neighbour,omitempty"`
	Metric    string  `json:"metric"`
	Value     float64 `json:"value"`
	// Reference is what Value was judged against: the peers' median, the
	// rule's coupling threshold, or the last survey's value.
	Reference float64 `json:"reference"`
	Reason    string  `json:"reason"`
}

// JudgeSurvey turns the report of a survey's recording into survey.json,
// judged by rule and, where against is not nil, against that earlier
// survey of the same GPUs (matched by UUID).
func JudgeSurvey(rep *Report, against *Survey, rule SurveyRule) Survey {
	s := Survey{Schema: SurveySchema, RunID: rep.Run.ID, Host: rep.Run.Host, Rule: rule, RuleText: rule.Text(),
		Coupling: rep.Coupling, Verdicts: rep.Verdicts, Flags: []SurveyFlag{}, NotComputed: map[string]string{}}
	s.GPUs = surveyGPUs(rep)
	rankGPUs(s.GPUs)
	if len(s.GPUs) == 0 {
		s.NotComputed["gpus"] = "no GPU had a load episode with a fingerprint"
		if why := rep.NotComputed["episodes"]; why != "" {
			s.NotComputed["gpus"] += ": " + why
		}
	}
	s.Flags = append(s.Flags, peerFlags(s.GPUs, rep.Verdicts, rule)...)
	s.Flags = append(s.Flags, couplingFlags(s.GPUs, rep.Coupling, rule)...)
	if against != nil {
		s.Against = against.RunID
		flags, why := driftFlags(s.GPUs, against.GPUs, rule)
		s.Flags = append(s.Flags, flags...)
		if why != "" {
			s.NotComputed["drift"] = why
		}
	} else {
		s.NotComputed["drift"] = "no earlier survey given (--against)"
	}
	s.Status = "clean"
	if len(s.Flags) > 0 {
		s.Status = "flagged"
	}
	return s
}

// surveyGPUs collects each GPU's alone and together fingerprints.
func surveyGPUs(rep *Report) []SurveyGPU {
	byKey := map[string]*SurveyGPU{}
	var keys []string
	for _, c := range rep.Components {
		if (c.Kind != KindGPUCore && c.Kind != KindGPUMem) || len(c.Episodes) == 0 {
			continue
		}
		idx := c.ID[strings.LastIndex(c.ID, ":")+1:]
		key := c.Host + "/" + idx
		g := byKey[key]
		if g == nil {
			g = &SurveyGPU{Host: c.Host, Index: idx}
			if f := strings.Fields(c.Name); len(f) > 0 && strings.HasPrefix(f[len(f)-1], "GPU-") {
				g.UUID = f[len(f)-1]
			}
			byKey[key] = g
			keys = append(keys, key)
		}
		var alone, together *Fingerprint
		for _, e := range c.Episodes {
			if e.Fingerprint == nil {
				continue
			}
			if g.Model == "" {
				g.Model = e.Model
			}
			if len(e.NeighboursLoaded) == 0 {
				alone = e.Fingerprint
			} else if together == nil || len(e.NeighboursLoaded) >= len(together.NeighboursLoaded) {
				together = e.Fingerprint
			}
		}
		if c.Kind == KindGPUCore {
			g.AloneCore, g.TogetherCore = alone, together
		} else {
			g.AloneMem, g.TogetherMem = alone, together
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		ha, ia, _ := strings.Cut(a, "/")
		hb, ib, _ := strings.Cut(b, "/")
		return cmp.Or(cmp.Compare(ha, hb), cmp.Compare(len(ia), len(ib)), cmp.Compare(ia, ib))
	})
	out := make([]SurveyGPU, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// aloneOf returns a GPU's alone fingerprint for a component ID's kind.
func (g SurveyGPU) aloneOf(kind string) *Fingerprint {
	if kind == KindGPUMem {
		return g.AloneMem
	}
	return g.AloneCore
}

// powerAboveIdle is the fingerprint's power above idle, 0 where unknown.
func (fp *Fingerprint) powerAboveIdle() float64 {
	if fp == nil || fp.PowerW == nil || fp.IdlePowerW == nil {
		return 0
	}
	return *fp.PowerW - *fp.IdlePowerW
}

func findGPU(gs []SurveyGPU, host, idx string) *SurveyGPU {
	for i := range gs {
		if gs[i].Host == host && gs[i].Index == idx {
			return &gs[i]
		}
	}
	return nil
}

// peerFlags applies the peer rule to the thermal-resistance verdicts. A
// GPU is judged against the other GPUs of its like group, without itself:
// on a 4-GPU node one GPU is a quarter of the median it would be judged
// against, and two departing GPUs (one worse cooled, one drifted) inflate
// a MAD that includes them until neither stands out.
func peerFlags(gs []SurveyGPU, vs []Verdict, rule SurveyRule) []SurveyFlag {
	type groupKey struct {
		run, metric, kind string
		peers             int
		median            float64
	}
	groups := map[groupKey][]float64{}
	keyOf := func(v Verdict) groupKey {
		return groupKey{v.Run, v.Metric, kindOf(v.Component), v.Peers, v.PeerMedian}
	}
	for _, v := range vs {
		groups[keyOf(v)] = append(groups[keyOf(v)], v.Value)
	}
	var out []SurveyFlag
	for _, v := range vs {
		if v.Metric != "thermal_resistance_c_per_w" || v.Peers < 3 {
			continue
		}
		g := findGPU(gs, v.Host, v.GPU)
		if g == nil {
			continue
		}
		others := slices.Clone(groups[keyOf(v)])
		if i := slices.Index(others, v.Value); i >= 0 {
			others = slices.Delete(others, i, i+1)
		}
		if len(others) < 2 {
			continue
		}
		med := median(others)
		if med <= 0 {
			continue
		}
		// A MAD of 0 means the others agree exactly: any departure is
		// infinitely many MADs away.
		z := math.Inf(1)
		if md := mad(others, med); md > 0 {
			z = (v.Value - med) / (madSigma * md)
		}
		dp := g.aloneOf(kindOf(v.Component)).powerAboveIdle()
		abovePct := 100 * (v.Value - med) / med
		excessC := (v.Value - med) * dp
		if z < rule.MinRobustZ || abovePct < rule.MinAbovePct || excessC < rule.MinExcessC {
			continue
		}
		what := "core"
		if kindOf(v.Component) == KindGPUMem {
			what = "memory"
		}
		out = append(out, SurveyFlag{Host: v.Host, GPU: v.GPU, Kind: "peers", Component: v.Component, Metric: v.Metric,
			Value: v.Value, Reference: med,
			Reason: fmt.Sprintf("GPU %s%s %s: %.4f °C/W, %.0f %% above the median of the %d other like GPUs (%.4f °C/W), %.1f °C hotter at its %.0f W above idle, robust z %s against them: worse cooled than its peers (paste, fan, slot or airflow)",
				v.GPU, onHost(v.Host), what, v.Value, abovePct, len(others), med, excessC, dp, zText(z))})
	}
	return out
}

// couplingFlags applies the neighbour-heating rule to the core matrix.
func couplingFlags(gs []SurveyGPU, cs []Coupling, rule SurveyRule) []SurveyFlag {
	var out []SurveyFlag
	for _, c := range cs {
		if c.Kind != "core" || c.CPerW == nil || c.LoCPerW == nil || *c.LoCPerW <= 0 || *c.CPerW < rule.CouplingCPerW {
			continue
		}
		src := findGPU(gs, c.Host, c.Source)
		if src == nil {
			continue
		}
		dp := src.AloneCore.powerAboveIdle()
		riseC := *c.CPerW * dp
		if riseC < rule.CouplingMinC {
			continue
		}
		out = append(out, SurveyFlag{Host: c.Host, GPU: c.Source, Kind: "neighbour", Component: "gpu_core:" + c.Source, Neighbour: c.Neighbour,
			Metric: "coupling_c_per_w", Value: *c.CPerW, Reference: rule.CouplingCPerW,
			Reason: fmt.Sprintf("GPU %s%s heats GPU %s by %.4f °C/W [%.4f, %.4f] (%.1f °C at its %.0f W above idle), over the rule's %.4f °C/W: its exhaust or a shared cold plate reaches the neighbour",
				c.Source, onHost(c.Host), c.Neighbour, *c.CPerW, *c.LoCPerW, derefOr(c.HiCPerW, math.NaN()), riseC, dp, rule.CouplingCPerW)})
	}
	return out
}

// driftFlags compares each GPU with the same UUID in an earlier survey.
func driftFlags(now, before []SurveyGPU, rule SurveyRule) ([]SurveyFlag, string) {
	old := map[string]SurveyGPU{}
	for _, g := range before {
		if g.UUID != "" {
			old[g.UUID] = g
		}
	}
	var out []SurveyFlag
	matched := 0
	for _, g := range now {
		o, ok := old[g.UUID]
		if g.UUID == "" || !ok {
			continue
		}
		matched++
		for _, kind := range []string{KindGPUCore, KindGPUMem} {
			a, b := g.aloneOf(kind), o.aloneOf(kind)
			if a == nil || b == nil || a.ThermalResistanceCPerW == nil || b.ThermalResistanceCPerW == nil {
				continue
			}
			dpA, dpB := a.powerAboveIdle(), b.powerAboveIdle()
			if dpA <= 0 || dpB <= 0 || math.Abs(dpA-dpB) > rule.DriftPowerPct/100*dpB {
				continue // not the same power: not comparable
			}
			va, vb, aLo := likeForLike(a, b)
			pct := 100 * (va - vb) / vb
			excessC := (va - vb) * dpA
			if pct < rule.DriftPct || excessC < rule.DriftMinC {
				continue
			}
			if aLo != nil && b.ThermalResistanceHiCPerW != nil && *aLo <= *b.ThermalResistanceHiCPerW {
				continue
			}
			what := "core"
			if kind == KindGPUMem {
				what = "memory"
			}
			out = append(out, SurveyFlag{Host: g.Host, GPU: g.Index, Kind: "drift", Component: kind + ":" + g.Index, Metric: "thermal_resistance_c_per_w",
				Value: va, Reference: vb,
				Reason: fmt.Sprintf("GPU %s%s (%s) %s: %.4f °C/W, %.0f %% above its last survey's %.4f °C/W at a like power (%.0f W vs %.0f W above idle), %.1f °C hotter: its cooling degraded",
					g.Index, onHost(g.Host), g.UUID, what, va, pct, vb, dpA, dpB, excessC)})
		}
	}
	if matched == 0 {
		return out, "no GPU of the earlier survey has the UUID of one surveyed now"
	}
	return out, ""
}

// likeForLike returns the thermal resistances of now (a) and before (b)
// to compare, and a's low end: their values, except where one load's
// cooling reacted (its value the bound from the peak) and the other's was
// read as the end of the load's bound (a survey whose cooling did not
// react but gave no fit, or one judged before the peak's bound existed):
// then the reacted one's end-of-load bound, read the same way.
func likeForLike(a, b *Fingerprint) (va, vb float64, aLo *float64) {
	va, vb, aLo = *a.ThermalResistanceCPerW, *b.ThermalResistanceCPerW, a.ThermalResistanceLoCPerW
	endBound := func(f *Fingerprint) bool {
		return !f.CoolingReacted && strings.HasPrefix(f.ThermalResistanceFrom, "lower bound: mean of the last")
	}
	switch {
	case a.CoolingReacted && a.EndOfLoadCPerW != nil && endBound(b):
		va = *a.EndOfLoadCPerW
		aLo = &va
	case b.CoolingReacted && b.EndOfLoadCPerW != nil && endBound(a):
		vb = *b.EndOfLoadCPerW
	}
	return va, vb, aLo
}

func onHost(h string) string {
	if h == "" {
		return ""
	}
	return " of " + h
}

func zText(z float64) string {
	if math.IsInf(z, 1) {
		return "∞ (the peers agree exactly)"
	}
	return fmt.Sprintf("%.1f", z)
}

func derefOr(p *float64, d float64) float64 {
	if p == nil {
		return d
	}
	return *p
}

// ExitCode is the survey's exit status for automation: 0 clean, 1 flagged,
// 2 when no GPU could be judged.
func (s Survey) ExitCode() int {
	switch {
	case len(s.GPUs) == 0:
		return 2
	case s.Status == "flagged":
		return 1
	}
	return 0
}
