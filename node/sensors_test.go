package node

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
)

func fixtureConfig(t *testing.T, machine string) *configs.Config {
	t.Helper()
	cfg := configs.Default()
	cfg.SysfsRoot = "../sensors/testdata/" + machine + "/sys"
	cfg.ProcfsRoot = "../sensors/testdata/" + machine + "/proc"
	cfg.Interval, cfg.Deadline = 100*time.Millisecond, 50*time.Millisecond
	cfg.Section("sources.nvml").(*filter.Section).Disabled = true
	return cfg
}

// heatsink sensors samples through the collector, each source twice,
// keeping the second sample: RAPL's power, derived from two energy
// readings, is there.
func TestSensorsSamplesEverySourceTwiceWithTheCollector(t *testing.T) {
	snap, err := Sensors(context.Background(), fixtureConfig(t, "intel-node"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"host", "hwmon", "cpufreq", "rapl", "nvme"}
	if len(snap) != len(want) {
		t.Fatalf("%d sources, want %v: %+v", len(snap), want, snap)
	}
	for i, s := range snap {
		if s.Name != want[i] || !s.Available || s.Error != "" || len(s.Points) == 0 || len(s.Devices) == 0 {
			t.Errorf("source %d: %+v", i, s)
		}
	}
	if len(snap[3].Points) == 0 {
		t.Fatal("no rapl points")
	}
	if _, ok := snap[3].Points[0].Field("power_w"); !ok {
		t.Errorf("rapl point without power_w: %s", snap[3].Points[0])
	}
}

// An absent source says why, without the "unsupported operation" suffix;
// one that never answers is named, and holds up nothing else.
func TestSensorsNamesAbsentAndHungSources(t *testing.T) {
	hung := &stubSource{name: "hung", discover: func(ctx context.Context) error { <-make(chan struct{}); return nil }}
	absent := &stubSource{name: "absent", discover: func(context.Context) error {
		return fmt.Errorf("no widget here: %w", errors.ErrUnsupported)
	}}
	snap := sensorsOf(context.Background(), 50*time.Millisecond, 100*time.Millisecond, hung, absent)
	if snap[0].Available || snap[0].Error != "no answer within 50ms" {
		t.Errorf("hung: %+v", snap[0])
	}
	if snap[1].Available || snap[1].Error != "no widget here" {
		t.Errorf("absent: %+v", snap[1])
	}
}

type stubSource struct {
	name     string
	discover func(context.Context) error
}

func (s *stubSource) Name() string                       { return s.name }
func (s *stubSource) Discover(ctx context.Context) error { return s.discover(ctx) }
func (s *stubSource) Sample(_ context.Context, _ time.Time, buf []point.Point) ([]point.Point, error) {
	return buf, nil
}
