package collectors

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A VM lacks most sources: the log says so once, naming them, rather than
// a line per source; each one's reason stays at debug level.
func TestSourcesUnavailableAtStartAreOneLogLine(t *testing.T) {
	absent := func(name string) *testSource {
		return &testSource{name: name, discover: func(int32) error {
			return errors.Join(errors.ErrUnsupported, errors.New(name+" hardware not found"))
		}}
	}
	for _, tc := range []struct {
		level      slog.Level
		wantDetail bool
	}{{slog.LevelInfo, false}, {slog.LevelDebug, true}} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level}))
		c := New(Options{Interval: 20 * time.Millisecond, Ticks: 3, Logger: log, MaxBackoff: time.Second},
			[]Source{absent("hwmon"), &testSource{name: "host"}, absent("nvml")}, []Sink{&memSink{}})
		if err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if n := strings.Count(out, `msg="sources unavailable" sources="hwmon, nvml"`); n != 1 {
			t.Errorf("level %v: %d summary lines:\n%s", tc.level, n, out)
		}
		if got := strings.Contains(out, "nvml hardware not found"); got != tc.wantDetail {
			t.Errorf("level %v: per-source reason logged %v, want %v:\n%s", tc.level, got, tc.wantDetail, out)
		}
	}
}

// collector_source keeps a source the node lacks apart from one that fails:
// the absent one is available=false with no ok and no errors counted (an
// alert on ok == 0 or on errors must not fire on every node without a GPU),
// the failing one available=true, ok=false, its errors counted.
func TestAbsentSourceIsUnavailableNotFailing(t *testing.T) {
	absent := &testSource{name: "nvml", discover: func(int32) error {
		return errors.Join(errors.ErrUnsupported, errors.New("libnvidia-ml.so.1 not found"))
	}}
	failing := &testSource{name: "tank", discover: func(int32) error { return errors.New("connection refused") }}
	sink := &memSink{}
	c := New(Options{Interval: 20 * time.Millisecond, Ticks: 5, Logger: quietLogger(), MaxBackoff: time.Second},
		[]Source{absent, failing, &testSource{name: "host"}}, []Sink{sink})
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		available, hasOK, ok, errors bool
	}{
		"nvml": {available: false, hasOK: false, errors: false},
		"tank": {available: true, hasOK: true, ok: false, errors: true},
		"host": {available: true, hasOK: true, ok: true, errors: false},
	}
	// A source waiting out its backoff reports nothing: the first tick's
	// point stands (MaxBackoff is shorter than a /metrics series' staleness).
	seen := map[string]bool{}
	for _, p := range sink.points("collector_source", "", "") {
		src := p.Tag("source")
		seen[src] = true
		w := want[src]
		av, _ := p.Float("available")
		okv, hasOK := p.Float("ok")
		errs, _ := p.Float("errors_total")
		if (av == 1) != w.available || hasOK != w.hasOK || (hasOK && (okv == 1) != w.ok) || (errs > 0) != w.errors {
			t.Errorf("%s at %v: available %v, ok %v (present %v), errors_total %v; want %+v", src, p.Time, av, okv, hasOK, errs, w)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("collector_source points of %v, want one of each of the 3 sources at least", seen)
	}
}
