package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// A survey owns the node while it runs: each GPU is loaded only in its
// alone phase and the together phase. A GPU that draws power in a phase
// where the survey did not load it is used by something else (another
// job, a user's process), and that load is in its readings and its
// neighbours': the fingerprints are not the survey's own. The survey
// knows its phases, so it can say so instead of reading the extra heat as
// a cooling fault. On the real 4×H100 node an idle GPU's median power
// moved at most 2 W while a neighbour was loaded and 3 W in the 40 s
// after its own load (leakage of the still-hot die), against idle levels
// of 70-74 W.

// JudgeSurveyRun is JudgeSurvey with the checks that need the run itself:
// a GPU loaded by something other than the survey (kind "foreign_load").
func JudgeSurveyRun(r *Run, rep *Report, against *Survey, rule SurveyRule) Survey {
	s := JudgeSurvey(rep, against, rule)
	flags, why := foreignLoadFlags(r, rule)
	if why != "" {
		s.NotComputed["foreign_load"] = why
	}
	s.Flags = append(s.Flags, flags...)
	if len(s.Flags) > 0 {
		s.Status = "flagged"
	}
	return s
}

// foreignLoadFlags flags each GPU that ran kernels in a phase the survey
// did not load it in: its median utilisation there ForeignLoadUtilPct or
// more. Power is not the evidence where utilisation was recorded: on the
// real 2×H200 survey (testdata/h200x2-survey) a GPU's idle power rose
// from 82 W to 125 W after its own load and stayed there, its clocks at
// 1980 MHz (most likely held up by the survey's open CUDA context), while its
// utilisation read 0 in every phase the survey did not load it; the
// second process of the handicap trials read 20-31 %. Without
// utilisation, the power rule: a median more than max(ForeignLoadW,
// ForeignLoadPct of its quietest such phase) above that quietest phase.
func foreignLoadFlags(r *Run, rule SurveyRule) ([]SurveyFlag, string) {
	if r == nil || r.Meta == nil {
		return nil, "no run to read the survey's phases from"
	}
	type span struct {
		name     string
		from, to float64
	}
	var phases []span
	for _, p := range r.Meta.Phases {
		if p.End == nil || !isSurveyPhase(p.Name) {
			continue
		}
		phases = append(phases, span{p.Name, p.Start.Sub(r.Start).Seconds(), p.End.Sub(r.Start).Seconds()})
	}
	if len(phases) == 0 {
		return nil, "the run has no survey phases (survey_baseline, alone:N...)"
	}
	var out []SurveyFlag
	utilOf := map[string]*Series{}
	for _, ser := range r.Find(schema.GPU, schema.FieldUtilPct, nil) {
		utilOf[ser.Tag(schema.TagHost)+"/"+ser.Tag(schema.TagGPU)] = ser
	}
	unloaded := func(g string, p span) bool {
		return p.name != "alone:"+g && p.name != "together" && p.to-p.from >= 10
	}
	for _, ser := range r.Find(schema.GPU, schema.FieldPowerW, nil) {
		g := ser.Tag(schema.TagGPU)
		if u := utilOf[ser.Tag(schema.TagHost)+"/"+g]; u != nil && rule.ForeignLoadUtilPct > 0 {
			var hit []string
			top := 0.0
			for _, p := range phases {
				if !unloaded(g, p) {
					continue
				}
				i, j := window(u.T, p.from, p.to)
				_, v := Finite(u.T[i:j], u.V[i:j])
				if len(v) < 5 {
					continue
				}
				if m := median(v); m >= rule.ForeignLoadUtilPct {
					hit, top = append(hit, p.name), math.Max(top, m)
				}
			}
			if len(hit) > 0 {
				out = append(out, SurveyFlag{Host: ser.Tag(schema.TagHost), GPU: g, Kind: "foreign_load", Component: "gpu_core:" + g,
					Metric: "util_pct", Value: top, Reference: 0,
					Reason: fmt.Sprintf("GPU %s%s ran kernels %.0f %% of the time (median) during %s, where the survey did not load it: something else used it, so its readings and its neighbours' hold that load; survey again on an idle node",
						g, onHost(ser.Tag(schema.TagHost)), top, strings.Join(hit, ", "))})
			}
			continue
		}
		var names []string
		var meds []float64
		for _, p := range phases {
			if !unloaded(g, p) {
				continue
			}
			i, j := window(ser.T, p.from, p.to)
			if _, v := Finite(ser.T[i:j], ser.V[i:j]); len(v) >= 5 {
				names, meds = append(names, p.name), append(meds, median(v))
			}
		}
		if len(meds) < 2 {
			continue
		}
		ref := slices.Min(meds)
		limit := ref + math.Max(rule.ForeignLoadW, rule.ForeignLoadPct/100*ref)
		var hit []string
		top := ref
		for k, m := range meds {
			if m > limit {
				hit = append(hit, names[k])
				top = math.Max(top, m)
			}
		}
		if len(hit) == 0 {
			continue
		}
		out = append(out, SurveyFlag{Host: ser.Tag(schema.TagHost), GPU: g, Kind: "foreign_load", Component: "gpu_core:" + g,
			Metric: "power_w", Value: top, Reference: ref,
			Reason: fmt.Sprintf("GPU %s%s drew up to %.0f W (median) during %s, where the survey did not load it, against %.0f W in its quietest such phase: something else used it, so its readings and its neighbours' hold that load; survey again on an idle node",
				g, onHost(ser.Tag(schema.TagHost)), top, strings.Join(hit, ", "), ref)})
	}
	return out, ""
}

func isSurveyPhase(name string) bool {
	switch {
	case name == "survey_baseline", name == "together", name == "survey_cooldown":
		return true
	case strings.HasPrefix(name, "alone:"), strings.HasPrefix(name, "return:"):
		return true
	}
	return false
}
