package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/heatsink-hpc/heatsink/analysis"
)

func f(v float64) *float64 { return &v }

// sample is a report as Analyze makes them: one component fully computed,
// one with reasons instead of numbers, an open pump cycle, an immersion
// cooling energy that is a lower bound.
func sample() *analysis.Report {
	return &analysis.Report{
		Schema: analysis.ReportSchema,
		Run: analysis.RunInfo{ID: "run-7", Dir: "/runs/7", Host: "node1", Start: time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC),
			EndS: 6000, Cooling: "immersion", Workload: "dgemm", Points: 72000},
		Phases:      analysis.Phases{Baseline: &analysis.Span{Start: 0, End: 600}, Load: &analysis.Span{Start: 600, End: 2400}},
		Definitions: []analysis.Definition{{Name: "heat_interval_s_per_c", Text: "(t_peak − t_load_start) / (T_peak − idle_mean)"}},
		Components: []analysis.ComponentResult{
			{ID: "gpu_core:0", Kind: analysis.KindGPUCore, Name: "NVIDIA H100", Readings: 6001,
				IdleMinC: f(34), IdleMeanC: f(35.04), IdleMaxC: f(36), MaxC: f(74), HeatIntervalSPerC: f(14.436),
				SteepestSPerC: f(3.32), ReturnToIdleS: f(263), CoolantDiffC: f(40.5), CoolantLagS: f(161)},
			{ID: "cpu:pci_0000|<b>", Kind: analysis.KindCPU, Readings: 6001,
				IdleMinC: f(40), IdleMeanC: f(41), IdleMaxC: f(42), MaxC: f(80),
				NotComputed: map[string]string{
					"heat_interval_s_per_c": "load-phase peak 41.50 °C is only 0.50 °C above the idle mean (minimum rise 1 °C)",
					"steepest_s_per_c":      "the series never rises over a fit window",
					"return_to_idle_s":      "not reached: not back within 1 °C of the idle maximum 42.00 °C for 60 s in the 3600 s recorded after the load",
					"coolant_peak_diff_c":   "no tank coolant temperature recorded (not an immersed run)",
					"coolant_lag_s":         "no tank coolant temperature recorded (not an immersed run)",
				}},
		},
		PumpCycles: []analysis.PumpCycle{
			{Tank: "pod1", StartS: 1000, DurationS: 300, Complete: true, Source: "pump rpm", StartCoolantC: f(31.2), HeatRemovedKJ: f(748.5), HeatMethod: "tank dissipation", PumpEnergyKJ: f(89.9), PumpEnergyMethod: "tank consumption above its pumps-stopped mean"},
			{Tank: "pod1", StartS: 5900, DurationS: 100, Source: "pump rpm", NotComputed: map[string]string{"start_coolant_c": "no coolant reading at the cycle's start"}},
		},
		NotComputed:   map[string]string{"pump_cycle_fit": "1 points; a fit with a p-value needs at least 3"},
		CoolingEnergy: analysis.CoolingEnergy{Cooling: "immersion", Method: "tank consumption integrated", EnergyKJ: f(1234.5), FromS: f(600), ToS: f(6000), NotNormalised: []string{"cpu:pci_0000|<b>: not reached"}},
		Slowdown:      []analysis.SlowdownResult{{Component: "gpu_core:0", N: 18, SlopeSPerC: f(0.02), InterceptS: f(90), R2: f(0.98), PValue: f(1e-12), Significant: true}},
		Notes:         []string{"3 lines of points.lp could not be decoded and were skipped"},
	}
}

// The JSON form is the documented schema (docs/report-schema.md): these
// names are a contract with scripts, and a number not computed is null with
// its reason beside it.
func TestJSONSchemaNames(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, JSON, sample(), nil); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	for _, k := range []string{"schema", "run", "phases", "options", "definitions", "components", "pump_cycles", "pump_cycle_fit", "cooling_energy", "slowdown", "not_computed", "notes"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("top-level %q missing", k)
		}
	}
	comps := doc["components"].([]any)
	for _, c := range comps {
		m := c.(map[string]any)
		for _, k := range []string{"id", "kind", "idle_min_c", "idle_mean_c", "idle_max_c", "max_c", "heat_interval_s_per_c", "steepest_s_per_c", "return_to_idle_s", "coolant_peak_diff_c", "coolant_lag_s"} {
			if _, ok := m[k]; !ok {
				t.Errorf("component %v: %q missing", m["id"], k)
			}
		}
		if _, ok := m["Series"]; ok {
			t.Error("the readings leaked into the JSON")
		}
	}
	cpu := comps[1].(map[string]any)
	if cpu["heat_interval_s_per_c"] != nil {
		t.Errorf("not computed heat interval = %v, want null", cpu["heat_interval_s_per_c"])
	}
	why := cpu["not_computed"].(map[string]any)
	if !strings.HasPrefix(why["return_to_idle_s"].(string), "not reached") {
		t.Errorf("reason = %v", why["return_to_idle_s"])
	}
	if got := comps[0].(map[string]any)["heat_interval_s_per_c"]; got != 14.436 {
		t.Errorf("heat interval = %v", got)
	}
	ce := doc["cooling_energy"].(map[string]any)
	if ce["energy_kj"] != 1234.5 || ce["normalised"] != false || ce["cooling"] != "immersion" {
		t.Errorf("cooling_energy = %v", ce)
	}
}

// Wide: every column, so each dash can be counted (width_test.go checks
// the narrow form).
func TestTextShowsDashesAndReasons(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteWith(&buf, TextWide, sample(), []Figure{{Title: "Temperatures", SVG: "temperatures.svg", PNG: "temperatures.png"}}, Options{Definitions: true}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"heatsink report: run run-7",
		"heat interval s/°C",
		"14.44", // rounded to 2 places
		"not computed: heat_interval_s_per_c of cpu:pci_0000|<b>: load-phase peak 41.50 °C",
		"not computed: coolant_peak_diff_c, coolant_lag_s of cpu:pci_0000|<b>: no tank coolant temperature recorded",
		"not computed: return_to_idle_s of cpu:pci_0000|<b>: not reached",
		"not computed: start_coolant_c of cycle 2: no coolant reading",
		"Fit of heat removed against start temperature not computed: 1 points",
		"1234.5 kJ (immersion cooling) from 600 s to 6000 s, until the end of the recording, before every component was back at idle (a lower bound)",
		"heat_interval_s_per_c: (t_peak − t_load_start) / (T_peak − idle_mean).",
		"temperatures.svg",
		"3 lines of points.lp could not be decoded",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	// The CPU row: computed idle figures, dashes where not computed.
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "cpu:pci_0000|<b>") && strings.Contains(line, "41.0") {
			if strings.Count(line, dash) != 5 {
				t.Errorf("cpu row has %d dashes, want 5: %q", strings.Count(line, dash), line)
			}
			return
		}
	}
	t.Errorf("no cpu row in\n%s", out)
}

func TestMarkdownEscapesCells(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, Markdown, sample(), nil); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, `| cpu:pci\_0000\|&lt;b&gt; | cpu |`) {
		t.Errorf("cell with | and < not escaped:\n%s", out)
	}
	// Every table row has as many cells as its header.
	var head int
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| ") {
			head = 0
			continue
		}
		n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
		if head == 0 {
			head = n
		} else if n != head {
			t.Errorf("row with %d bars under a header with %d: %q", n, head, line)
		}
	}
}

func TestHTMLIsWellFormedAndEscaped(t *testing.T) {
	var buf bytes.Buffer
	figs := []Figure{{Title: "Temperatures", SVG: "temperatures.svg", PNG: "temperatures.png"}}
	if err := Write(&buf, HTML, sample(), figs); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "<b>") {
		t.Error("a component id reached the page as markup")
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			count[n.Data]++
			if n.Data == "img" {
				for _, a := range n.Attr {
					if a.Key == "src" && a.Val != "temperatures.svg" {
						t.Errorf("img src = %q", a.Val)
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	// Components (header + 2), pump cycles (header + 2), slowdown (header + 1).
	if count["tr"] != 8 || count["table"] != 3 || count["img"] != 1 {
		t.Errorf("elements: %d tr, %d table, %d img; want 8, 3, 1", count["tr"], count["table"], count["img"])
	}
}

func TestComparisonRendersRatios(t *testing.T) {
	a, b := sample(), sample()
	b.Run.ID = "run-8"
	b.Components[0].HeatIntervalSPerC = f(14.436 / 1.3)
	b.CoolingEnergy.EnergyKJ = f(617.25)
	cmp := analysis.Compare([]*analysis.Report{a, b})
	for _, format := range []Format{Text, Markdown, HTML} {
		var buf bytes.Buffer
		if err := WriteComparison(&buf, format, cmp, nil); err != nil {
			t.Fatal(err)
		}
		out := strings.ReplaceAll(buf.String(), `\`, "")
		for _, want := range []string{"GPU core accumulates heat 1.30x faster in B than in A", "cooling took 0.50x the energy in B"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s comparison lacks %q", format, want)
			}
		}
	}
	var buf bytes.Buffer
	if err := WriteComparison(&buf, JSON, cmp, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Labels []string `json:"labels"`
		Kinds  []struct {
			Kind   string `json:"kind"`
			Ratios []struct {
				Quantity string   `json:"quantity"`
				Value    *float64 `json:"value"`
			} `json:"ratios"`
		} `json:"kinds"`
		Runs []json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 2 || doc.Kinds[0].Kind != "gpu_core" || doc.Kinds[0].Ratios[0].Value == nil || *doc.Kinds[0].Ratios[0].Value < 1.299 || *doc.Kinds[0].Ratios[0].Value > 1.301 {
		t.Errorf("comparison JSON: %+v", doc)
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"text": Text, "md": Markdown, "markdown": Markdown, "html": HTML, "json": JSON} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("pdf"); err == nil || !strings.Contains(err.Error(), `"pdf"`) {
		t.Errorf("pdf: %v", err)
	}
}
