package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// hugeReadingRun records a GPU for 300 s (baseline, load, cooldown) with
// one reading of 1e200 °C in the load phase.
var hugeAt = 150

func hugeReadingRun(t *testing.T) *analysis.Run {
	t.Helper()
	dir := t.TempDir()
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	for s := 0; s < 300; s++ {
		temp := 40.0
		if s >= 100 && s < 200 {
			temp = 40 + float64(s-100)*0.3
		}
		if s == hugeAt {
			temp = 1e200
		}
		p := point.New("gpu", at(s))
		p.AddTag("host", "n1").AddTag("gpu", "0").AddTag("uuid", "GPU-0")
		p.AddFloat("temp_c", temp).AddFloat("power_w", 100)
		if err := w.Write([]point.Point{p}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	e1, e2, e3 := at(100), at(200), at(300)
	if err := rundir.WriteMeta(dir, &rundir.Meta{ID: "huge", Host: "n1", Start: start, IntervalS: 1, Status: "complete",
		Phases: []rundir.Phase{{Name: "baseline", Start: start, End: &e1}, {Name: "load", Start: e1, End: &e2}, {Name: "cooldown", Start: e2, End: &e3}}}); err != nil {
		t.Fatal(err)
	}
	run, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// One absurd reading must not fail the JSON report (NaN has no JSON form)
// nor print 0.00 in the others: a result that is not finite is absent,
// with the reason, in every format.
func TestNonFiniteResultsAreNullWithAReasonInEveryFormat(t *testing.T) {
	rep := analysis.Analyze(hugeReadingRun(t), analysis.DefaultOptions())
	for _, f := range []Format{JSON, Text, Markdown, HTML} {
		var buf bytes.Buffer
		if err := Write(&buf, f, rep, nil); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out := buf.String()
		if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
			t.Errorf("%s report shows a non-finite number:\n%s", f, out)
		}
		if f == JSON {
			var doc map[string]any
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatalf("JSON report does not parse: %v", err)
			}
		}
	}
	var text bytes.Buffer
	Write(&text, Text, rep, nil)
	if strings.Contains(text.String(), " 0.00 ") {
		t.Errorf("text report prints 0.00 for a result that is not zero:\n%s", text.String())
	}
}

// A result that is NaN or ±Inf (an intermediate overflowed) is null in
// JSON with its reason beside it, and a dash in the other formats.
func TestNaNAndInfResultsBecomeNullWithTheirReason(t *testing.T) {
	for _, f := range []Format{JSON, Text, Markdown, HTML} {
		rep := sample()
		nan, inf := math.NaN(), math.Inf(1)
		rep.Components[0].HeatIntervalSPerC = &nan
		rep.Components[0].SteepestSPerC = &inf
		rep.CoolingEnergy.EnergyKJ = &nan
		var buf bytes.Buffer
		if err := Write(&buf, f, rep, nil); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if out := buf.String(); strings.Contains(out, "NaN") || strings.Contains(out, "+Inf") {
			t.Errorf("%s report shows a non-finite number:\n%s", f, out)
		}
		c := rep.Components[0]
		if c.HeatIntervalSPerC != nil || c.SteepestSPerC != nil || !strings.Contains(c.NotComputed["heat_interval_s_per_c"], "not a finite number") ||
			rep.CoolingEnergy.EnergyKJ != nil || !strings.Contains(rep.CoolingEnergy.NotComputed, "not a finite number") {
			t.Errorf("%s: component %+v, cooling energy %+v", f, c, rep.CoolingEnergy)
		}
		if f == JSON {
			var doc struct {
				Components []map[string]any `json:"components"`
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if v, ok := doc.Components[0]["heat_interval_s_per_c"]; !ok || v != nil {
				t.Errorf("JSON heat_interval_s_per_c = %v, want null", v)
			}
		}
	}
}
