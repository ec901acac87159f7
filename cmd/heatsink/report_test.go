package main

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// rampRun writes a run whose GPU idles at 40 °C for 60 s, rises 0.1 °C/s
// (rate·s) through a 300 s load, and is back at 40 °C from the end of the
// load for a 240 s cooldown: heat interval and steepest rise are both
// 1/rate s/°C, return to idle 0 s.
func rampRun(t *testing.T, id string, rate float64) string {
	t.Helper()
	dir := t.TempDir()
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	for s := 0; s <= 600; s++ {
		c := 40.0
		if s >= 60 && s < 360 {
			c = 40 + rate*float64(s-60)
		}
		p := point.New("gpu", at(s))
		p.AddTag("host", "n1").AddTag("gpu", "0").AddFloat("temp_c", c)
		if err := w.Write([]point.Point{p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, l, e := at(60), at(359), at(600)
	m := &rundir.Meta{ID: id, Host: "n1", Start: start, IntervalS: 1, Phases: []rundir.Phase{
		{Name: "baseline", Start: start, End: &b}, {Name: "load", Start: b, End: &l}, {Name: "cooldown", Start: l, End: &e}}}
	if err := rundir.WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

func heatsink(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := ownState(t, exec.Command(heatsinkBinary(t), args...))
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

func TestReportJSON(t *testing.T) {
	dir := rampRun(t, "ramp", 0.1)
	out, stderr, err := heatsink(t, "report", dir, "--format", "json")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	var rep struct {
		Components []struct {
			ID            string            `json:"id"`
			IdleMeanC     *float64          `json:"idle_mean_c"`
			MaxC          *float64          `json:"max_c"`
			HeatInterval  *float64          `json:"heat_interval_s_per_c"`
			Steepest      *float64          `json:"steepest_s_per_c"`
			ReturnToIdleS *float64          `json:"return_to_idle_s"`
			NotComputed   map[string]string `json:"not_computed"`
		} `json:"components"`
		CoolingEnergy struct {
			NotComputed string `json:"not_computed"`
		} `json:"cooling_energy"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Components) != 1 || rep.Components[0].ID != "gpu_core:0" {
		t.Fatalf("components: %+v", rep.Components)
	}
	c := rep.Components[0]
	// The load phase ends at 359 s, the last reading of the ramp: peak
	// 40 + 0.1·299 = 69.9 °C reached 299 s after the load start.
	checks := []struct {
		name      string
		got       *float64
		want, tol float64
	}{{"idle mean", c.IdleMeanC, 40, 0}, {"max", c.MaxC, 69.9, 1e-9}, {"heat interval", c.HeatInterval, 10, 1e-9},
		{"steepest", c.Steepest, 10, 1e-6}, {"return to idle", c.ReturnToIdleS, 1, 0}}
	for _, ch := range checks {
		if ch.got == nil || *ch.got < ch.want-ch.tol || *ch.got > ch.want+ch.tol {
			t.Errorf("%s = %v, want %v (not computed: %v)", ch.name, ch.got, ch.want, c.NotComputed)
		}
	}
	if !strings.Contains(c.NotComputed["coolant_lag_s"], "not an immersed run") || rep.CoolingEnergy.NotComputed == "" {
		t.Errorf("reasons: %v, cooling %q", c.NotComputed, rep.CoolingEnergy.NotComputed)
	}
}

func TestReportOutWritesReportAndFigures(t *testing.T) {
	dir := rampRun(t, "ramp", 0.1)
	out := filepath.Join(t.TempDir(), "rep")
	_, stderr, err := heatsink(t, "report", dir, "--format", "html", "--out", out, "--hold", "30s", "--tolerance", "0.5", "--definitions")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if !strings.Contains(stderr, filepath.Join(out, "report.html")) {
		t.Errorf("stderr does not say where: %q", stderr)
	}
	for _, f := range []string{"report.html", "temperatures.svg", "temperatures.png", "heat-intervals.svg", "heat-intervals.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	for _, want := range []string{`<svg width=`, "stay at or below idle_max + 0.5 °C for 30 s"} {
		if !strings.Contains(html.UnescapeString(string(page)), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

func TestReportBadInput(t *testing.T) {
	dir := rampRun(t, "ramp", 0.1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", dir, "--format", "pdf"}, `unknown format "pdf"`},
		{[]string{"report", filepath.Join(dir, "nope")}, "run.json"},
		{[]string{"report", dir, "--tolerance", "-1"}, "tolerance -1 °C is negative"},
		{[]string{"report", dir, "--window", "0s"}, "window 0s must be positive"},
		{[]string{"report"}, "give a run directory"},
		{[]string{"compare", dir}, "give two or more run directories"},
	} {
		_, stderr, err := heatsink(t, tc.args...)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("heatsink %v: err %v, stderr %q; want failure saying %q", tc.args, err, stderr, tc.want)
		}
	}
}

// Several run directories make report a comparison (issue 30: a fleet's
// recordings are judged together), the same as compare's.
func TestReportOfSeveralRunsIsTheirComparison(t *testing.T) {
	slow := rampRun(t, "slow", 0.1)
	fast := rampRun(t, "fast", 0.125)
	rep, stderr, err := heatsink(t, "report", slow, fast, "--format", "json")
	if err != nil {
		t.Fatalf("report of two runs: %v: %s", err, stderr)
	}
	cmp, stderr, err := heatsink(t, "compare", slow, fast, "--format", "json")
	if err != nil {
		t.Fatalf("compare: %v: %s", err, stderr)
	}
	if rep != cmp || !strings.Contains(rep, `"runs"`) {
		t.Errorf("report of two runs differs from their comparison:\n%s\n---\n%s", rep, cmp)
	}
}

func TestCompareTwoRuns(t *testing.T) {
	slow := rampRun(t, "slow", 0.1)
	fast := rampRun(t, "fast", 0.125)
	out, stderr, err := heatsink(t, "compare", slow, fast, "--format", "md")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	// Heat intervals 10 and 8 s/°C.
	for _, want := range []string{"A = slow, B = fast", "GPU core accumulates heat 1.25x faster in B than in A", "Run B: components"} {
		if !strings.Contains(strings.ReplaceAll(out, `\`, ""), want) {
			t.Errorf("comparison lacks %q:\n%s", want, out)
		}
	}
	dirOut := t.TempDir()
	if _, stderr, err := heatsink(t, "compare", slow, fast, "--out", dirOut); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	for _, f := range []string{"comparison.txt", "heat-intervals-compared.svg", "heat-intervals-compared.png"} {
		if _, err := os.Stat(filepath.Join(dirOut, f)); err != nil {
			t.Error(err)
		}
	}
}
