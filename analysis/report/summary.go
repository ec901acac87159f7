package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// Options choose what a human-readable report shows beyond its results.
type Options struct {
	// Definitions appends how every quantity is computed (--definitions);
	// docs/report-schema.md states them all the same.
	Definitions bool
}

// WriteWith renders rep in format f as Write does, with o.
func WriteWith(w io.Writer, f Format, rep *analysis.Report, figs []Figure, o Options) error {
	rep.Notes = append(rep.Notes, analysis.DropNonFinite(rep)...)
	if f == JSON {
		return writeJSON(w, rep)
	}
	return render(w, f, reportDocumentWith(rep, figs, o))
}

// WriteComparisonWith renders cmp in format f as WriteComparison does,
// with o.
func WriteComparisonWith(w io.Writer, f Format, cmp *analysis.Comparison, figs []Figure, o Options) error {
	if dropped := analysis.DropNonFinite(cmp); len(dropped) > 0 && len(cmp.Runs) > 0 {
		cmp.Runs[0].Notes = append(cmp.Runs[0].Notes, dropped...)
	}
	if f == JSON {
		return writeJSON(w, cmp)
	}
	return render(w, f, comparisonDocumentWith(cmp, figs, o))
}

// summarySection answers first: per component its peak against its own
// limit, how fast it rose, whether it throttled, and when it was back at
// idle; the workload's throughput change; the blind spot of an immersed
// run. A run without temperatures gets one line saying so.
func summarySection(rep *analysis.Report) section {
	s := section{Title: "Summary"}
	if len(rep.Components) == 0 {
		line := "No temperature was recorded (GPU, CPU chip, NVMe, coolant or water), so no thermal result can be given"
		if rs := recordedOnly(rep); rs != "" {
			line += "; the run recorded " + rs
		}
		s.Paras = append(s.Paras, line+".")
		if w := workloadLine(rep); w != "" {
			s.List = append(s.List, w)
		}
		return s
	}
	if l := surveyLead(rep.Survey); l != "" {
		s.Paras = append(s.Paras, l)
	}
	if rep.Phases.Load == nil && len(rep.Episodes) > 0 {
		s.Paras = append(s.Paras, episodeSummary(rep))
		for _, c := range rep.Components {
			if l := hottestEpisodeLine(c); l != "" {
				s.List = append(s.List, l)
			}
		}
		return s
	}
	if rep.Phases.Load == nil {
		s.Paras = append(s.Paras, fmt.Sprintf("The run records no load phase, so nothing about heating, limits or throttling under load can be said of its %d temperatures: give it phases (heatsink import --phase NAME=START..END) or record with heatsink run.", len(rep.Components)))
		return s
	}
	if b := worstBlindSpot(rep); b != nil {
		s.Paras = append(s.Paras, b.Sentence())
	}
	if rep.Phases.LoadRecordedEndS != nil && rep.Phases.Load != nil {
		s.Paras = append(s.Paras, fmt.Sprintf("The work ended %.0f s before the load phase did (the GPUs' power fell to idle): results are over the powered load %.0f–%.0f s.",
			*rep.Phases.LoadRecordedEndS-rep.Phases.Load.End, rep.Phases.Load.Start, rep.Phases.Load.End))
	}
	if rep.Hold != nil {
		s.List = append(s.List, strings.TrimSuffix(holdAnswer(rep.Hold), "."))
	}
	// A run cut at the end of its load (a hold, a free run before one)
	// says once that the return to idle was not watched, not per line.
	watched := rep.Phases.Cooldown != nil && rep.Phases.Cooldown.Duration() >= rep.Options.HoldS
	for _, c := range rep.Components {
		s.List = append(s.List, componentLine(c, watched))
	}
	if w := workloadLine(rep); w != "" {
		s.List = append(s.List, w)
	}
	if !watched {
		after := "no cooldown was recorded"
		if cd := rep.Phases.Cooldown; cd != nil {
			after = fmt.Sprintf("the cooldown recorded (%.0f s) is shorter than the %.0f s a return to idle must hold", cd.Duration(), rep.Options.HoldS)
		}
		s.List = append(s.List, "return to idle not judged: "+after)
	}
	return s
}

// recordedOnly names what a run without temperatures recorded, from the
// analysis's note.
func recordedOnly(rep *analysis.Report) string {
	for _, n := range rep.Notes {
		if _, after, ok := strings.Cut(n, "; it recorded only "); ok {
			return after
		}
	}
	return ""
}

// componentLine is one component's answer.
func componentLine(c analysis.ComponentResult, withReturn bool) string {
	var parts []string
	switch {
	case c.MaxC == nil:
		parts = append(parts, "peak not computed: "+c.NotComputed["max_c"])
	case c.Limit != nil && c.MarginC != nil:
		rel := "below"
		if *c.MarginC < 0 {
			rel = "above"
		}
		parts = append(parts, fmt.Sprintf("peak %.1f °C, %.1f °C %s its %s %.0f °C", *c.MaxC, math.Abs(*c.MarginC), rel, c.Limit.Field, c.Limit.C))
	case c.Kind == analysis.KindCoolant || c.Kind == analysis.KindWater:
		parts = append(parts, fmt.Sprintf("peak %.1f °C", *c.MaxC))
	default:
		parts = append(parts, fmt.Sprintf("peak %.1f °C (no limit recorded)", *c.MaxC))
	}
	switch {
	case c.DidNotRise:
		parts = append(parts, "did not rise")
	case c.IdleMeanC != nil && c.LoadPeakC != nil:
		p := fmt.Sprintf("rose %.1f °C over idle %.1f °C", *c.LoadPeakC-*c.IdleMeanC, *c.IdleMeanC)
		if f := c.LoadFit; f != nil {
			p += fmt.Sprintf(", τ %.0f s [%.0f, %.0f]", f.TauS, f.TauLoS, f.TauHiS)
		}
		if c.Rise63S != nil && c.Rise90S != nil {
			p += fmt.Sprintf(", 63 %% in %.0f s, 90 %% in %.0f s", *c.Rise63S, *c.Rise90S)
		}
		parts = append(parts, p)
	}
	if th := c.Throttle; th != nil {
		p := "never throttled"
		if th.ThermalS > 0 || th.PowerS > 0 {
			p = fmt.Sprintf("clocks held back for heat %.0f s and for power %.0f s of %.0f s", th.ThermalS, th.PowerS, th.SpanS)
			if r := th.ReasonsText(); r != "" {
				p += " (" + r + ")"
			}
		}
		parts = append(parts, p)
	}
	if withReturn && !c.DidNotRise && c.Kind != analysis.KindCoolant && c.Kind != analysis.KindWater {
		if c.ReturnToIdleS != nil {
			parts = append(parts, fmt.Sprintf("back at idle %.0f s after the load", *c.ReturnToIdleS))
		} else if why, ok := strings.CutPrefix(c.NotComputed["return_to_idle_s"], "not reached: "); ok {
			parts = append(parts, why)
		} else if why != "" {
			parts = append(parts, "return to idle not computed: "+why)
		}
	}
	return c.ID + ": " + strings.Join(parts, "; ")
}

// workloadLine says how the job's throughput changed over the load.
func workloadLine(rep *analysis.Report) string {
	w := rep.Workload
	for _, m := range w.Metrics {
		if m.Name != w.Throughput {
			continue
		}
		line := fmt.Sprintf("workload %s: %s median %s over %d iterations", orDash(w.Name), m.Name, metricValue(m.Name, m.Median), m.N)
		if m.ChangePct != nil {
			line += fmt.Sprintf(", %+.1f %% from the first to the last tenth of the load", *m.ChangePct)
		}
		return line
	}
	return ""
}

// worstBlindSpot is the component that rose most while the coolant did
// not keep up, for the summary's one sentence.
func worstBlindSpot(rep *analysis.Report) *analysis.BlindSpot {
	if len(rep.BlindSpot) == 0 {
		return nil
	}
	bs := append([]analysis.BlindSpot(nil), rep.BlindSpot...)
	sort.SliceStable(bs, func(i, j int) bool {
		ni, nj := bs[i].NearLimitAtS != nil, bs[j].NearLimitAtS != nil
		if ni != nj {
			return ni
		}
		return bs[i].RiseC-bs[i].CoolantRiseC > bs[j].RiseC-bs[j].CoolantRiseC
	})
	return &bs[0]
}

// blindSpotSection is the immersion blind spot per component: one
// sentence first, then the table.
func blindSpotSection(rep *analysis.Report) (section, bool) {
	s := section{Title: "Immersion blind spot (hardware against the coolant the controller sees)"}
	if len(rep.BlindSpot) == 0 {
		if why := rep.NotComputed["blind_spot"]; why != "" && rep.Run.Cooling == "immersion" {
			s.Paras = append(s.Paras, "Not computed: "+why+".")
			return s, true
		}
		return s, false
	}
	s.Lead = append(s.Lead, worstBlindSpot(rep).Sentence())
	s.Table = &table{Head: []string{"component", "rise °C", "coolant rise °C", "limit °C", "near limit at s", "coolant moved at s", "controller at s"},
		Optional: []string{"limit °C", "controller at s"}}
	at := func(p *float64, from float64) string {
		if p == nil {
			return "never"
		}
		return fmt.Sprintf("%.0f", *p-from)
	}
	var ctl string
	for _, b := range rep.BlindSpot {
		limit := dash
		near := dash
		if b.Limit != nil {
			limit = fmt.Sprintf("%.0f %s", b.Limit.C, b.Limit.Field)
			near = at(b.NearLimitAtS, b.FromS)
		}
		reached := dash
		if b.ControllerC != nil {
			reached = at(b.ControllerReachedAtS, b.FromS)
			ctl = fmt.Sprintf("The controller's threshold is %.1f °C (%s).", *b.ControllerC, b.ControllerSource)
		}
		s.Table.Rows = append(s.Table.Rows, []string{b.Component, fmt.Sprintf("%.1f", noNegZero(b.RiseC, 1)), fmt.Sprintf("%.2f", noNegZero(b.CoolantRiseC, 2)),
			limit, near, at(b.CoolantMovedAtS, b.FromS), reached})
	}
	s.Table.dropEmptyColumns(3)
	b := rep.BlindSpot[0]
	s.Paras = append(s.Paras, fmt.Sprintf("Rises are load peak less idle mean over the load, %.0f–%.0f s; times are seconds into the load; near limit: within %.3g °C of the device's own limit (--near-limit); moved: the coolant's 15 s mean %.3g °C above its idle mean (--coolant-move); controller: when the coolant reached the controller's threshold.",
		b.FromS, b.ToS, b.NearLimitC, b.CoolantMoveC))
	if ctl != "" {
		s.Paras = append(s.Paras, ctl)
	}
	return s, true
}

// noNegZero rounds x to prec decimals without printing "-0.0" for a
// reading that did not move.
func noNegZero(x float64, prec int) float64 {
	if math.Abs(x) < 0.5*math.Pow(10, -float64(prec)) {
		return 0
	}
	return x
}

// surveyLead is a survey's verdict, first: what a site automates on
// (heatsink survey's exit status) before the physics behind it.
func surveyLead(sv *analysis.Survey) string {
	if sv == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Survey of %d GPUs: %s", len(sv.GPUs), sv.Status)
	if sv.Against != "" {
		fmt.Fprintf(&b, " (drift against survey %s)", sv.Against)
	}
	if len(sv.Flags) == 0 {
		b.WriteString(", nothing flagged by its rule (docs/survey.md).")
		return b.String()
	}
	b.WriteString(":")
	for _, f := range sv.Flags {
		b.WriteString(" " + strings.TrimSuffix(f.Reason, ".") + ".")
	}
	return b.String()
}

// episodeSummary says, for a recording without phases, where its answers
// come from: the load episodes found in each device's power.
func episodeSummary(rep *analysis.Report) string {
	devices := map[string]bool{}
	for _, e := range rep.Episodes {
		devices[e.Host+"/"+e.Device] = true
	}
	if rep.Survey != nil {
		return fmt.Sprintf("The survey's loads are %d load episodes found on %d devices from their own power draw, each analysed with its own baseline and cooldown. Per component, its hottest episode:",
			len(rep.Episodes), len(devices))
	}
	return fmt.Sprintf("The run records no baseline or load phase; %d load episodes were found on %d devices from their own power draw, and each was analysed with its own baseline and cooldown. Per component, its hottest episode:",
		len(rep.Episodes), len(devices))
}

// hottestEpisodeLine is the summary line of a component's hottest episode,
// "" when none of its episodes has a peak.
func hottestEpisodeLine(c analysis.ComponentResult) string {
	var hot *analysis.EpisodeResult
	for i := range c.Episodes {
		e := &c.Episodes[i]
		if e.MaxC != nil && (hot == nil || *e.MaxC > *hot.MaxC) {
			hot = e
		}
	}
	if hot == nil {
		return ""
	}
	line := componentLine(hot.ComponentResult, true)
	return fmt.Sprintf("%s (episode %d, the hottest of its %d)%s", strings.TrimSuffix(line, "."), hot.Episode, len(c.Episodes), suffixDot(line))
}

func suffixDot(s string) string {
	if strings.HasSuffix(s, ".") {
		return "."
	}
	return ""
}
