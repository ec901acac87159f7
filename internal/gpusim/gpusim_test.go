package gpusim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

func plant(t *testing.T) Plant {
	return Plant{LoadDir: t.TempDir(), Coupling: [][]float64{{0, 0.02}},
		GPUs: []GPU{
			{UUID: "GPU-a", Model: "SIM", IdleW: 70, LoadW: 570, IdleC: 30, MemIdleC: 35, CoreCPerW: 0.04, MemCPerW: 0.03, TauS: 2},
			{UUID: "GPU-b", Model: "SIM", IdleW: 70, LoadW: 570, IdleC: 31, MemIdleC: 35, CoreCPerW: 0.05, MemCPerW: 0.03, TauS: 2},
		}}
}

func field(t *testing.T, p point.Point, name string) float64 {
	t.Helper()
	v, ok := p.Float(name)
	if !ok {
		t.Fatalf("%s: no %s", p.Tag("uuid"), name)
	}
	return v
}

// A loaded GPU settles at idle + °C/W × its power above idle, its
// neighbour at idle + coupling × that power, in whole degrees; the load
// ends when the marker goes.
func TestPlantSettlesWhereItsResistanceAndCouplingSay(t *testing.T) {
	p := plant(t)
	s := New(p)
	if err := s.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(p.LoadDir, "gpu0")
	at := time.Unix(1000, 0)
	sample := func() []point.Point {
		pts, err := s.Sample(context.Background(), at, nil)
		if err != nil || len(pts) != 2 {
			t.Fatalf("sample: %d points, %v", len(pts), err)
		}
		return pts
	}
	idle := sample()
	if field(t, idle[0], "temp_c") != 30 || field(t, idle[1], "temp_c") != 31 || field(t, idle[0], "power_w") != 70 {
		t.Errorf("idle: %v", idle)
	}
	os.WriteFile(marker, nil, 0o644)
	at = at.Add(20 * time.Second) // 10 τ
	hot := sample()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"GPU 0 core", field(t, hot[0], "temp_c"), 30 + 0.04*500},
		{"GPU 0 memory", field(t, hot[0], "mem_temp_c"), 35 + 0.03*500},
		{"GPU 0 power", field(t, hot[0], "power_w"), 570},
		{"GPU 1 core (neighbour)", field(t, hot[1], "temp_c"), 31 + 0.02*500},
		{"GPU 1 power", field(t, hot[1], "power_w"), 70},
	} {
		if c.got != c.want {
			t.Errorf("%s: %g, want %g", c.name, c.got, c.want)
		}
	}
	if hot[0].Tag("uuid") != "GPU-a" || hot[1].Tag("gpu") != "1" || hot[0].Tag("model") != "SIM" {
		t.Errorf("tags %v %v", hot[0].Tags, hot[1].Tags)
	}
	os.Remove(marker)
	at = at.Add(2 * time.Second) // one τ: 63 % of the way back
	if got := field(t, sample()[0], "temp_c"); got != 37 {
		t.Errorf("one τ after the load: %g °C, want 37 (50 − 0.632 × 20, rounded)", got)
	}
}

func TestCheckNamesWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Plant)
		want string
	}{
		{"no gpus", func(p *Plant) { p.GPUs = nil }, "no gpus"},
		{"no load dir", func(p *Plant) { p.LoadDir = "" }, "load_dir missing"},
		{"no uuid", func(p *Plant) { p.GPUs[1].UUID = "" }, "gpus[1]: uuid missing"},
		{"no tau", func(p *Plant) { p.GPUs[0].TauS = 0 }, "gpus[0] (GPU-a): tau_s 0"},
		{"load below idle", func(p *Plant) { p.GPUs[0].LoadW = 50 }, "idle_w (70) < load_w (50)"},
		{"coupling too wide", func(p *Plant) { p.Coupling = [][]float64{{0, 1, 2}} }, "coupling row 0 has 3 columns for 2 gpus"},
	} {
		p := plant(t)
		c.edit(&p)
		if err := p.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := plant(t).Check(); err != nil {
		t.Errorf("a good plant: %v", err)
	}
}
