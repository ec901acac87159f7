package workloads

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

func TestCheckMetrics(t *testing.T) {
	stream := schema.Fields(schema.FieldTriadBytesPerS, schema.FieldCopyBytesPerS)
	for _, tc := range []struct {
		name     string
		declared []schema.Field
		metrics  map[string]float64
		want     string // in the error; empty for none
	}{
		{"declared", stream, map[string]float64{"triad_bytes_per_s": 1, "copy_bytes_per_s": 2}, ""},
		{"declared but absent this time", stream, map[string]float64{"triad_bytes_per_s": 1}, ""},
		{"no metrics", nil, nil, ""},
		{"undeclared", stream, map[string]float64{"triad_bytes_per_s": 1, "scale_bytes_per_s": 2}, `"scale_bytes_per_s" is reported but not declared`},
		{"unknown to the schema", schema.Fields("work_done"), nil, `"work_done" is no field of point/schema's iteration`},
		{"of another measurement", schema.Fields(schema.FieldTempC), nil, `"temp_c" is no field`},
		{"shadowing n", schema.Fields(schema.FieldN), map[string]float64{"n": 8}, `declared metric "n" is a int`},
		{"shadowing undeclared", nil, map[string]float64{"exit_status": 0}, `metric "exit_status" shadows`},
		{"declared with another unit", []schema.Field{{Name: schema.FieldTriadBytesPerS, Kind: schema.Float, Unit: schema.Seconds}}, nil, "point/schema says"},
	} {
		err := CheckMetrics(tc.declared, tc.metrics)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

func TestCPUStreamReportsWhatItDeclares(t *testing.T) {
	s := startStream(t, map[string]string{"size": "65544", "threads": "1", "ntimes": "2"})
	res, err := s.Iterate(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckMetrics(CPUStream{}.Metrics(), res.Metrics); err != nil {
		t.Error(err)
	}
}

// shadower reports a metric named n, as dgemm once did (the matrix order).
type shadower struct{ heater }

func (s *shadower) Start(ctx context.Context, v Values) (Job, error) { return s, nil }
func (s *shadower) Iterate(ctx context.Context) (Result, error) {
	return Result{Metrics: map[string]float64{"n": 4096, "flop_per_s": 1e9}}, nil
}

func TestRunnerFailsAnIterationWhoseMetricShadowsAFixedField(t *testing.T) {
	r := newTestRunner(t, Options{Workload: &shadower{}, Config: testConfig(),
		Protocol: Protocol{Load: time.Minute, Cooldown: 300 * time.Millisecond}})
	g := newRig(t, r, 100*time.Millisecond)
	out, run := g.run(t, context.Background(), r)
	if out.Status != StatusFailed || out.Iterations != 1 {
		t.Fatalf("outcome %+v", out)
	}
	it := run.Meta.Workload.Iterations
	if len(it) != 1 || it[0].ExitStatus != 1 || !strings.Contains(it[0].Error, `metric "n" shadows`) || !strings.Contains(it[0].Error, "workload heater") {
		t.Fatalf("iterations %+v", it)
	}
	for _, p := range run.Points {
		if p.Measurement != "iteration" {
			continue
		}
		seen := map[string]bool{}
		for _, f := range p.Fields {
			if seen[f.Key] {
				t.Errorf("iteration point carries %s twice: %s", f.Key, p.String())
			}
			seen[f.Key] = true
		}
	}
}
