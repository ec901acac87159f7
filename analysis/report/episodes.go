package report

import (
	"fmt"
	"strings"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// maxEpisodeRows bounds the episode table of a human report; the JSON
// lists every episode.
const maxEpisodeRows = 60

// episodeSections say what was found in a recording without phases: the
// verdicts first (what a site engineer acts on), then the neighbour
// heating, each GPU's fingerprint and the episodes themselves. A run
// with phases, or without episodes, gets none of them.
func episodeSections(rep *analysis.Report) []section {
	if len(rep.Episodes) == 0 {
		if why := rep.NotComputed["episodes"]; why != "" {
			return []section{{Title: "Load episodes", Paras: []string{"None found: " + why + "."}}}
		}
		return nil
	}
	out := []section{verdictSection(rep.Verdicts)}
	out = append(out, couplingSections(rep.Coupling)...)
	out = append(out, fingerprintSection(rep.Verdicts), episodeTable(rep))
	return out
}

// verdictSection lists every GPU's thermal resistance against its peers,
// and any other metric where a GPU stands out.
func verdictSection(vs []analysis.Verdict) section {
	s := section{Title: "Verdicts", Paras: []string{"Each GPU against the like GPUs (same model, similar load power) of the same recordings, from its load episodes. " +
		"A GPU's thermal resistance cannot tell apart its own cooling, its slot in the airflow and its neighbours' heat; the neighbour heating below separates the last where single-GPU episodes exist."}}
	var rest []string
	for _, v := range vs {
		switch {
		case v.Metric == "thermal_resistance_c_per_w":
			s.List = append(s.List, v.Reason)
		case v.Status == "outlier" || v.Status == "differs":
			rest = append(rest, v.Reason)
		}
	}
	s.List = append(s.List, rest...)
	if len(s.List) == 0 {
		s.List = []string{"no GPU had an episode with a baseline to compare"}
	}
	return s
}

// couplingSections draw the coupling as source × neighbour matrices, core
// and memory, per host.
func couplingSections(cs []analysis.Coupling) []section {
	type key struct{ run, host, kind string }
	var order []key
	byKey := map[key][]analysis.Coupling{}
	for _, c := range cs {
		k := key{c.Run, c.Host, c.Kind}
		if byKey[k] == nil {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], c)
	}
	var out []section
	for _, k := range order {
		var gpus []string
		seen := map[string]bool{}
		cell := map[[2]string]string{}
		for _, c := range byKey[k] {
			for _, g := range []string{c.Source, c.Neighbour} {
				if !seen[g] {
					seen[g] = true
					gpus = append(gpus, g)
				}
			}
			v := "not measured"
			if c.CPerW != nil {
				v = fmt.Sprintf("%.4f ±%.4f (%d)", *c.CPerW, (*c.HiCPerW-*c.LoCPerW)/2, len(c.Episodes))
			}
			cell[[2]string{c.Source, c.Neighbour}] = v
		}
		title := "Neighbour heating, GPU " + k.kind + ", °C/W"
		if k.host != "" {
			title += " (" + strings.TrimSpace(k.run+" "+k.host) + ")"
		}
		t := &table{Head: append([]string{"source \\ neighbour"}, gpus...)}
		for _, src := range gpus {
			row := []string{"GPU " + src}
			for _, nb := range gpus {
				if src == nb {
					row = append(row, dash)
				} else {
					row = append(row, cell[[2]string{src, nb}])
				}
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, section{Title: title, Table: t,
			Paras: []string{"The neighbour's rise over its own baseline per watt the source drew above its idle, ± the half-width of its 95 % interval (episodes behind it); \"not measured\" where no episode loaded the source alone while the neighbour stayed idle."}})
	}
	return out
}

// fingerprintSection tables each GPU's medians over its episodes, as the
// verdicts weighed them.
func fingerprintSection(vs []analysis.Verdict) section {
	cols := []string{"thermal_resistance_c_per_w", "tau_s", "idle_mean_c", "throttle_thermal_share", "sm_clock_median_mhz", "throughput_per_w"}
	head := []string{"component", "episodes", "°C/W [interval]", "τ s", "idle °C", "thermal throttle", "SM MHz", "throughput/W"}
	rows := map[string][]string{}
	var order []string
	for _, v := range vs {
		id := strings.TrimSpace(v.Run + " " + v.Component)
		if rows[id] == nil {
			rows[id] = make([]string, len(head))
			for i := range rows[id] {
				rows[id][i] = dash
			}
			rows[id][0] = id
			order = append(order, id)
		}
		for i, c := range cols {
			if c != v.Metric {
				continue
			}
			val := &v.Value
			cell := num(val, []int{4, 0, 1, 2, 0, 3}[i])
			if c == "throughput_per_w" {
				// flop/s per W of a GPU is ~1e11: digits no one can read.
				cell = analysis.SI(v.Value)
			}
			if i == 0 {
				rows[id][1] = fmt.Sprint(v.Episodes)
				switch {
				case v.LowerBound:
					cell = "≥ " + cell
				case v.Lo != nil && v.Hi != nil:
					cell += fmt.Sprintf(" [%s, %s]", num(v.Lo, 4), num(v.Hi, 4))
				}
			}
			rows[id][i+2] = cell
		}
	}
	t := &table{Head: head, Optional: []string{"throughput/W", "SM MHz", "thermal throttle"}}
	for _, id := range order {
		t.Rows = append(t.Rows, rows[id])
	}
	t.dropEmptyColumns(3)
	return section{Title: "Thermal fingerprints", Table: t,
		Paras: []string{"Per GPU component, the median over its load episodes without a neighbour loaded (over all of them where it has none alone); ≥ marks a thermal resistance known only as a lower bound (no load fit held)."}}
}

// episodeTable lists the episodes.
func episodeTable(rep *analysis.Report) section {
	t := &table{Head: []string{"#", "device", "start", "load s", "power W", "idle W", "baseline s", "cooldown s"}}
	span := func(s *analysis.Span) string {
		if s == nil {
			return dash
		}
		return fmt.Sprintf("%.0f", s.Duration())
	}
	for i, e := range rep.Episodes {
		if i == maxEpisodeRows {
			break
		}
		load := fmt.Sprintf("%.0f", e.EndS-e.StartS)
		if e.Open {
			load += " (open)"
		}
		power := num(e.PowerW, 0)
		if e.PowerW == nil && e.UsagePct != nil {
			power = num(e.UsagePct, 0) + " %"
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(e.Index), e.Device, e.Start.UTC().Format("01-02 15:04:05"), load, power, num(e.IdlePowerW, 0), span(e.Baseline), span(e.Cooldown)})
	}
	s := section{Title: "Load episodes", Table: t,
		Paras: []string{fmt.Sprintf("%d load episodes found in the devices' own power (the rule is under Definitions); each component's results per episode are in the JSON report (components[].episodes).", len(rep.Episodes))}}
	if len(rep.Episodes) > maxEpisodeRows {
		s.Paras = append(s.Paras, fmt.Sprintf("The first %d are listed.", maxEpisodeRows))
	}
	return s
}

// comparedGPUSections are the verdicts across the runs of a comparison and
// each run's neighbour heating.
func comparedGPUSections(cmp *analysis.Comparison) []section {
	if len(cmp.Verdicts) == 0 && len(cmp.Coupling) == 0 {
		return nil
	}
	out := []section{verdictSection(cmp.Verdicts)}
	out = append(out, couplingSections(cmp.Coupling)...)
	return append(out, fingerprintSection(cmp.Verdicts))
}
