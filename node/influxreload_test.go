package node

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// A reload that changes sinks.influx replaces the sink through the
// handoff (the new sink needs the old one's spool lock), keeps the running
// sink when the new section cannot start (a bucket the server does not
// have), and loses no tick on the way: every one lands in a real InfluxDB.
func TestReloadReplacesTheInfluxSinkWithoutLosingATick(t *testing.T) {
	srv := influxtest.Start(t)
	spool := filepath.Join(t.TempDir(), "spool")
	parse := func(influxSection string) *configs.Config {
		t.Helper()
		c, err := configs.Parse("n.yaml", []byte("interval: 50ms\nsysfs_root: ../sensors/testdata/intel-node/sys\n"+
			"procfs_root: ../sensors/testdata/intel-node/proc\nsources:\n  nvml: {disabled: true}\n"+
			"sinks:\n  influx: {url: "+srv.URL()+", spool_dir: "+spool+", "+influxSection+"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var next *configs.Config
	cfg := parse("bucket: " + influxtest.Bucket + ", flush_interval: 100ms")
	ag := NewAgent(cfg, AgentOptions{Load: func() (*configs.Config, error) { return next, nil }})
	c, err := Start(cfg, Options{Handoff: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := ag.Start(ctx, c); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- c.Collector().Run(ctx) }()

	tests := []struct {
		name, section string
		wantBucket    string // what the running configuration says after
	}{
		{"flush interval changed", "bucket: " + influxtest.Bucket + ", flush_interval: 200ms", influxtest.Bucket},
		{"a bucket the server lacks", "bucket: nosuchdb", influxtest.Bucket},
	}
	for _, tt := range tests {
		var sent int64
		eventually(t, tt.name+": points sent before the reload", func() bool {
			h := ag.sinkHealth()["influx"]
			sent = h.SentPointsTotal
			return h.OK && sent > 0
		})
		next = parse(tt.section)
		if err := ag.reload(); err != nil {
			t.Fatalf("%s: reload: %v", tt.name, err)
		}
		if got := influx.ConfigOf(ag.cfg).Bucket; got != tt.wantBucket {
			t.Errorf("%s: the running configuration's bucket is %q, want %q", tt.name, got, tt.wantBucket)
		}
		var h agent.SinkHealth
		eventually(t, tt.name+": points sent after the reload", func() bool {
			h = ag.sinkHealth()["influx"]
			return h.OK && h.SentPointsTotal > 0 && filepath.Dir(h.SpoolDir) == spool
		})
	}
	cancel()
	if err := <-ran; err != nil && err != context.Canceled {
		t.Errorf("collector: %v", err)
	}
	ag.Stop()
	if err := c.Finish("complete"); err != nil {
		t.Fatalf("finish: %v", err)
	}
	ticks := c.Collector().Stats().Ticks
	pts, err := srv.Points(schema.CollectorTick)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != ticks {
		var times []string
		for _, p := range pts {
			times = append(times, fmt.Sprint(p.Time.UnixMilli()))
		}
		t.Errorf("InfluxDB holds %d ticks of %d: %s", len(pts), ticks, strings.Join(times, " "))
	}
}
