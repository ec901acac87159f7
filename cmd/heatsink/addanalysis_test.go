package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// Adding an analysis is one file: analysis/probe_hottest.go, compiled in
// with -tags heatsink_probe. With nothing else edited, its result is in the
// JSON report under analyses, its section and definition in the text
// report, and its reason when it finds nothing; without the file, neither.
func TestAddingAnAnalysisTakesOneFile(t *testing.T) {
	t.Parallel()
	plain, bin := heatsinkBinary(t), probeBinary(t)
	const run = "../../analysis/testdata/h100-dgemm"

	out, err := exec.Command(bin, "report", run, "--format", "json").Output()
	if err != nil {
		t.Fatalf("report --format json: %v", err)
	}
	var rep struct {
		Components []struct {
			ID   string   `json:"id"`
			Kind string   `json:"kind"`
			MaxC *float64 `json:"max_c"`
		} `json:"components"`
		Analyses struct {
			Probe struct {
				Hottest []struct {
					Kind, Component string
					MaxC            float64 `json:"max_c"`
				} `json:"hottest"`
			} `json:"probe_hottest"`
		} `json:"analyses"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	// The probe's answer, worked out here from the components it reads.
	want := map[string]float64{}
	for _, c := range rep.Components {
		if c.MaxC != nil && *c.MaxC > want[c.Kind] {
			want[c.Kind] = *c.MaxC
		}
	}
	got := rep.Analyses.Probe.Hottest
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("probe_hottest has %d kinds, want %d: %s", len(got), len(want), out)
	}
	for _, h := range got {
		if h.MaxC != want[h.Kind] {
			t.Errorf("hottest %s: %s at %v °C, want %v °C", h.Kind, h.Component, h.MaxC, want[h.Kind])
		}
	}

	// Definitions print only when asked for (issue 29: the answer first).
	text, err := exec.Command(bin, "report", run, "--definitions").Output()
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	for _, s := range []string{"Hottest component of each kind (probe)", "probe_hottest: per kind of component"} {
		if !strings.Contains(string(text), s) {
			t.Errorf("the text report lacks %q:\n%s", s, text)
		}
	}
	// A run without temperatures: the section says why it is empty.
	none, err := exec.Command(bin, "report", "../../analysis/testdata/vm-cpu-stream").Output()
	if err != nil || !strings.Contains(string(none), "Not computed: no component has a maximum.") {
		t.Errorf("report of a run without temperatures: %v\n%s", err, none)
	}

	if out, err := exec.Command(plain, "report", run, "--format", "json").Output(); err != nil || strings.Contains(string(out), "probe_hottest") {
		t.Errorf("heatsink without the file reports probe_hottest: %v", err)
	}
}
