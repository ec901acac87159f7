package cpufreq

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/fixture"
)

var stamp = time.Unix(1700000000, 0)

func discover(t *testing.T, root string, spec filter.Spec) *Source {
	t.Helper()
	return fixture.Discover(t, New, root, spec)
}

func render(p point.Point) string {
	var b strings.Builder
	b.WriteString(p.Tag("cpu"))
	for _, f := range p.Fields {
		v, _ := point.Float(f.Value)
		fmt.Fprintf(&b, " %s=%g", f.Key, v)
	}
	return b.String()
}

func TestCpufreqReadsEveryPolicy(t *testing.T) {
	tests := []struct {
		node  string
		n     int
		first string
		last  string
		desc  string
	}{
		{"intel-node", 12, "cpu0 freq_mhz=4300 min_mhz=800 max_mhz=4600", "cpu11 freq_mhz=4435.795 min_mhz=800 max_mhz=4600",
			"12 cpus with a cpufreq policy: cpu0..cpu11 (intel_pstate)"},
		{"amd-node", 16, "cpu0 freq_mhz=3593 min_mhz=2200 max_mhz=3800", "cpu15 freq_mhz=3593 min_mhz=2200 max_mhz=3800",
			"16 cpus with a cpufreq policy: cpu0..cpu15 (acpi-cpufreq)"},
		{"bench-node", 128, "cpu0 freq_mhz=2800 min_mhz=800 max_mhz=3800", "cpu127 freq_mhz=2825 min_mhz=800 max_mhz=3800",
			"128 cpus with a cpufreq policy: cpu0..cpu127 (intel_pstate)"},
	}
	for _, tt := range tests {
		t.Run(tt.node, func(t *testing.T) {
			s := discover(t, fixture.Sys(tt.node), filter.Spec{})
			pts, err := s.Sample(context.Background(), stamp, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(pts) != tt.n {
				t.Fatalf("%d points, want %d", len(pts), tt.n)
			}
			// Numeric order, not cpu1, cpu10, cpu11, cpu2...
			for i, p := range pts {
				if p.Measurement != "cpufreq" || p.Tag("cpu") != fmt.Sprintf("cpu%d", i) || !p.Time.Equal(stamp) {
					t.Fatalf("point %d: %v", i, p)
				}
			}
			if got := render(pts[0]); got != tt.first {
				t.Errorf("first: %s, want %s", got, tt.first)
			}
			if got := render(pts[len(pts)-1]); got != tt.last {
				t.Errorf("last: %s, want %s", got, tt.last)
			}
			if d := s.Describe(); len(d) != 1 || d[0] != tt.desc {
				t.Errorf("Describe = %q, want %q", d, tt.desc)
			}
		})
	}
}

func TestCpufreqFilterAndErrors(t *testing.T) {
	sys := fixture.CopySys(t, "intel-node")
	s := discover(t, sys, filter.Spec{DeviceInclude: `^cpu[0-3]$`})
	s.SetRefresh(1)
	pol := func(cpu int, f string) string {
		return filepath.Join(sys, "devices/system/cpu", fmt.Sprintf("cpu%d", cpu), "cpufreq", f)
	}
	os.WriteFile(pol(1, "scaling_cur_freq"), []byte("<unknown>\n"), 0o644)
	os.WriteFile(pol(2, "scaling_cur_freq"), []byte("999999999999\n"), 0o644)
	os.WriteFile(pol(3, "scaling_max_freq"), nil, 0o644)
	pts, err := s.Sample(context.Background(), stamp, nil)
	if len(pts) != 2 || render(pts[0]) != "cpu0 freq_mhz=4300 min_mhz=800 max_mhz=4600" ||
		render(pts[1]) != "cpu3 freq_mhz=4337.035 min_mhz=800" {
		t.Errorf("points %v; want cpu0 whole and cpu3 without max_mhz", pts)
	}
	for _, want := range []string{
		"cpufreq cpu1: parse " + pol(1, "scaling_cur_freq") + `: "<unknown>" is not a decimal integer`,
		"cpufreq cpu2: " + pol(2, "scaling_cur_freq") + ": 999999999999 kHz is not a plausible frequency",
		"cpufreq cpu3: parse " + pol(3, "scaling_max_freq") + ": empty value",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

// TestCpufreqOfflineCPU: a CPU taken offline loses its cpufreq link and its
// policy stops answering (EBUSY on Linux; an empty file here); that is one
// error, and the next sample has rediscovered without it.
func TestCpufreqOfflineCPU(t *testing.T) {
	sys := fixture.CopySys(t, "intel-node")
	s := discover(t, sys, filter.Spec{})
	if pts, err := s.Sample(context.Background(), stamp, nil); len(pts) != 12 || err != nil {
		t.Fatalf("%d points, %v", len(pts), err)
	}
	os.Remove(filepath.Join(sys, "devices/system/cpu/cpu5/cpufreq"))
	os.WriteFile(filepath.Join(sys, "devices/system/cpu/cpufreq/policy5/scaling_cur_freq"), nil, 0o644)
	pts, err := s.Sample(context.Background(), stamp, nil)
	if len(pts) != 11 || err == nil || !strings.Contains(err.Error(), "cpufreq cpu5: parse ") {
		t.Errorf("%d points, %v; want 11 and cpu5's error", len(pts), err)
	}
	pts, err = s.Sample(context.Background(), stamp, nil)
	if len(pts) != 11 || err != nil || slices.ContainsFunc(pts, func(p point.Point) bool { return p.Tag("cpu") == "cpu5" }) {
		t.Errorf("next sample: %d points, %v; want 11 without cpu5, no error", len(pts), err)
	}
	os.RemoveAll(filepath.Join(sys, "devices/system/cpu"))
	pts, err = s.Sample(context.Background(), stamp, nil)
	if len(pts) != 0 || err == nil || !strings.Contains(err.Error(), "cpu devices vanished") {
		t.Errorf("tree gone: %d points, %v", len(pts), err)
	}
	if err := s.Discover(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Discover without cpus: %v, want ErrUnsupported", err)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

func TestCpufreqUnsupportedWithoutDriver(t *testing.T) {
	// A virtual machine: cpu directories, no cpufreq.
	sys := filepath.Join(t.TempDir(), "sys")
	os.MkdirAll(filepath.Join(sys, "devices/system/cpu/cpu0"), 0o755)
	os.MkdirAll(filepath.Join(sys, "devices/system/cpu/cpu1"), 0o755)
	err := New(sys, filter.Filter{}).Discover(context.Background())
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "no cpufreq driver") {
		t.Errorf("Discover: %v", err)
	}
}

func BenchmarkCpufreqSampleBenchNode(b *testing.B) {
	fixture.BenchmarkSample(b, New(fixture.Sys("bench-node"), filter.Filter{}))
}
