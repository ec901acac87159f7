package schema

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

var at = time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC)

// viaLine sends p through line protocol, as a run directory or InfluxDB
// would, so a test sees what a reader sees.
func viaLine(t testing.TB, p point.Point) point.Point {
	t.Helper()
	b, err := point.Append(nil, []point.Point{p})
	if err != nil {
		t.Fatal(err)
	}
	q, err := point.ParseLine(b)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return q
}

func TestEventPointsSurviveLineProtocol(t *testing.T) {
	for _, e := range []EventPoint{
		{Time: at, Run: "r1", Kind: KindPhaseStart, Phase: "baseline", Message: "baseline starts"},
		{Time: at, Run: "r1", Kind: KindIterationStart, Phase: "load", Message: "iteration 3", Iteration: 3},
		{Time: at, Run: "r1", Kind: KindIterationEnd, Phase: "load", Message: "iteration 3: exit status 0", Iteration: 3, Ended: true, ExitStatus: 0, RuntimeS: 12.5},
		{Time: at, Run: "r2", Kind: KindJobStart, Job: "4711", Message: "Slurm job 4711 started on the node"},
		{Time: at, Kind: KindNote, Host: "n1", Other: []point.Tag{{Key: "zz", Value: "kept"}}, Message: "a note, with \"quotes\""},
	} {
		got, err := DecodeEvent(new(viaLine(t, e.Point())))
		if err != nil {
			t.Fatalf("%s: %v", e.Kind, err)
		}
		if got.Time.Equal(e.Time) {
			got.Time = e.Time // the reader gives local time
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("%s:\n got %+v\nwant %+v", e.Kind, got, e)
		}
	}
}

func TestEventPointWritesOnlyWhatItHas(t *testing.T) {
	p := EventPoint{Time: at, Run: "r1", Kind: KindPhaseEnd, Phase: "load", Message: "m"}.Point()
	if got := p.String(); strings.Contains(got, "iteration") || strings.Contains(got, "exit_status") || strings.Contains(got, "job=") {
		t.Errorf("a phase event carries iteration fields or a job: %s", got)
	}
}

func TestIterationPointsSurviveLineProtocol(t *testing.T) {
	for _, it := range []IterationPoint{
		{Time: at, Run: "r1", Workload: "stream", N: 1, RuntimeS: 2.5, ExitStatus: 0,
			Metrics: map[string]float64{FieldTriadBytesPerS: 2.8e12, FieldPausedS: 1.5}},
		{Time: at, Run: "r1", Workload: "sleep", N: 7, RuntimeS: 0.25, ExitStatus: 143},
	} {
		got, err := DecodeIteration(new(viaLine(t, it.Point())))
		if err != nil {
			t.Fatal(err)
		}
		if got.Time.Equal(it.Time) {
			got.Time = it.Time
		}
		if !reflect.DeepEqual(got, it) {
			t.Errorf("\n got %+v\nwant %+v", got, it)
		}
	}
}

func TestAlertPointsSurviveLineProtocol(t *testing.T) {
	for _, a := range []AlertPoint{
		{Time: at, Rule: "gpu_hot", Severity: "critical", Measurement: GPU, Tags: []point.Tag{{Key: TagGPU, Value: "0"}, {Key: TagUUID, Value: "GPU-1"}},
			State: StateFiring, HasValue: true, Value: 88.5, Threshold: 85, Message: "gpu 0 at 88.5 °C"},
		{Time: at, Rule: "tank_mode", Severity: "warning", Measurement: Tank, State: StateCleared, Message: "mode is auto again"},
	} {
		got, err := DecodeAlert(new(viaLine(t, a.Point())))
		if err != nil {
			t.Fatal(err)
		}
		if got.Time.Equal(a.Time) {
			got.Time = a.Time
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("\n got %+v\nwant %+v", got, a)
		}
	}
}

// TestAlertPointKeepsItsOwnKeys: a series tagged rule or severity must not
// overwrite the alert's own.
func TestAlertPointKeepsItsOwnKeys(t *testing.T) {
	p := AlertPoint{Time: at, Rule: "r", Severity: "info", Measurement: Hwmon, State: StateFiring,
		Tags: []point.Tag{{Key: TagRule, Value: "other"}, {Key: TagChip, Value: "c"}}}.Point()
	if p.Tag(TagRule) != "r" || p.Tag(TagChip) != "c" || len(p.Tags) != 4 {
		t.Errorf("tags %v", p.Tags)
	}
}

func TestDecodersNameWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		line   string
		decode func(*point.Point) error
		want   string
	}{
		{"gpu,gpu=0 temp_c=40 1", func(p *point.Point) error { _, err := DecodeEvent(p); return err }, `"gpu" point, not "event"`},
		{"event,kind=note message=3i 1", func(p *point.Point) error { _, err := DecodeEvent(p); return err }, "field message is int, not a string"},
		{`event,kind=iteration_end iteration="x" 1`, func(p *point.Point) error { _, err := DecodeEvent(p); return err }, "field iteration"},
		{"event,kind=note message=\"m\" 1", func(p *point.Point) error { _, err := DecodeIteration(p); return err }, `"event" point, not "iteration"`},
		{`iteration,run=r n="one" 1`, func(p *point.Point) error { _, err := DecodeIteration(p); return err }, "iteration 0 of run r"},
		{`alert,rule=x state="firing",value=3 1`, func(p *point.Point) error { _, err := DecodeAlert(p); return err }, "value and threshold come together"},
		{`alert,rule=x state=true 1`, func(p *point.Point) error { _, err := DecodeAlert(p); return err }, "field state is bool"},
	} {
		p, err := point.ParseLine([]byte(c.line))
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if err := c.decode(&p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.line, err, c.want)
		}
	}
}

// FuzzDecode feeds any line to the three decoders: none may panic, and what
// one decodes must encode to a point it decodes to the same again.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`event,kind=iteration_end,phase=load,run=r iteration=3i,exit_status=0i,runtime_s=1.5,message="m" 1`,
		`iteration,run=r,workload=w n=2i,runtime_s=1,exit_status=1i,flop_per_s=3e12 1`,
		`alert,rule=r,severity=info,measurement=gpu,gpu=0 state="firing",value=1,threshold=2,message="m" 1`,
		`event,kind=note,zz=1 iteration=2.0 1`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		p, err := point.ParseLine([]byte(line))
		if err != nil {
			return
		}
		if e, err := DecodeEvent(&p); err == nil {
			if again, err := DecodeEvent(new(e.Point())); err != nil || !reflect.DeepEqual(again.Point(), e.Point()) {
				t.Errorf("event %+v: decoded again %+v, %v", e, again, err)
			}
		}
		if it, err := DecodeIteration(&p); err == nil {
			if again, err := DecodeIteration(new(it.Point())); err != nil || !reflect.DeepEqual(again.Point(), it.Point()) {
				t.Errorf("iteration %+v: decoded again %+v, %v", it, again, err)
			}
		}
		if a, err := DecodeAlert(&p); err == nil {
			if again, err := DecodeAlert(new(a.Point())); err != nil || !reflect.DeepEqual(again.Point(), a.Point()) {
				t.Errorf("alert %+v: decoded again %+v, %v", a, again, err)
			}
		}
	})
}
