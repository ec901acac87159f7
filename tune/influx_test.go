package tune

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/recordings/influxhistory"
)

// recording replays a table and records each evaluation as RunEvaluator
// does: a run directory with a tune.json.
type recording struct {
	*Table
	space, spec string
	dir         string
	violate     bool
	n           int
}

func (r *recording) Evaluate(ctx context.Context, t Task, c Config) (Result, error) {
	res, err := r.Table.Evaluate(ctx, t, c)
	if err != nil {
		return res, err
	}
	r.n++
	res.Run = filepath.Join(r.dir, fmt.Sprintf("eval-%03d", r.n))
	rec := Record{Space: r.space, Task: t, Values: r.Table.space.Values(c), Objective: &res.Objective, Spec: r.spec}
	if r.violate {
		rec.Violation = "thermal throttling"
	}
	b, _ := json.Marshal(rec)
	if err := os.MkdirAll(res.Run, 0o755); err != nil {
		return res, err
	}
	return res, os.WriteFile(filepath.Join(res.Run, RecordFile), b, 0o644)
}

func keys(obs []Observation) []string {
	var k []string
	for _, o := range obs {
		k = append(k, fmt.Sprintf("%v %s %g", o.Task, o.Config.Key(), o.Objective))
	}
	slices.Sort(k)
	return k
}

// Earlier tuning runs published to a real InfluxDB (influxd on loopback)
// come back as the same sources as their run directories, and only those
// of the space and objective that broke no constraint.
func TestSourcesFromInfluxDBAreTheRunDirectoriesSources(t *testing.T) {
	srv := influxtest.Start(t)
	cfg := influx.Config{URL: srv.URL(), Bucket: influxtest.Bucket, SpoolDir: t.TempDir(), FlushInterval: 100 * time.Millisecond}
	sink, err := influx.Start(context.Background(), influx.Options{Config: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), DrainTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, tab := synthetic(t)
	runs := t.TempDir()
	for i, src := range []struct {
		n           float64
		space, spec string
		violate     bool
	}{{60, "syr2k", "runtime_s", false}, {120, "syr2k", "runtime_s", false}, {180, "syr2k", "runtime_s", false},
		{120, "syr2k", "energy_per_work", false}, {120, "other", "runtime_s", false}, {180, "syr2k", "runtime_s", true}} {
		rec := &recording{Table: tab, space: src.space, spec: src.spec, dir: filepath.Join(runs, fmt.Sprint(i)), violate: src.violate}
		task := Task{"n": src.n}
		if _, err := Search(context.Background(), s, task, NewRandomMethod(s, task, uint64(i)), Publisher{Evaluator: rec, W: sink}, 20, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sink.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	q := func(ctx context.Context, m string, tags map[string]string, fn func(point.Point)) error {
		return influxhistory.QueryMeasurement(ctx, cfg, m, tags, fn)
	}
	fromDB, err := LoadInfluxSources(context.Background(), q, "influx", s, "runtime_s")
	if err != nil {
		t.Fatal(err)
	}
	fromDirs, err := LoadSources(s, "runtime_s", []string{runs})
	if err != nil {
		t.Fatal(err)
	}
	if len(fromDB) != 60 {
		t.Errorf("%d sources from InfluxDB, want 60 (3 tasks x 20; not the other space's, objective's, nor the violations)", len(fromDB))
	}
	if !slices.Equal(keys(fromDB), keys(fromDirs)) {
		t.Errorf("InfluxDB and the run directories disagree:\n%v\n%v", keys(fromDB), keys(fromDirs))
	}
	if _, err := Fit(s, fromDB, FitOptions{}); err != nil {
		t.Errorf("fit on the InfluxDB sources: %v", err)
	}
}

func TestInfluxSourcesNameTheBadRecord(t *testing.T) {
	s, _ := synthetic(t)
	q := func(_ context.Context, m string, _ map[string]string, fn func(point.Point)) error {
		p := point.New(m, time.Unix(5, 0))
		p.AddTag("run", "eval-007").AddTag("space", "syr2k").AddString("record", "{not json")
		fn(p)
		return nil
	}
	_, err := LoadInfluxSources(context.Background(), q, "influx", s, "runtime_s")
	if err == nil || !strings.Contains(err.Error(), "influx: tune_evaluation of run eval-007") {
		t.Errorf("a bad record: %v", err)
	}
}
