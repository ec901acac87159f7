package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/hold"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// TestHoldModelFromARealH100Run: the model --hold takes from an earlier run
// is heatsink's own load fit of it. On the recorded H100 DGEMM run (39 °C
// idle, 57 °C a second into the load, 69 °C at the end) it is a fast jump of
// most of the rise and a slow part with τ of some seconds.
func TestHoldModelFromARealH100Run(t *testing.T) {
	tg, err := hold.ParseTarget("gpu_core<=57")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ModelFromRun("../analysis/testdata/h100-dgemm", tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", m)
	if m.BaseC < 38 || m.BaseC > 42 || m.RiseC() < 25 || m.RiseC() > 33 || m.FastC < 12 || m.TauS < 5 || m.TauS > 60 {
		t.Errorf("model %+v is not the recording's (idle ~39-41 °C, rise ~29 °C, a jump of ~17 °C, τ of seconds)", m)
	}
	if _, err := ModelFromRun("../analysis/testdata/h100-dgemm", hold.Target{Component: "coolant", SetC: 40}); err == nil {
		t.Error("a model of a coolant from a run without a tank")
	}
}

// shortRun copies the recorded H100 DGEMM run with its load cut after
// loadS seconds (the points after it dropped, no cooldown): a free run
// too short for the report's load fit.
func shortRun(t *testing.T, loadS float64) string {
	t.Helper()
	src := "../analysis/testdata/h100-dgemm"
	meta, err := rundir.ReadMeta(src)
	if err != nil {
		t.Fatal(err)
	}
	var phases []rundir.Phase
	var cut time.Time
	for _, p := range meta.Phases {
		if p.Name == "load" {
			cut = p.Start.Add(time.Duration(loadS * float64(time.Second)))
			p.End = &cut
		}
		if p.Name != "cooldown" {
			phases = append(phases, p)
		}
	}
	meta.Phases, meta.End = phases, &cut
	dir := t.TempDir()
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.MetaFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	lp, err := os.ReadFile(filepath.Join(src, "points.lp"))
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for line := range strings.Lines(string(lp)) {
		ns, err := strconv.ParseInt(strings.TrimSpace(line[strings.LastIndexByte(strings.TrimSpace(line), ' ')+1:]), 10, 64)
		if err != nil || time.Unix(0, ns).After(cut) {
			continue
		}
		kept = append(kept, line)
	}
	if err := os.WriteFile(filepath.Join(dir, "points.lp"), []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A free run shorter than three time constants has no load fit in the
// report, but its rough estimate is the hold's model where it is tight
// enough for the controller, saying it is rough; one too short to pin
// the rise down is refused, naming why. The full run's model is the
// yardstick: the rough one is within the ±50 % the controller absorbs.
// (Cut at 20 s the fit gives τ 9.4 s [7.1, 13.5] against the full run's
// 14.1 s: a truncated rise biases τ low, and its interval, which takes the
// model as right, does not cover it. At 10 s τ's interval is [3, 45] s.)
func TestHoldModelFromAShortFreeRunIsRough(t *testing.T) {
	tg, err := hold.ParseTarget("gpu_core<=57")
	if err != nil {
		t.Fatal(err)
	}
	full, err := ModelFromRun("../analysis/testdata/h100-dgemm", tg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		loadS   float64
		wantErr string // "" for a rough model
	}{{20, ""}, {10, "rough estimate will not do: its τ"}} {
		m, err := ModelFromRun(shortRun(t, c.loadS), tg)
		t.Logf("load %g s: %+v, %v (full run: %+v)", c.loadS, m, err, full)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("load %g s: err %v, want one with %q", c.loadS, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("load %g s: %v", c.loadS, err)
		}
		if !strings.Contains(m.Source, "rough: the load lasted") {
			t.Errorf("source %q does not say the model is rough", m.Source)
		}
		if r := m.RiseC() / full.RiseC(); r < 0.67 || r > 1.5 {
			t.Errorf("rough rise %.1f °C against the full run's %.1f °C", m.RiseC(), full.RiseC())
		}
		if r := m.TauS / full.TauS; r < 0.5 || r > 2 {
			t.Errorf("rough τ %.1f s against the full run's %.1f s", m.TauS, full.TauS)
		}
	}
}
