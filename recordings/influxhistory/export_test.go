package influxhistory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// A run as the runner records it: readings every second, phase events,
// an iteration; plus another host's readings and an earlier reading of the
// same host that are not part of it.
func exportFixture(t0 time.Time) (run, others []point.Point) {
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ev := func(s float64, kind, phase, msg string) point.Point {
		p := point.New("event", at(s))
		p.AddTag("host", "node1").AddTag("run", "R1").AddTag("kind", kind).AddTag("phase", phase)
		p.AddString("message", msg)
		return p
	}
	for s := 0; s <= 6; s++ {
		for _, host := range []string{"node1", "node2"} {
			g := point.New("gpu", at(float64(s)))
			g.AddTag("host", host).AddTag("gpu", "0").AddTag("uuid", "GPU-1")
			g.AddFloat("temp_c", 35+float64(s)).AddInt("pstate", 0).AddBool("throttle_thermal", s == 4)
			tick := point.New("collector_tick", at(float64(s)))
			tick.AddTag("host", host).AddFloat("lag_s", 0.001).AddUint("missed_ticks_total", 0)
			if host == "node1" {
				run = append(run, g, tick)
			} else {
				others = append(others, g, tick)
			}
		}
	}
	it := point.New("iteration", at(3.5))
	it.AddTag("host", "node1").AddTag("run", "R1").AddTag("workload", "stream")
	it.AddInt("n", 1).AddFloat("runtime_s", 1.5).AddInt("exit_status", 0).AddFloat("triad_bytes_per_s", 1.2e11)
	itEv := ev(3.5, "iteration_end", "load", "iteration 1: exit status 0 after 1.500s")
	itEv.AddInt("iteration", 1).AddInt("exit_status", 0).AddFloat("runtime_s", 1.5)
	alert := ev(4, "alert_fired", "load", "gpu temp_c above 38")
	run = append(run,
		ev(0, "phase_start", "baseline", "baseline starts"), ev(2, "phase_end", "baseline", "baseline ends"),
		ev(2, "phase_start", "load", "load starts"), it, itEv, alert, ev(4, "phase_end", "load", "load ends"),
		ev(4, "phase_start", "cooldown", "cooldown starts"), ev(6, "phase_end", "cooldown", "cooldown ends"))
	early := point.New("gpu", at(-60))
	early.AddTag("host", "node1").AddTag("gpu", "0").AddTag("uuid", "GPU-1").AddFloat("temp_c", 30)
	others = append(others, early)
	return run, others
}

func TestExportRebuildsARunFromInfluxDB(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t)
	o := influx.Options{
		Config:       influx.Config{URL: srv.URL(), Bucket: influxtest.Bucket, SpoolDir: t.TempDir(), FlushInterval: 200 * time.Millisecond},
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		DrainTimeout: 60 * time.Second,
	}
	if srv.Token != "" {
		o.Token = secret.Literal(srv.Token)
	}
	sink, err := influx.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	run, others := exportFixture(t0)
	if err := sink.Write(append(append([]point.Point{}, run...), others...)); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	res, err := Export(context.Background(), o.Config, ExportOptions{RunID: "R1", Window: 2 * time.Second}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteMeta(dir, res.Meta); err != nil {
		t.Fatal(err)
	}
	got, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.BadLines) > 0 {
		t.Fatalf("bad lines in the export: %v", got.BadLines)
	}
	assertSamePoints(t, got.Points, run)
	for i := 1; i < len(got.Points); i++ {
		if got.Points[i].Time.Before(got.Points[i-1].Time) {
			t.Fatalf("points.lp not in time order at %d", i)
		}
	}

	m := got.Meta
	if m.ID != "R1" || m.Host != "node1" || m.IntervalS != 1 || !m.Start.Equal(t0) {
		t.Errorf("meta id %q host %q interval %v start %v", m.ID, m.Host, m.IntervalS, m.Start)
	}
	want := []struct {
		name       string
		start, end int
	}{{"baseline", 0, 2}, {"load", 2, 4}, {"cooldown", 4, 6}}
	if len(m.Phases) != len(want) {
		t.Fatalf("phases %+v", m.Phases)
	}
	for i, w := range want {
		ph := m.Phases[i]
		if ph.Name != w.name || !ph.Start.Equal(t0.Add(time.Duration(w.start)*time.Second)) || ph.End == nil || !ph.End.Equal(t0.Add(time.Duration(w.end)*time.Second)) {
			t.Errorf("phase %d: %s %v..%v", i, ph.Name, ph.Start, ph.End)
		}
	}
	if m.Workload == nil || m.Workload.Name != "stream" || len(m.Workload.Iterations) != 1 {
		t.Fatalf("workload %+v", m.Workload)
	}
	it := m.Workload.Iterations[0]
	if it.N != 1 || it.RuntimeS != 1.5 || !it.Start.Equal(t0.Add(2*time.Second)) || it.Metrics["triad_bytes_per_s"] != 1.2e11 {
		t.Errorf("iteration %+v", it)
	}
	if len(m.Events) != 1 || m.Events[0].Kind != "alert_fired" || m.Events[0].Attrs["phase"] != "load" {
		t.Errorf("events %+v", m.Events)
	}

	// By host and time range: another host's readings.
	dir2 := t.TempDir()
	res2, err := Export(context.Background(), o.Config, ExportOptions{Hosts: []string{"node2"}, From: t0, To: t0.Add(7 * time.Second)}, dir2)
	if err != nil {
		t.Fatal(err)
	}
	if res2.Points != 14 {
		t.Errorf("node2 export: %d points, want 14", res2.Points)
	}

	_, err = Export(context.Background(), o.Config, ExportOptions{RunID: "no-such-run"}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `run "no-such-run" not found`) {
		t.Errorf("missing run: %v", err)
	}
}

// assertSamePoints compares two sets of points by series, time and values;
// types may differ (InfluxDB stores unsigned counters as integers).
func assertSamePoints(t *testing.T, got, want []point.Point) {
	t.Helper()
	key := func(p *point.Point) string { return p.SeriesKey() + " " + fmt.Sprint(p.Time.UnixNano()) }
	index := map[string]*point.Point{}
	for i := range got {
		index[key(&got[i])] = &got[i]
	}
	if len(got) != len(want) {
		t.Errorf("%d points, want %d", len(got), len(want))
		wantKeys := map[string]bool{}
		for i := range want {
			wantKeys[key(&want[i])] = true
		}
		for i := range got {
			if !wantKeys[key(&got[i])] {
				t.Errorf("unexpected %s", &got[i])
			}
		}
	}
	for i := range want {
		w := &want[i]
		g, ok := index[key(w)]
		if !ok {
			t.Errorf("missing %s", w)
			continue
		}
		if len(g.Fields) != len(w.Fields) {
			t.Errorf("%s: fields %s, want %s", key(w), g, w)
		}
		for _, f := range w.Fields {
			gv, ok := g.Field(f.Key)
			wf, wnum := point.Float(f.Value)
			gf, gnum := point.Float(gv)
			if !ok || wnum != gnum || (wnum && wf != gf) || (!wnum && gv.String() != f.Value.String()) {
				t.Errorf("%s: %s = %v, want %v", key(w), f.Key, gv, f.Value)
			}
		}
	}
}

func TestExportRefusesARunDirectoryThatHoldsARun(t *testing.T) {
	dir := t.TempDir()
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := point.New("cpu", time.Unix(1, 0))
	p.AddFloat("usage_pct", 50)
	if err := w.Write([]point.Point{p}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The directory is refused before any query: no server is needed.
	_, err = Export(context.Background(), influx.Config{URL: "http://127.0.0.1:1", Bucket: "db"}, ExportOptions{RunID: "r1"}, dir)
	if !errors.Is(err, rundir.ErrRunExists) {
		t.Fatalf("Export into a run directory: %v, want rundir.ErrRunExists", err)
	}
	n := 0
	if err := rundir.ForEachPoint(dir, func(*point.Point) error { n++; return nil }, nil); err != nil || n != 1 {
		t.Errorf("points.lp holds %d points after the refused export (%v), want the 1 recorded", n, err)
	}
}
