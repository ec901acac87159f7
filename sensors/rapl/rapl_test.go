package rapl

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/fixture"
)

var stamp = time.Unix(1700000000, 0)

// clock is a settable time source, so power comes out exact.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestCounterUnwrapsAcrossWraparound(t *testing.T) {
	const rng = 262143328850 // max_energy_range_uj of an Intel package
	t0 := time.Unix(0, 0)
	type step struct {
		raw      uint64
		at       time.Duration
		energyJ  float64
		powerW   float64 // -1: absent
		errSnips string
	}
	tests := []struct {
		name     string
		maxRange uint64
		steps    []step
	}{
		{"steady 100 W", rng, []step{
			{1_000_000_000, 0, 1000, -1, ""},
			{1_100_000_000, time.Second, 1100, 100, ""},
			{1_250_000_000, 2 * time.Second, 1250, 150, ""},
		}},
		{"wraps at max_energy_range_uj", rng, []step{
			{rng - 50_000_000, 0, (rng - 50_000_000) / 1e6, -1, ""},
			{150_000_000, time.Second, (rng + 150_000_000) / 1e6, 200, ""},
			{350_000_000, 2 * time.Second, (rng + 350_000_000) / 1e6, 200, ""},
			{rng - 1, 1000 * time.Second, (2*rng - 1) / 1e6, -1, ""}, // past maxGap: a lower bound, no power
		}},
		{"value above the range", rng, []step{
			{5, 0, 5e-6, -1, ""},
			{rng + 1, time.Second, 0, -1, "above max_energy_range_uj"},
			{10, 2 * time.Second, 10e-6, 2.5e-6, ""}, // 5 µJ since the last good reading, 2 s ago
		}},
		{"unknown range cannot tell a wrap", 0, []step{
			{500, 0, 500e-6, -1, ""},
			{100, time.Second, 0, -1, "went back from 500 to 100"},
			{300, 2 * time.Second, 700e-6, 200e-6, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c counter
			for i, s := range tt.steps {
				p, ok, err := c.add(s.raw, tt.maxRange, t0.Add(s.at))
				if s.errSnips != "" {
					if err == nil || !strings.Contains(err.Error(), s.errSnips) {
						t.Fatalf("step %d: error %v, want %q", i, err, s.errSnips)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if got := float64(c.total) / 1e6; !near(got, s.energyJ) {
					t.Errorf("step %d: energy %v J, want %v", i, got, s.energyJ)
				}
				if (s.powerW < 0) == ok || (ok && !near(p, s.powerW)) {
					t.Errorf("step %d: power %v (present %v), want %v", i, p, ok, s.powerW)
				}
			}
		})
	}
}

func TestRaplSamplesZonesAndDerivesPower(t *testing.T) {
	sys := fixture.CopySys(t, "intel-node")
	clk := &clock{time.Unix(1000, 0)}
	s := New(sys, filter.Filter{})
	s.now = clk.now
	ctx := context.Background()
	if err := s.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"intel-rapl:0 package-0", "intel-rapl:0:0 core", "intel-rapl:0:1 uncore", "intel-rapl:1 psys",
	}
	if d := s.Describe(); strings.Join(d, "|") != strings.Join(want, "|") {
		t.Errorf("Describe = %q", d)
	}
	pts, err := s.Sample(ctx, stamp, nil)
	if err != nil || len(pts) != 4 {
		t.Fatalf("first sample: %v, %v", pts, err)
	}
	for i, p := range pts {
		if _, ok := p.Field("power_w"); ok {
			t.Errorf("power on the first sample: %v", p)
		}
		id := strings.Fields(want[i])
		if p.Measurement != "rapl" || p.Tag("zone_id") != id[0] || p.Tag("zone") != id[1] {
			t.Errorf("point %d: %v", i, p)
		}
	}
	if e, _ := pts[0].Float("energy_j"); !near(e, 72509.836719) {
		t.Errorf("package energy %v J", e)
	}
	// Two seconds later: the package drew 65 W, and the core counter wrapped.
	zone := func(id string) string { return filepath.Join(sys, "class/powercap", id, "energy_uj") }
	os.WriteFile(zone("intel-rapl:0"), []byte(strconv.FormatUint(72509836719+130_000_000, 10)+"\n"), 0o644)
	os.WriteFile(zone("intel-rapl:0:0"), []byte("20000000\n"), 0o644)
	clk.t = clk.t.Add(2 * time.Second)
	pts, err = s.Sample(ctx, stamp.Add(2*time.Second), nil)
	if err != nil || len(pts) != 4 {
		t.Fatalf("second sample: %v, %v", pts, err)
	}
	check := func(p point.Point, energy, power float64) {
		t.Helper()
		e, _ := p.Float("energy_j")
		w, ok := p.Float("power_w")
		if !near(e, energy) || !ok || !near(w, power) {
			t.Errorf("%s: energy %v J, power %v W; want %v J, %v W", p.Tag("zone_id"), e, w, energy, power)
		}
	}
	check(pts[0], 72639.836719, 65)
	wrapped := (262143328850 - 30091826145 + 20000000) / 1e6
	check(pts[1], 30091.826145+wrapped, wrapped/2)
	check(pts[2], 1045.711282, 0) // uncore idle: a real 0 W

	// A zone whose counter becomes garbage is one error; the rest are kept.
	os.WriteFile(zone("intel-rapl:1"), []byte("-\n"), 0o644)
	clk.t = clk.t.Add(time.Second)
	pts, err = s.Sample(ctx, stamp, nil)
	if len(pts) != 3 || err == nil || !strings.Contains(err.Error(), "rapl intel-rapl:1 (psys): parse "+zone("intel-rapl:1")) {
		t.Errorf("garbage psys: %d points, %v", len(pts), err)
	}
	// Every zone gone: no points and an error; re-discovery is unsupported.
	os.RemoveAll(filepath.Join(sys, "devices/virtual/powercap"))
	pts, err = s.Sample(ctx, stamp, nil)
	if len(pts) != 0 || err == nil || strings.Count(err.Error(), "\n") != 3 {
		t.Errorf("zones gone: %d points, %v", len(pts), err)
	}
	if err := s.Discover(ctx); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Discover with no zones: %v", err)
	}
}

// TestRaplEnergyStaysMonotonicAcrossRediscovery: the counter state outlives
// a re-discovery, so energy_j never jumps back to the kernel's raw value.
func TestRaplEnergyStaysMonotonicAcrossRediscovery(t *testing.T) {
	sys := fixture.CopySys(t, "amd-node")
	clk := &clock{time.Unix(1000, 0)}
	f, _ := filter.New(filter.Spec{DeviceInclude: "package"})
	s := New(sys, f)
	s.now = clk.now
	ctx := context.Background()
	energy := filepath.Join(sys, "class/powercap/intel-rapl:0/energy_uj")
	const rng = 65532610987
	var last float64
	for i, raw := range []uint64{rng - 100_000_000, 50_000_000, 150_000_000} {
		if i < 2 {
			if err := s.Discover(ctx); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(energy, []byte(strconv.FormatUint(raw, 10)+"\n"), 0o644)
		pts, err := s.Sample(ctx, stamp, nil)
		if err != nil || len(pts) != 1 {
			t.Fatalf("sample %d: %v, %v", i, pts, err)
		}
		e, _ := pts[0].Float("energy_j")
		if e <= last {
			t.Errorf("sample %d: energy %v J after %v J", i, e, last)
		}
		last = e
		clk.t = clk.t.Add(time.Second)
	}
	if !near(last, (rng+150_000_000)/1e6) {
		t.Errorf("energy %v J, want %v", last, (rng+150_000_000)/1e6)
	}
}

func TestRaplUnsupported(t *testing.T) {
	err := New(filepath.Join(t.TempDir(), "sys"), filter.Filter{}).Discover(context.Background())
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "no powercap class") {
		t.Errorf("no powercap: %v", err)
	}
	f, _ := filter.New(filter.Spec{DeviceExclude: "."})
	if err := New(fixture.Sys("intel-node"), f).Discover(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("all filtered: %v", err)
	}
}

func TestRaplBenchNode(t *testing.T) {
	s := New(fixture.Sys("bench-node"), filter.Filter{})
	if err := s.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	pts, err := s.Sample(context.Background(), stamp, nil)
	if err != nil || len(pts) != 4 || pts[1].Tag("zone") != "dram" || pts[3].Tag("zone_id") != "intel-rapl:1:0" {
		t.Errorf("bench-node: %v, %v", pts, err)
	}
}
