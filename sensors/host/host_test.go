package host

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/fixture"
)

func sample(t *testing.T, s *Source) ([]point.Point, error) {
	t.Helper()
	return s.Sample(context.Background(), time.Unix(1700000000, 0), nil)
}

// byKey indexes points by series key (measurement and tags).
func byKey(pts []point.Point) map[string]*point.Point {
	m := map[string]*point.Point{}
	for i := range pts {
		m[pts[i].SeriesKey()] = &pts[i]
	}
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func checkFields(t *testing.T, p *point.Point, want map[string]float64) {
	t.Helper()
	if len(p.Fields) != len(want) {
		t.Errorf("%s: fields %v, want %v", p.SeriesKey(), p.Fields, want)
	}
	for k, w := range want {
		if v, ok := p.Float(k); !ok || !near(v, w) {
			t.Errorf("%s %s = %v (present %v), want %v", p.SeriesKey(), k, v, ok, w)
		}
	}
}

func TestHostReadsMemLoadThenCPUUtilisation(t *testing.T) {
	proc := fixture.CopyProc(t, "intel-node")
	s := New(proc, filter.Filter{})
	if err := s.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	pts, err := sample(t, s)
	if err != nil {
		t.Fatal(err)
	}
	got := byKey(pts)
	if len(pts) != 2 || got["mem"] == nil || got["load"] == nil {
		t.Fatalf("first sample: %v; want mem and load only (utilisation needs two readings)", pts)
	}
	const kB = 1024
	checkFields(t, got["mem"], map[string]float64{
		"total_bytes":     32657080 * kB,
		"available_bytes": 26125664 * kB,
		"used_bytes":      (32657080 - 26125664) * kB,
		"swap_used_bytes": (8388604 - 8126460) * kB,
	})
	checkFields(t, got["load"], map[string]float64{"load1": 0.52, "load5": 0.61, "load15": 0.58, "procs_running": 2})

	// One second later: cpu0 busy, cpu1 idle with iowait gone back by 3, the rest idle.
	later, err := os.ReadFile(filepath.Join("testdata", "stat-1s-later"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "stat"), later, 0o644); err != nil {
		t.Fatal(err)
	}
	pts, err = sample(t, s)
	if err != nil {
		t.Fatal(err)
	}
	got = byKey(pts)
	if len(pts) != 2+13 {
		t.Errorf("second sample: %d points, want mem, load, total and 12 cpus", len(pts))
	}
	for key, want := range map[string]map[string]float64{
		"cpu,cpu=total": {"usage_pct": 5, "user_pct": 50.0 / 12, "system_pct": 10.0 / 12, "iowait_pct": 2.0 / 12, "idle_pct": 1138.0 / 12},
		"cpu,cpu=cpu0":  {"usage_pct": 60, "user_pct": 50, "system_pct": 10, "iowait_pct": 5, "idle_pct": 35},
		"cpu,cpu=cpu1":  {"usage_pct": 0, "user_pct": 0, "system_pct": 0, "iowait_pct": 0, "idle_pct": 100},
		"cpu,cpu=cpu11": {"usage_pct": 0, "user_pct": 0, "system_pct": 0, "iowait_pct": 0, "idle_pct": 100},
	} {
		p := got[key]
		if p == nil {
			t.Errorf("no %s point", key)
			continue
		}
		checkFields(t, p, want)
	}
	// No tick passed: utilisation is undefined, so absent rather than zero.
	pts, err = sample(t, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		if p.Measurement == "cpu" {
			t.Errorf("cpu point %v with no tick elapsed", p)
		}
	}
}

func TestHostDeviceFilterKeepsTotalOnly(t *testing.T) {
	proc := fixture.CopyProc(t, "amd-node")
	f, err := filter.New(filter.Spec{DeviceExclude: `^(cpu[0-9]+|load)$`})
	if err != nil {
		t.Fatal(err)
	}
	s := New(proc, f)
	if err := s.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	sample(t, s)
	b, _ := os.ReadFile(filepath.Join(proc, "stat"))
	// Every cpu line one tick later in idle.
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(l, "cpu") {
			f[4] += "9"
			l = strings.Join(f, " ")
		}
		out = append(out, l)
	}
	os.WriteFile(filepath.Join(proc, "stat"), []byte(strings.Join(out, "\n")), 0o644)
	pts, err := sample(t, s)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range pts {
		keys = append(keys, p.SeriesKey())
	}
	if strings.Join(keys, " ") != "cpu,cpu=total mem" {
		t.Errorf("points %v, want cpu total and mem", keys)
	}
}

func TestHostBadFilesFailAlone(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		content string // "" removes the file
		keep    []string
		wantErr string
	}{
		{"meminfo gone", "meminfo", "", []string{"load"}, "meminfo: no such file"},
		{"meminfo empty", "meminfo", "\n", []string{"load"}, "no MemTotal line"},
		{"meminfo garbage", "meminfo", "MemTotal: lots\n", []string{"load"}, `line 1 (MemTotal): "lots" is not "N kB"`},
		{"meminfo huge", "meminfo", "MemTotal: 99999999999999999999 kB\n", []string{"load"}, "is not a size in kB"},
		{"available above total", "meminfo", "MemTotal: 10 kB\nMemAvailable: 11 kB\n", []string{"load"}, "MemAvailable 11264 above MemTotal 10240"},
		{"loadavg garbage", "loadavg", "0.5 x 0.1 1/2 3\n", []string{"mem"}, `field 2: "x" is not a load average`},
		{"loadavg empty", "loadavg", "", []string{"mem"}, "loadavg: no such file"},
		{"stat garbage", "stat", "cpu  1 2 3 x\n", []string{"mem", "load"}, `stat: line 1 (cpu): column 4: "x" is not a tick count`},
		{"stat short", "stat", "cpu  1 2 3\n", []string{"mem", "load"}, "3 columns, want at least 4"},
		{"stat without cpu", "stat", "intr 1 2\n", []string{"mem", "load"}, "no cpu lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := fixture.CopyProc(t, "intel-node")
			s := New(proc, filter.Filter{})
			if err := s.Discover(context.Background()); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(proc, tt.file)
			if tt.content == "" {
				os.Remove(p)
			} else {
				os.WriteFile(p, []byte(tt.content), 0o644)
			}
			pts, err := sample(t, s)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), p) {
				t.Errorf("error %v; want one naming %s and saying %q", err, p, tt.wantErr)
			}
			var got []string
			for _, pt := range pts {
				got = append(got, pt.Measurement)
			}
			if strings.Join(got, ",") != strings.Join(tt.keep, ",") {
				t.Errorf("kept %v, want %v", got, tt.keep)
			}
		})
	}
}

func TestHostWithoutProcfs(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "proc"), filter.Filter{})
	if err := s.Discover(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Discover without procfs: %v, want ErrUnsupported", err)
	}
	// A tree that vanishes after discovery: no points and an error, so the
	// collector discovers again.
	proc := fixture.CopyProc(t, "intel-node")
	s = New(proc, filter.Filter{})
	if err := s.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(proc)
	pts, err := sample(t, s)
	if len(pts) != 0 || err == nil {
		t.Errorf("after the tree vanished: %d points, %v", len(pts), err)
	}
	if d := New(fixture.CopyProc(t, "bench-node"), filter.Filter{}); d.Discover(context.Background()) != nil ||
		!strings.Contains(strings.Join(d.Describe(), "\n"), "total and 128 cpus") {
		t.Errorf("bench-node: %q", d.Describe())
	}
}

func TestUtilisationNeedsElapsedTicks(t *testing.T) {
	a := cpuTimes{user: 10, idle: 10}
	if _, ok := utilisation(a, a); ok {
		t.Error("utilisation with no elapsed tick")
	}
	// Every counter going back (a CPU hot-replugged) also has no elapsed tick.
	if _, ok := utilisation(a, cpuTimes{}); ok {
		t.Error("utilisation across a counter reset")
	}
	u, ok := utilisation(a, cpuTimes{user: 11, nice: 1, system: 1, irq: 1, idle: 12, steal: 1, iowait: 1})
	// 8 ticks: user+nice 2, system+irq 2, idle 2, iowait 1, steal 1 (busy).
	if !ok || !near(u.usage, 62.5) || !near(u.user, 25) || !near(u.system, 25) || !near(u.idle, 25) || !near(u.iowait, 12.5) {
		t.Errorf("utilisation = %+v", u)
	}
}

func FuzzParseStat(f *testing.F) {
	for _, p := range []string{"../testdata/intel-node/proc/stat", "testdata/stat-1s-later"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("cpu  1 2 3 4\ncpu0 1 2 3 4\nintr 5\n"))
	f.Add([]byte("cpu 18446744073709551615 1 0 0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var names []string
		err := parseStat(b, func(name []byte, c cpuTimes) error {
			if !validCPUName(name) {
				t.Fatalf("invalid cpu name %q passed on", name)
			}
			if c.overflows() {
				t.Fatalf("overflowing times %+v passed on", c)
			}
			names = append(names, string(name))
			return nil
		})
		if err == nil && len(names) == 0 {
			t.Fatalf("no error and no cpu line in %q", b)
		}
	})
}

func FuzzParseMeminfo(f *testing.F) {
	b, err := os.ReadFile("../testdata/intel-node/proc/meminfo")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("MemTotal: 18014398509481983 kB\nMemAvailable: 1 kB\n"))
	f.Add([]byte("MemTotal:\nSwapFree: 3 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMeminfo(b)
		if err != nil {
			return
		}
		if m.haveAvailable && m.available > m.total {
			t.Fatalf("available %d above total %d", m.available, m.total)
		}
		if m.haveSwap && m.swapFree > m.swapTotal {
			t.Fatalf("swap free %d above total %d", m.swapFree, m.swapTotal)
		}
		if m.total%1024 != 0 {
			t.Fatalf("total %d is not whole kB", m.total)
		}
	})
}

func FuzzParseLoadavg(f *testing.F) {
	f.Add([]byte("0.52 0.61 0.58 2/1183 391102\n"))
	f.Add([]byte("NaN 1 1 1/1 1\n"))
	f.Add([]byte("1e400 1 1 1/1 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseLoadavg(b)
		if err != nil {
			return
		}
		for _, v := range []float64{l.load1, l.load5, l.load15} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("load %v accepted from %q", v, b)
			}
		}
		if l.running < 0 {
			t.Fatalf("running %d from %q", l.running, b)
		}
	})
}
