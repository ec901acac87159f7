package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// episodic is a report of a recording without phases: two GPUs, GPU 0
// loaded alone (heating GPU 1), GPU 1 never alone.
func episodic() *analysis.Report {
	rep := sample()
	rep.Phases = analysis.Phases{}
	start := rep.Run.Start
	rep.Episodes = []*analysis.Episode{{Index: 0, Host: "node1", Device: "gpu_core:0", GPU: "0", Signal: "gpu power_w",
		Start: start.Add(600 * time.Second), End: start.Add(1500 * time.Second), StartS: 600, EndS: 1500,
		Baseline: &analysis.Span{Start: 300, End: 600}, Cooldown: &analysis.Span{Start: 1500, End: 3000}, PowerW: f(690), IdlePowerW: f(70)}}
	rep.Coupling = []analysis.Coupling{
		{Host: "node1", Source: "0", Neighbour: "1", Kind: "core", CPerW: f(0.0081), LoCPerW: f(0.0065), HiCPerW: f(0.0097), Episodes: []analysis.CouplingEpisode{{Episode: 0, PowerAboveIdleW: 620, RiseC: 5, CPerW: 0.0081, SECPerW: 0.0008}}},
		{Host: "node1", Source: "1", Neighbour: "0", Kind: "core", Episodes: []analysis.CouplingEpisode{}, NotComputed: "not measured: no episode loaded GPU 1 while GPU 0 stayed idle"},
	}
	rep.Verdicts = []analysis.Verdict{
		{Host: "node1", Component: "gpu_core:0", GPU: "0", Metric: "thermal_resistance_c_per_w", Value: 0.04, Lo: f(0.039), Hi: f(0.041), Episodes: 1, Peers: 2, PeerMedian: 0.045, Status: "typical", Reason: "GPU 0 of node1: thermal_resistance_c_per_w 0.0400 °C/W, 11 % below the node's median"},
		{Host: "node1", Component: "gpu_core:1", GPU: "1", Metric: "thermal_resistance_c_per_w", Value: 0.05, Episodes: 1, LowerBound: true, Peers: 2, PeerMedian: 0.045, Status: "typical", Reason: "GPU 1 of node1: thermal_resistance_c_per_w at least 0.0500 °C/W"},
	}
	return rep
}

// The text report of a recording without phases leads with the verdicts,
// draws the coupling as a matrix with "not measured" where nothing was,
// and marks a lower bound.
func TestTextLeadsWithVerdicts(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, Text, episodic(), nil); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	v, comp := strings.Index(out, "Verdicts"), strings.Index(out, "Components")
	if v < 0 || comp >= 0 && comp < v {
		t.Errorf("verdicts at %d, components at %d: the verdicts must lead\n%s", v, comp, out)
	}
	for _, want := range []string{"0.0081 ±0.0016 (1)", "not measured", "≥ 0.0500", "Load episodes", "GPU 0 of node1: thermal_resistance_c_per_w 0.0400"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q\n%s", want, out)
		}
	}
}

// The JSON carries the interface scripts rely on: top-level episodes,
// coupling and verdicts with these names.
func TestEpisodeJSONNames(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, JSON, episodic(), nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Episodes []map[string]any `json:"episodes"`
		Coupling []map[string]any `json:"coupling"`
		Verdicts []map[string]any `json:"verdicts"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	check := func(what string, m []map[string]any, keys ...string) {
		if len(m) == 0 {
			t.Fatalf("no %s", what)
		}
		for _, k := range keys {
			if _, ok := m[0][k]; !ok {
				t.Errorf("%s lacks %q: %v", what, k, m[0])
			}
		}
	}
	check("episodes", doc.Episodes, "host", "device", "gpu", "start", "end", "baseline", "cooldown", "power_w")
	check("coupling", doc.Coupling, "host", "source", "neighbour", "kind", "c_per_w", "episodes")
	check("verdicts", doc.Verdicts, "host", "component", "metric", "value", "peer_median", "robust_z", "reason")
}
