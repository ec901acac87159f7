package analysis

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
)

func TestWorkloadSummarisesEachMetricAndTheLoadsEnds(t *testing.T) {
	start := time.Date(2026, 11, 22, 5, 40, 0, 0, time.UTC)
	var its []rundir.Iteration
	// Ten good iterations whose rate falls as the GPU heats, one failure.
	for i := 1; i <= 10; i++ {
		its = append(its, rundir.Iteration{N: i, Start: start.Add(time.Duration(i) * time.Second),
			End: start.Add(time.Duration(i)*time.Second + 900*time.Millisecond), RuntimeS: float64(i),
			Metrics: map[string]float64{"flop_per_s": 1e12 * float64(11-i), "max_rel_err": 0}})
	}
	its = append(its, rundir.Iteration{N: 11, Start: start.Add(11 * time.Second), End: start.Add(12 * time.Second),
		RuntimeS: 99, ExitStatus: 1, Error: "verification failed", Metrics: map[string]float64{"flop_per_s": 1}})
	run := &Run{Start: start, Meta: &rundir.Meta{Workload: &rundir.Workload{Name: "dgemm", Iterations: its}}}
	w := Workload(run)
	if w.Name != "dgemm" || w.Iterations != 11 || w.Failed != 1 || w.Throughput != "flop_per_s" {
		t.Fatalf("%+v", w)
	}
	want := map[string]struct{ median, min, max, first, last, change float64 }{
		"flop_per_s":  {5.5e12, 1e12, 10e12, 10e12, 1e12, -90},
		"max_rel_err": {0, 0, 0, 0, 0, math.NaN()},
		"runtime_s":   {5.5, 1, 10, 1, 10, 900},
	}
	if len(w.Metrics) != len(want) {
		t.Fatalf("metrics %+v", w.Metrics)
	}
	for _, m := range w.Metrics {
		x, ok := want[m.Name]
		if !ok {
			t.Errorf("unexpected metric %s", m.Name)
			continue
		}
		if m.N != 10 || m.Median != x.median || m.Min != x.min || m.Max != x.max || *m.First10 != x.first || *m.Last10 != x.last {
			t.Errorf("%s: %+v, want %+v", m.Name, m, x)
		}
		if math.IsNaN(x.change) != (m.ChangePct == nil) || (m.ChangePct != nil && math.Abs(*m.ChangePct-x.change) > 1e-9) {
			t.Errorf("%s: change %v, want %v", m.Name, m.ChangePct, x.change)
		}
	}
	if len(w.Timeline) != 10 || w.Timeline[0].AtS != 1.9 || w.Timeline[9].Value != 1e12 {
		t.Errorf("timeline %+v", w.Timeline)
	}
}

func TestWorkloadSaysWhyItIsMissing(t *testing.T) {
	for _, tc := range []struct {
		w    *rundir.Workload
		want string
	}{
		{nil, "records no workload"},
		{&rundir.Workload{Name: "command"}, "no iteration"},
		{&rundir.Workload{Name: "command", Iterations: []rundir.Iteration{{N: 1, ExitStatus: 2}}}, "all 1 iterations failed"},
	} {
		w := Workload(&Run{Meta: &rundir.Meta{Workload: tc.w}})
		if len(w.Metrics) != 0 || !strings.Contains(w.NotComputed, tc.want) {
			t.Errorf("%+v: %+v, want %q", tc.w, w, tc.want)
		}
	}
}

// The real H100 run: 106 iterations of cuBLAS DGEMM at 52-53 TFLOP/s.
func TestWorkloadOfARealDGEMMRun(t *testing.T) {
	r, err := Load("testdata/h100-dgemm")
	if err != nil {
		t.Fatal(err)
	}
	rep := Analyze(r, DefaultOptions())
	w := rep.Workload
	if w.Iterations != 106 || w.Failed != 0 || w.Throughput != "flop_per_s" || len(w.Timeline) != 106 {
		t.Fatalf("%+v", w)
	}
	for _, m := range w.Metrics {
		if m.Name == "flop_per_s" && (m.Median < 52e12 || m.Median > 53.5e12 || m.First10 == nil || m.Last10 == nil) {
			t.Errorf("flop_per_s %+v", m)
		}
	}
	if len(rep.Recorded) != 3 {
		t.Errorf("%d host series recorded, want CPU, memory and load", len(rep.Recorded))
	}
}
