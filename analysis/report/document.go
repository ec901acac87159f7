// Package report renders analysis reports and comparisons as plain text,
// Markdown, HTML or JSON. The three human formats render one document
// model, so they always say the same thing; JSON is the Report itself (its
// schema is docs/report-schema.md).
package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// Figure is a plot of a report: SVG and PNG name its files beside the
// report (relative paths; empty when none were written), Data is the SVG
// itself, which HTML inlines so that report.html is one file.
type Figure struct {
	Title string
	SVG   string
	PNG   string
	Data  []byte
}

// document is what a human-readable report says, before formatting.
type document struct {
	Title    string
	Sections []section
}

type section struct {
	Title string
	// Lead are paragraphs that come before the table: the answer a table
	// details.
	Lead    []string
	Paras   []string
	Table   *table
	List    []string
	Figures []Figure
}

type table struct {
	Head []string
	Rows [][]string
	// Optional names the columns a narrow text report may leave out,
	// the first to go first.
	Optional []string
}

// dash stands for a number that was not computed; the reason is listed below
// the table.
const dash = "—"

func num(p *float64, prec int) string {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return dash
	}
	// A result that is not zero is never shown as 0.00 (a heat interval
	// over a rise of 1e200 °C is 5e-199, not nothing), nor a huge one as
	// two hundred digits.
	if a := math.Abs(*p); a != 0 && (a < 0.5*math.Pow(10, -float64(prec)) || a >= 1e15) {
		return fmt.Sprintf("%.3g", *p)
	}
	return fmt.Sprintf("%.*f", prec, *p)
}

func reportDocument(rep *analysis.Report, figs []Figure) document {
	return reportDocumentWith(rep, figs, Options{})
}

// reportDocumentWith orders the report as a reader asks: the answer first,
// then what was run, what was wrong with the input, and the results in
// detail; sections a run has nothing for (the thermal ones of a machine
// without temperatures, pumps of an air-cooled run) are left out rather
// than filled with "not computed".
func reportDocumentWith(rep *analysis.Report, figs []Figure, o Options) document {
	d := document{Title: "heatsink report: run " + orDash(rep.Run.ID)}
	d.Sections = append(d.Sections, summarySection(rep))
	d.Sections = append(d.Sections, episodeSections(rep)...) // verdicts lead where episodes were found
	d.Sections = append(d.Sections, runSection(rep))
	// What is wrong with the input comes before the results it explains.
	thermal := len(rep.Components) > 0
	var notes []string
	for _, n := range rep.Notes {
		if !thermal && strings.HasPrefix(n, analysis.NoTemperatureNote) {
			continue // the summary's first line says it
		}
		notes = append(notes, n)
	}
	if len(notes) > 0 {
		d.Sections = append(d.Sections, section{Title: "Notes on the input", List: notes})
	}
	if bs, ok := blindSpotSection(rep); ok {
		d.Sections = append(d.Sections, bs)
	}
	if thermal {
		d.Sections = append(d.Sections, componentSection(rep, ""))
	}
	if len(rep.Workload.Metrics) > 0 || thermal {
		d.Sections = append(d.Sections, workloadSection(rep))
	}
	if rep.Hold != nil {
		d.Sections = append(d.Sections, holdSection(rep))
	}
	d.Sections = append(d.Sections, fitSections(rep)...)
	if len(rep.PumpCycles) > 0 || rep.Run.Cooling == "immersion" {
		d.Sections = append(d.Sections, pumpSection(rep))
	}
	if thermal {
		d.Sections = append(d.Sections, coolingSection(rep))
	}
	if len(rep.Slowdown) > 0 {
		d.Sections = append(d.Sections, slowdownSection(rep))
	}
	d.Sections = append(d.Sections, extensionSections(rep)...)
	if len(figs) > 0 {
		d.Sections = append(d.Sections, section{Title: "Figures", Figures: figs})
	}
	if o.Definitions {
		d.Sections = append(d.Sections, definitionSection(rep))
	}
	if thermal {
		d.Sections = append(d.Sections, sensorSection(rep))
	}
	if !o.Definitions {
		d.Sections = append(d.Sections, section{Title: "Definitions", Paras: []string{definitionsPointer}})
	}
	return d
}

// definitionsPointer says where the definitions are when they are not
// printed.
const definitionsPointer = "How each quantity is computed, with the options in force: --definitions, or docs/report-schema.md."

func orDash(s string) string {
	if s == "" {
		return dash
	}
	return s
}

func runSection(rep *analysis.Report) section {
	r := rep.Run
	s := section{Title: "Run"}
	s.List = append(s.List,
		fmt.Sprintf("directory: %s", r.Dir),
		fmt.Sprintf("host: %s; status: %s; cooling: %s; workload: %s", orDash(r.Host), orDash(r.Status), r.Cooling, orDash(r.Workload)),
		fmt.Sprintf("start: %s; recording: %.0f s; %d points, %d lines skipped", r.Start.Format("2006-01-02 15:04:05 MST"), r.EndS, r.Points, r.BadLines),
		"phases: "+phases(rep))
	if len(r.Labels) > 0 {
		var ls []string
		for k, v := range r.Labels {
			ls = append(ls, k+"="+v)
		}
		sort.Strings(ls)
		s.List = append(s.List, "labels: "+strings.Join(ls, ", "))
	}
	if why := rep.NotComputed["phases"]; why != "" {
		s.Paras = append(s.Paras, "Phases: "+why+".")
	}
	return s
}

func phases(rep *analysis.Report) string {
	var ps []string
	for _, p := range []struct {
		name string
		sp   *analysis.Span
	}{{"baseline", rep.Phases.Baseline}, {"load", rep.Phases.Load}, {"cooldown", rep.Phases.Cooldown}} {
		if p.sp == nil {
			ps = append(ps, p.name+" not recorded")
			continue
		}
		open := ""
		if p.sp.Open {
			open = " (end not recorded)"
		}
		ps = append(ps, fmt.Sprintf("%s %.0f–%.0f s%s", p.name, p.sp.Start, p.sp.End, open))
	}
	return strings.Join(ps, ", ")
}

// componentSection is the per-component table; title overrides the default.
func componentSection(rep *analysis.Report, title string) section {
	if title == "" {
		title = "Components"
	}
	s := section{Title: title}
	if len(rep.Components) == 0 {
		s.Paras = append(s.Paras, "No temperature series found (GPU, CPU chip, NVMe, coolant or water).")
		return s
	}
	s.Table = &table{Head: []string{"component", "kind", "idle min °C", "idle mean °C", "idle max °C", "max °C",
		"heat interval s/°C", "steepest s/°C", "return to idle s", "peak Δcoolant °C", "coolant lag s"}}
	for _, c := range rep.Components {
		s.Table.Rows = append(s.Table.Rows, []string{c.ID, c.Kind,
			num(c.IdleMinC, 1), num(c.IdleMeanC, 1), num(c.IdleMaxC, 1), num(c.MaxC, 1),
			num(c.HeatIntervalSPerC, 2), num(c.SteepestSPerC, 2), num(c.ReturnToIdleS, 0),
			num(c.CoolantDiffC, 1), num(c.CoolantLagS, 0)})
	}
	s.Table.dropEmptyColumns(2)
	s.Table.Optional = []string{"idle min °C", "kind", "idle max °C", "steepest s/°C", "coolant lag s", "peak Δcoolant °C"}
	s.List = notComputed(rep.Components)
	return s
}

// dropEmptyColumns removes the columns after the first keep in which no row
// has a number (an air-cooled run's coolant columns), so the table fits a
// terminal; the reasons listed under it still name them.
func (t *table) dropEmptyColumns(keep int) {
	var cols []int
	for j := range t.Head {
		empty := j >= keep
		for _, r := range t.Rows {
			if r[j] != dash {
				empty = false
				break
			}
		}
		if !empty {
			cols = append(cols, j)
		}
	}
	pick := func(r []string) []string {
		out := make([]string, 0, len(cols))
		for _, j := range cols {
			out = append(out, r[j])
		}
		return out
	}
	t.Head = pick(t.Head)
	for i, r := range t.Rows {
		t.Rows[i] = pick(r)
	}
}

// sensorSection says what each component measured.
func sensorSection(rep *analysis.Report) section {
	s := section{Title: "Component sources"}
	for _, c := range rep.Components {
		if c.Name != "" {
			s.List = append(s.List, fmt.Sprintf("%s: %s (%d readings)", c.ID, c.Name, c.Readings))
		}
	}
	return s
}

// notComputed lists why each dash is a dash, grouping the components that
// share a reason for the same columns.
func notComputed(cs []analysis.ComponentResult) []string {
	type key struct{ why, fields string }
	groups := map[key][]string{}
	var order []key
	for _, c := range cs {
		byWhy := map[string][]string{}
		for f, why := range c.NotComputed {
			if summaryOnly[f] {
				continue // the summary line says it
			}
			byWhy[why] = append(byWhy[why], f)
		}
		var whys []string
		for why := range byWhy {
			whys = append(whys, why)
		}
		sort.Strings(whys)
		for _, why := range whys {
			fs := byWhy[why]
			sort.Slice(fs, func(i, j int) bool { return columnOrder(fs[i]) < columnOrder(fs[j]) })
			k := key{why, strings.Join(fs, ", ")}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], c.ID)
		}
	}
	var out []string
	for _, k := range order {
		out = append(out, fmt.Sprintf("not computed: %s of %s: %s", k.fields, strings.Join(groups[k], ", "), k.why))
	}
	return out
}

// summaryOnly are the fields only the summary shows; its line for the
// component says why one is missing ("no limit recorded", "did not rise").
var summaryOnly = map[string]bool{"margin_c": true, "rise_63_s": true, "rise_90_s": true}

var columns = []string{"idle_min_c", "idle_mean_c", "idle_max_c", "max_c", "load_peak_c", "heat_interval_s_per_c",
	"steepest_s_per_c", "return_to_idle_s", "coolant_peak_diff_c", "coolant_lag_s", "load_fit", "cooldown_fit", "heat_interval_band"}

func columnOrder(f string) int {
	for i, c := range columns {
		if c == f {
			return i
		}
	}
	return len(columns)
}

func pumpSection(rep *analysis.Report) section {
	s := section{Title: "Pump cycles"}
	if why := rep.NotComputed["pump_cycles"]; why != "" {
		s.Paras = append(s.Paras, "Not computed: "+why+".")
		return s
	}
	s.Table = &table{Head: []string{"tank", "start s", "duration s", "complete", "coolant at start °C", "heat removed kJ", "pump energy kJ", "detected from"}}
	s.Table.Optional = []string{"detected from", "complete"}
	methods := map[string]bool{}
	var notes []string
	for i, c := range rep.PumpCycles {
		complete := "yes"
		if !c.Complete {
			complete = "no"
		}
		s.Table.Rows = append(s.Table.Rows, []string{c.Tank, fmt.Sprintf("%.0f", c.StartS), fmt.Sprintf("%.0f", c.DurationS), complete,
			num(c.StartCoolantC, 1), num(c.HeatRemovedKJ, 1), num(c.PumpEnergyKJ, 1), c.Source})
		for _, m := range []string{c.HeatMethod, c.PumpEnergyMethod} {
			if m != "" && !methods[m] {
				methods[m] = true
				s.Paras = append(s.Paras, "Method: "+m+".")
			}
		}
		var fs []string
		for f := range c.NotComputed {
			fs = append(fs, f)
		}
		sort.Strings(fs)
		for _, f := range fs {
			notes = append(notes, fmt.Sprintf("not computed: %s of cycle %d: %s", f, i+1, c.NotComputed[f]))
		}
	}
	s.List = notes
	if f := rep.PumpCycleFit; f != nil {
		s.Paras = append(s.Paras, fmt.Sprintf("Heat removed per cycle = %.1f kJ + %.2f kJ/°C × coolant temperature at its start (r² = %.3f, p = %.3g, %d complete cycles).",
			f.InterceptKJ, f.SlopeKJPerC, f.R2, f.PValue, f.N))
	} else if why := rep.NotComputed["pump_cycle_fit"]; why != "" {
		s.Paras = append(s.Paras, "Fit of heat removed against start temperature not computed: "+why+".")
	}
	return s
}

func coolingSection(rep *analysis.Report) section {
	ce := rep.CoolingEnergy
	s := section{Title: "Cooling energy"}
	if ce.EnergyKJ == nil {
		s.Paras = append(s.Paras, fmt.Sprintf("Not computed (%s cooling): %s.", ce.Cooling, ce.NotComputed))
		return s
	}
	until := "until every component was back at idle"
	if !ce.Normalised {
		until = "until the end of the recording, before every component was back at idle (a lower bound)"
	}
	s.Paras = append(s.Paras, fmt.Sprintf("%.1f kJ (%s cooling) from %.0f s to %.0f s, %s.", *ce.EnergyKJ, ce.Cooling, *ce.FromS, *ce.ToS, until),
		"Method: "+ce.Method+".")
	if ce.BaselineUnaccountedW != nil {
		s.Paras = append(s.Paras, fmt.Sprintf("Unaccounted node power at idle: %.1f W.", *ce.BaselineUnaccountedW))
	}
	if ce.GapS > 0 {
		s.Paras = append(s.Paras, fmt.Sprintf("%.0f s of the span had no readings and were bridged linearly.", ce.GapS))
	}
	for _, n := range ce.NotNormalised {
		s.List = append(s.List, "not back at idle: "+n)
	}
	return s
}

func slowdownSection(rep *analysis.Report) section {
	s := section{Title: "Runtime against temperature (per iteration)"}
	if why := rep.NotComputed["slowdown"]; why != "" {
		s.Paras = append(s.Paras, "Not computed: "+why+".")
		return s
	}
	s.Table = &table{Head: []string{"component", "iterations", "runtime change %/10 °C", "over °C", "r²", "p-value", "longer when hotter"}}
	for _, r := range rep.Slowdown {
		sig := "no"
		if r.Significant {
			sig = "yes"
		}
		if r.SlopeSPerC == nil {
			sig = dash
			s.List = append(s.List, fmt.Sprintf("not computed for %s: %s", r.Component, r.NotComputed))
		}
		p := dash
		if r.PValue != nil {
			p = fmt.Sprintf("%.3g", *r.PValue)
		}
		eff := dash
		if r.RuntimeChangePctPer10C != nil && r.RuntimeChangeLoPctPer10C != nil && r.RuntimeChangeHiPctPer10C != nil {
			eff = fmt.Sprintf("%+.2f [%+.2f, %+.2f]", *r.RuntimeChangePctPer10C, *r.RuntimeChangeLoPctPer10C, *r.RuntimeChangeHiPctPer10C)
		}
		s.Table.Rows = append(s.Table.Rows, []string{r.Component, fmt.Sprint(r.N), eff, num(r.TempSpanC, 1), num(r.R2, 3), p, sig})
	}
	s.Paras = append(s.Paras, fmt.Sprintf("Each iteration's runtime regressed on the component's mean temperature during it: the change in runtime per 10 °C as a %% of the mean runtime, with its %.3g %% interval, over the span of temperatures the iterations saw; longer when hotter: a positive slope with p < %.3g. This is not the GPU's clock throttling, which follows.",
		100*(1-rep.Options.Alpha), rep.Options.Alpha))
	s.Paras = append(s.Paras, throttleLine(rep))
	return s
}

// throttleLine is the GPUs' own account of their clocks during the load,
// kept apart from the regression so that neither is read as the other.
func throttleLine(rep *analysis.Report) string {
	var parts []string
	for _, c := range rep.Components {
		th := c.Throttle
		if th == nil {
			continue
		}
		p := fmt.Sprintf("%s never held its clocks back (%.0f s of readings)", c.ID, th.SpanS)
		if th.ThermalS > 0 || th.PowerS > 0 {
			p = fmt.Sprintf("%s held its clocks back for heat %.0f s and for power %.0f s of %.0f s", c.ID, th.ThermalS, th.PowerS, th.SpanS)
			if r := th.ReasonsText(); r != "" {
				p += " (" + r + ")"
			}
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "Clock throttling by the device (NVML clock event reasons): not recorded."
	}
	return "Clock throttling by the device itself (NVML clock event reasons during the load): " + strings.Join(parts, "; ") + "."
}

func definitionSection(rep *analysis.Report) section {
	s := section{Title: "Definitions"}
	for _, d := range rep.Definitions {
		s.List = append(s.List, d.Name+": "+d.Text+".")
	}
	return s
}

func comparisonDocument(cmp *analysis.Comparison, figs []Figure) document {
	return comparisonDocumentWith(cmp, figs, Options{})
}

func comparisonDocumentWith(cmp *analysis.Comparison, figs []Figure, o Options) document {
	var names []string
	for i, r := range cmp.Runs {
		names = append(names, fmt.Sprintf("%s = %s", cmp.Labels[i], orDash(r.Run.ID)))
	}
	d := document{Title: "heatsink compare: " + strings.Join(names, ", ")}
	runs := section{Title: "Runs"}
	for i, r := range cmp.Runs {
		runs.List = append(runs.List, fmt.Sprintf("%s: %s (%s, %s cooling, workload %s), %s", cmp.Labels[i], orDash(r.Run.ID), r.Run.Dir, r.Run.Cooling, orDash(r.Run.Workload), phases(r)))
	}
	d.Sections = append(d.Sections, runs)
	d.Sections = append(d.Sections, comparedGPUSections(cmp)...)
	for _, k := range cmp.Kinds {
		s := section{Title: analysis.KindName(k.Kind)}
		s.Table = &table{Head: []string{"run", "components", "idle mean °C", "max °C", "heat interval s/°C", "steepest s/°C", "return to idle s"}}
		for _, r := range k.PerRun {
			rt := num(r.ReturnToIdleS, 0)
			if r.ReturnToIdleS == nil && r.Components > 0 {
				rt = "not reached"
			}
			s.Table.Rows = append(s.Table.Rows, []string{r.Run, fmt.Sprint(r.Components), num(r.IdleMeanC, 1), num(r.MaxC, 1),
				num(r.HeatIntervalSPerC, 2), num(r.SteepestSPerC, 2), rt})
		}
		for _, q := range k.Ratios {
			s.List = append(s.List, q.Text)
		}
		d.Sections = append(d.Sections, s)
	}
	ce := section{Title: "Cooling energy"}
	// The method and any reason go under the table, one line per run: in
	// a cell they made the table 130 columns wide.
	ce.Table = &table{Head: []string{"run", "cooling", "energy kJ", "until s"}}
	for i, r := range cmp.Runs {
		e := r.CoolingEnergy
		until := dash
		if e.ToS != nil && e.EnergyKJ != nil {
			until = fmt.Sprintf("%.0f", *e.ToS)
		}
		ce.Table.Rows = append(ce.Table.Rows, []string{cmp.Labels[i], e.Cooling, num(e.EnergyKJ, 1), until})
		switch {
		case e.EnergyKJ == nil:
			ce.List = append(ce.List, fmt.Sprintf("%s: not computed: %s", cmp.Labels[i], e.NotComputed))
		case !e.Normalised:
			ce.List = append(ce.List, fmt.Sprintf("%s: %s; until the end of the recording, so a lower bound", cmp.Labels[i], e.Method))
		default:
			ce.List = append(ce.List, fmt.Sprintf("%s: %s", cmp.Labels[i], e.Method))
		}
	}
	for _, q := range cmp.CoolingEnergy {
		ce.List = append(ce.List, q.Text)
	}
	d.Sections = append(d.Sections, ce)
	if ws, ok := workloadComparison(cmp); ok {
		d.Sections = append(d.Sections, ws)
	}
	if len(figs) > 0 {
		d.Sections = append(d.Sections, section{Title: "Figures", Figures: figs})
	}
	for i, r := range cmp.Runs {
		d.Sections = append(d.Sections, componentSection(r, fmt.Sprintf("Run %s: components", cmp.Labels[i])))
	}
	if len(cmp.Runs) > 0 && o.Definitions {
		d.Sections = append(d.Sections, definitionSection(cmp.Runs[0]))
	} else {
		d.Sections = append(d.Sections, section{Title: "Definitions", Paras: []string{definitionsPointer}})
	}
	return d
}
