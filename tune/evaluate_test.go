package tune

import (
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// gpuSource reports one GPU as the nvml source lays it out: a temperature
// with its slowdown limit, an energy counter rising 100 J per second, and
// the thermal throttle reason.
type gpuSource struct {
	tempC     float64
	throttled bool
	start     time.Time
}

func (g *gpuSource) Name() string                       { return "gpu-test" }
func (g *gpuSource) Discover(ctx context.Context) error { return nil }
func (g *gpuSource) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	p := point.New("gpu", t)
	p.AddTag("gpu", "0")
	p.AddFloat("temp_c", g.tempC).AddFloat("slowdown_c", 89).AddFloat("power_w", 100)
	p.AddFloat("energy_j", 100*time.Since(g.start).Seconds())
	p.AddBool("throttle_thermal", g.throttled).AddBool("throttle_power", false)
	return append(buf, p), nil
}

// runJob records a run as heatsink tune does: a real collector over the
// source, writing the run directory, around a real runner.
func runJob(src collectors.Source, runs *atomic.Int32) RunJob {
	return func(ctx context.Context, o workloads.Options, dir string) (workloads.Outcome, error) {
		runs.Add(1)
		o.Logger = slog.New(slog.DiscardHandler)
		r, err := workloads.NewRunner(ctx, o)
		if err != nil {
			return workloads.Outcome{}, err
		}
		defer r.Close()
		w, err := rundir.Create(dir)
		if err != nil {
			return workloads.Outcome{}, err
		}
		meta := &rundir.Meta{ID: filepath.Base(dir), Host: "test", Start: time.Now(), IntervalS: 0.05, Status: "running"}
		coll := collectors.New(collectors.Options{Interval: 50 * time.Millisecond, Host: "test", Logger: o.Logger},
			[]collectors.Source{src}, []collectors.Sink{w, r.Latest()})
		out := r.Run(ctx, workloads.Recording{Collector: coll, RunID: meta.ID, Dir: dir, Meta: meta})
		end := time.Now()
		meta.End, meta.Status = &end, out.Status
		if err := rundir.WriteMeta(dir, meta); err != nil {
			return out, err
		}
		return out, w.Close()
	}
}

func kindsEvaluator(t *testing.T, src collectors.Source, obj string, limits Limits, argv ...string) (*RunEvaluator, *atomic.Int32) {
	t.Helper()
	s, err := LoadSpace("testdata/kinds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o, err := ParseObjective(obj)
	if err != nil {
		t.Fatal(err)
	}
	runs := &atomic.Int32{}
	cfg := workloads.RunnerConfig{Hold: 100 * time.Millisecond, NominalMax: 5 * time.Second, CooldownMax: time.Second, Grace: time.Second}
	return &RunEvaluator{Space: s, Argv: argv, Objective: o, Limits: limits, Dir: t.TempDir(),
		Run: runJob(src, runs), Config: cfg, Baseline: 200 * time.Millisecond}, runs
}

func TestRunEvaluatorDiscardsTheFirstIterationAndRecordsASource(t *testing.T) {
	src := &gpuSource{tempC: 50, start: time.Now()}
	// The first iteration prints 1000, the others the batch: the objective
	// is the batch only if the first was discarded.
	e, _ := kindsEvaluator(t, src, "min:re:took ([0-9.]+)", Limits{},
		"sh", "-c", `if [ "$HEATSINK_ITERATION" = 1 ]; then echo "took 1000"; else echo "took {batch}"; fi; sleep 0.2`)
	c, err := e.Space.Parse(map[string]string{"batch": "48", "tile": "2", "layout": "rows", "packed": "false"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Evaluate(context.Background(), Task{"tokens": 5e6}, c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Objective != 48 || r.Violation != "" {
		t.Fatalf("result %+v, want objective 48 (iterations 2 and 3)", r)
	}
	if r.Metrics["peak_temp_c"] != 50 {
		t.Errorf("metrics %v, want the GPU's 50 °C peak", r.Metrics)
	}
	obs, err := LoadSources(e.Space, e.Objective.Spec, []string{e.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 1 || obs[0].Objective != 48 || obs[0].Task["tokens"] != 5e6 || obs[0].Config.Key() != c.Key() {
		t.Errorf("sources %+v, want the evaluation back", obs)
	}
	if other, _ := LoadSources(e.Space, "runtime_s", []string{e.Dir}); len(other) != 0 {
		t.Errorf("an evaluation of another objective was read as a source: %+v", other)
	}
}

func TestRunEvaluatorRecordsAThermalViolationWithWhy(t *testing.T) {
	src := &gpuSource{tempC: 85, throttled: true, start: time.Now()}
	e, _ := kindsEvaluator(t, src, "energy_per_work", Limits{NoThrottle: true, MarginC: 10}, "sleep", "0.3")
	r, err := e.Evaluate(context.Background(), Task{"tokens": 1}, e.Space.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"throttled: gpu 0 thermal", "peak 85.0 °C is 4.0 °C below the slowdown limit"} {
		if !strings.Contains(r.Violation, want) {
			t.Errorf("violation %q, want it to say %q", r.Violation, want)
		}
	}
	// 100 J/s over two measured iterations of about 0.3 s: about 30 J each.
	if r.Objective < 27 || r.Objective > 40 {
		t.Errorf("energy per iteration %.1f J, want about 30", r.Objective)
	}
	b, err := os.ReadFile(filepath.Join(r.Run, RecordFile))
	if err != nil || !strings.Contains(string(b), "throttled") {
		t.Errorf("tune.json %s (%v) should carry the violation", b, err)
	}
}

func TestAFailingCommandIsAnEvaluationWithItsReason(t *testing.T) {
	e, _ := kindsEvaluator(t, &gpuSource{tempC: 40, start: time.Now()}, "runtime_s", Limits{}, "sh", "-c", "exit 7")
	r, err := e.Evaluate(context.Background(), Task{"tokens": 1}, e.Space.Default())
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(r.Objective) || !strings.Contains(r.Violation, "exit status 7") {
		t.Errorf("result %+v, want no objective and the exit status", r)
	}
}

func TestLaterEvaluationsWaitForTheFirstOnesBaseline(t *testing.T) {
	src := &gpuSource{tempC: 45, start: time.Now()}
	e, runs := kindsEvaluator(t, src, "runtime_s", Limits{}, "true")
	ctx := context.Background()
	if _, err := e.Evaluate(ctx, Task{"tokens": 1}, e.Space.Default()); err != nil {
		t.Fatal(err)
	}
	if len(e.reference) != 1 {
		t.Fatalf("reference %v after the first evaluation, want the GPU's temperature", e.reference)
	}
	o, err := e.options(map[string]string{"batch": "16", "tile": "1", "layout": "rows", "packed": "false", "tokens": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Protocol.Baseline != 0 || !o.Protocol.WaitNominal || o.Protocol.Repeat != 3 {
		t.Errorf("second evaluation's protocol %+v, want no baseline, wait for the reference, 3 runs", o.Protocol)
	}
	if runs.Load() != 1 {
		t.Errorf("%d runs", runs.Load())
	}
}

func TestSubstituteNamesAnUnknownPlaceholder(t *testing.T) {
	got, err := Substitute([]string{"-t{a}x{b}", "{a}"}, map[string]string{"a": "1", "b": "2"})
	if err != nil || strings.Join(got, " ") != "-t1x2 1" {
		t.Errorf("%v %v", got, err)
	}
	if _, err := Substitute([]string{"{tile}"}, map[string]string{"a": "1"}); err == nil || !strings.Contains(err.Error(), "{tile}") {
		t.Errorf("err %v, want {tile} named", err)
	}
}

func TestObjectiveFromJSONLines(t *testing.T) {
	o, err := ParseObjective("max:json:result.tokens_per_s")
	if err != nil {
		t.Fatal(err)
	}
	out := "log line\n{\"result\":{\"tokens_per_s\":5}}\n{\"result\":{\"tokens_per_s\":7}}\n{\"result\":{\"tokens_per_s\":9}}\n"
	its := []rundir.Iteration{{N: 2}, {N: 3}}
	y, err := o.measure(its, 3, out, Thermal{})
	if err != nil || y != 8 || !o.Maximize {
		t.Errorf("objective %v %v, want 8 (mean of iterations 2 and 3)", y, err)
	}
	if _, err := ParseObjective("fast"); err == nil {
		t.Error("objective \"fast\" accepted")
	}
}
