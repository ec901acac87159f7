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
