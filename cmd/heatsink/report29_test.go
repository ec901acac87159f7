package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// The study's immersion run, as its harness wrote it (testdata/lst, made by
// gen.go): imported and reported, the report must open with the answer,
// state the blind spot, trim the load whose STREAM ended 7 s early instead
// of blaming the cooling, call the tank immersed and say which components
// never rose.
func TestReportOfTheStudysImmersionRecording(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	if _, stderr, err := heatsink(t, "import", filepath.Join("testdata", "lst", "immersion-stream.json"),
		"--start", "2026-11-20T10:00:00Z", "--host", "node1", "--out", run); err != nil {
		t.Fatalf("import: %v: %s", err, stderr)
	}
	out, stderr, err := heatsink(t, "report", run, "--format", "json")
	if err != nil {
		t.Fatalf("report: %v: %s", err, stderr)
	}
	var rep struct {
		Run    struct{ Cooling string } `json:"run"`
		Phases struct {
			Load             struct{ End float64 } `json:"load"`
			LoadRecordedEndS *float64              `json:"load_recorded_end_s"`
		} `json:"phases"`
		Components []struct {
			ID            string            `json:"id"`
			DidNotRise    bool              `json:"did_not_rise"`
			ReturnToIdleS *float64          `json:"return_to_idle_s"`
			LoadFit       *json.RawMessage  `json:"load_fit"`
			NotComputed   map[string]string `json:"not_computed"`
		} `json:"components"`
		BlindSpot []struct {
			Component    string  `json:"component"`
			RiseC        float64 `json:"rise_c"`
			CoolantRiseC float64 `json:"coolant_rise_c"`
			FromS, ToS   float64
		} `json:"blind_spot"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Run.Cooling != "immersion" {
		t.Errorf("cooling %q, want immersion", rep.Run.Cooling)
	}
	if rep.Phases.LoadRecordedEndS == nil || *rep.Phases.LoadRecordedEndS-rep.Phases.Load.End < 6 {
		t.Errorf("load not trimmed: ends %.1f s, recorded %v", rep.Phases.Load.End, rep.Phases.LoadRecordedEndS)
	}
	for _, c := range rep.Components {
		switch {
		case strings.HasPrefix(c.ID, "gpu_"):
			if c.LoadFit == nil {
				t.Errorf("%s: no load fit: %s", c.ID, c.NotComputed["load_fit"])
			}
		case strings.HasPrefix(c.ID, "nvme:"), strings.HasPrefix(c.ID, "coolant:"):
			if !c.DidNotRise || c.ReturnToIdleS != nil || !strings.HasPrefix(c.NotComputed["return_to_idle_s"], "did not rise") {
				t.Errorf("%s never rose: did_not_rise %v, return to idle %v (%q)", c.ID, c.DidNotRise, c.ReturnToIdleS, c.NotComputed["return_to_idle_s"])
			}
		}
	}
	found := false
	for _, b := range rep.BlindSpot {
		if b.Component == "gpu_mem:0" {
			found = true
			if b.RiseC < 18 || b.RiseC > 20 || b.CoolantRiseC < 0.3 || b.CoolantRiseC > 0.45 {
				t.Errorf("blind spot %+v; want GPU memory about 19 °C against the coolant's 0.37 °C", b)
			}
		}
	}
	if !found {
		t.Errorf("no blind spot for gpu_mem:0: %+v", rep.BlindSpot)
	}

	text, stderr, err := heatsink(t, "report", run)
	if err != nil {
		t.Fatalf("report: %v: %s", err, stderr)
	}
	lines := strings.Split(text, "\n")
	if len(lines) < 5 || lines[3] != "Summary" || !strings.HasPrefix(lines[5], "Under load gpu_mem:") {
		t.Errorf("the report does not open with the summary and the blind spot:\n%s", strings.Join(lines[:min(12, len(lines))], "\n"))
	}
	for _, bad := range []string{"the cooling changed", "Definitions\n-----------\n  - "} {
		if strings.Contains(text, bad) {
			t.Errorf("report says %q", bad)
		}
	}
	flat := strings.Join(strings.Fields(text), " ") // unwrapped
	for _, want := range []string{"nvme:nvme0: peak 38.0 °C (no limit recorded); did not rise", "the tank's controller sees"} {
		if !strings.Contains(flat, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	defs, _, err := heatsink(t, "report", run, "--definitions")
	if err != nil || !strings.Contains(defs, "blind_spot: per hardware component") {
		t.Errorf("--definitions does not define blind_spot (%v)", err)
	}
}

// compare of two runs on a VM compares what they did: the workload's
// metrics, not only "not computed".
func TestCompareComparesTheWorkloadOnAVM(t *testing.T) {
	vm := filepath.Join("..", "..", "analysis", "testdata", "vm-cpu-stream")
	out, stderr, err := heatsink(t, "compare", vm, vm)
	if err != nil {
		t.Fatalf("compare: %v: %s", err, stderr)
	}
	if !strings.Contains(out, "\nWorkload\n--------\n") || !strings.Contains(out, "+0.0 %") {
		t.Errorf("compare of a VM run with itself shows no workload change:\n%s", out)
	}
}
