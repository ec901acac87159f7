package tune

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// napParams are the nap workload's: how long an iteration sleeps.
type napParams struct {
	Ms int `param:"ms" default:"20" min:"1" max:"1000" help:"milliseconds an iteration sleeps"`
}

// nap is a workload whose speed costs quality, as a fast w2v configuration
// can: an iteration sleeps ms milliseconds and reports a score of ms/100.
type nap struct{ workloads.Typed[napParams] }

func (nap) Name() string    { return "nap" }
func (nap) Summary() string { return "sleeps; a longer sleep scores better" }
func (w nap) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
	p, err := w.Of(v)
	return napJob(p), err
}

type napJob napParams

func (j napJob) Iterate(ctx context.Context) (workloads.Result, error) {
	time.Sleep(time.Duration(j.Ms) * time.Millisecond)
	return workloads.Result{Work: 1, WorkUnit: "naps", Metrics: map[string]float64{"score": float64(j.Ms) / 100}}, nil
}
func (napJob) Close() error { return nil }

func TestParseLimitsTakesFloorsAndCeilingsOnMetrics(t *testing.T) {
	l, err := ParseLimits([]string{"score>=0.62", "peak_temp_c < 80", "no-throttle"})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Bounds) != 2 || l.Bounds[0] != (Bound{Spec: "score>=0.62", Metric: "score", Op: ">=", Value: 0.62}) ||
		l.Bounds[1].Op != "<" || l.Bounds[1].Value != 80 || !l.NoThrottle {
		t.Errorf("limits %+v", l)
	}
	for _, bad := range []string{"score>=high", "score=>0.5", "0.5<=score", "score>="} {
		if _, err := ParseLimits([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: err %v, want it named", bad, err)
		}
	}
}

// A floor that excludes the fastest configuration: the recommendation is
// the fastest that keeps the quality, and every violating evaluation is
// recorded with why in tune.json, report.json and report.md.
func TestAQualityFloorRecommendsTheFastestConfigurationThatKeepsIt(t *testing.T) {
	s, err := ParseSpace("nap.yaml", []byte(`
name: nap
task:
  - {name: size, min: 1, max: 10}
params:
  - {name: ms, type: ordinal, values: [20, 40, 60, 80]}
`))
	if err != nil {
		t.Fatal(err)
	}
	limits, err := ParseLimits([]string{"score>=0.5"})
	if err != nil {
		t.Fatal(err)
	}
	obj, _ := ParseObjective("runtime_s")
	e, _ := kindsEvaluator(t, &gpuSource{tempC: 40, start: time.Now()}, "runtime_s", limits)
	e.Space, e.Workload, e.Objective, e.Argv = s, nap{}, obj, nil
	out := t.TempDir()
	rep, err := Tune(context.Background(), Options{Space: s, Task: Task{"size": 1}, Methods: []string{"random"}, Budget: 4,
		Seed: 1, Evaluator: e, Out: out, RunArgs: WorkloadRunArgs(nap{}, s)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Best == nil || rep.Best.Values["ms"] != "60" {
		t.Fatalf("recommended %+v, want ms=60: the fastest whose score keeps the 0.5 floor", rep.Best)
	}
	violating := 0
	for _, ev := range rep.Curves[0].Evaluations {
		want := map[string]string{"20": "score (mean of 2 iterations) 0.2 is below the floor score>=0.5", "40": "score (mean of 2 iterations) 0.4 is below the floor score>=0.5"}[ev.Values["ms"]]
		if ev.Violation != want {
			t.Errorf("ms=%s: violation %q, want %q", ev.Values["ms"], ev.Violation, want)
		}
		if want == "" {
			continue
		}
		violating++
		var rec Record
		b, err := os.ReadFile(filepath.Join(ev.Run, RecordFile))
		if err != nil || json.Unmarshal(b, &rec) != nil || rec.Violation != want {
			t.Errorf("%s: tune.json %s (%v) should carry %q", ev.Run, b, err, want)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if violating != 2 || strings.Count(string(md), "is below the floor score>=0.5") != 2 {
		t.Errorf("%d violating evaluations; report.md:\n%s", violating, md)
	}
}

// A workload parameter the space's set gives and a task feature also names
// goes into the recommended command once: heatsink run rejects a --set
// given twice.
func TestWorkloadRunArgsGiveASetKeyOnce(t *testing.T) {
	s, err := ParseSpace("nap.yaml", []byte(`
task:
  - {name: ms, min: 1, max: 100}
set:
  ms: "{ms}"
params:
  - {name: other, type: int, min: 1, max: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(WorkloadRunArgs(nap{}, s), " ")
	if got != "--workload nap --set ms={ms}" {
		t.Errorf("run args %q, want ms given once", got)
	}
}
