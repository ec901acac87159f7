package agent

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/internal/smalldisk"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// runAgent runs a collector of one good source into sinks behind the
// agent's handler, until the test ends.
func runAgent(t *testing.T, sinks []collectors.Sink, o Options) string {
	c := collectors.New(collectors.Options{Interval: 200 * time.Millisecond, Host: "n1",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, []collectors.Source{&source{name: "nvml"}}, sinks)
	o.Collector = c
	srv := httptest.NewServer(Handler(o))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; srv.Close() })
	return srv.URL
}

func waitHealth(t *testing.T, url, what string, ok func(Health) bool) Health {
	t.Helper()
	var h Health
	for deadline := time.Now().Add(60 * time.Second); ; {
		h = Health{}
		get(t, url+"/healthz", &h)
		if ok(h) {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 60 s: %+v", what, h)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// During an InfluxDB outage the agent is degraded, and /healthz shows how
// much waits in the spool and for how long; once the server is back, ok.
func TestHealthzIsDegradedDuringAnInfluxDBOutage(t *testing.T) {
	srv := influxtest.Start(t)
	sink, err := influx.New(influx.Options{Config: influx.Config{URL: srv.URL(), Bucket: influxtest.Bucket, SpoolDir: t.TempDir(),
		MaxRetryInterval: 500 * time.Millisecond, FlushInterval: 200 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MinRetryInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Abort() })
	// What the node serves: the sink's own description of itself.
	health := func() map[string]SinkHealth { return map[string]SinkHealth{"influx": SinkHealth(sink.SinkHealth())} }
	url := runAgent(t, []collectors.Sink{sink}, Options{Sinks: health})
	waitHealth(t, url, "ok status with InfluxDB up", func(h Health) bool { return h.Status == "ok" && h.Ticks > 2 })

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	h := waitHealth(t, url, "degraded status with a backlog over 1 s old", func(h Health) bool {
		s := h.Sinks["influx"]
		return h.Status == "degraded" && s.UnsentPoints > 0 && s.OldestUnsentAgeS != nil && *s.OldestUnsentAgeS > 1
	})
	if len(h.Problems) == 0 || !strings.Contains(h.Problems[0], "sink influx") {
		t.Errorf("problems %q, want the InfluxDB sink named", h.Problems)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitHealth(t, url, "ok status with the spool emptied", func(h Health) bool {
		return h.Status == "ok" && h.Sinks["influx"].UnsentPoints == 0
	})
}

// A sink whose writes fail (a run directory on a full disk) makes the agent
// degraded while it fails, and ok again a few ticks after it recovers.
func TestHealthzIsDegradedWhileASinkFails(t *testing.T) {
	disk := smalldisk.Mount(t, 1<<20)
	w, err := rundir.Create(filepath.Join(disk, "run"))
	if err != nil {
		t.Fatal(err)
	}
	w.SyncEvery = 0
	url := runAgent(t, []collectors.Sink{w}, Options{})
	waitHealth(t, url, "ok status", func(h Health) bool { return h.Status == "ok" && h.Ticks > 2 })
	free := smalldisk.Fill(t, disk)
	h := waitHealth(t, url, "degraded status on a full disk", func(h Health) bool { return h.Status == "degraded" })
	if len(h.Problems) == 0 || !strings.Contains(h.Problems[0], "no space left") {
		t.Errorf("problems %q, want the full disk named", h.Problems)
	}
	free()
	waitHealth(t, url, "ok status once space returned", func(h Health) bool { return h.Status == "ok" })
}
