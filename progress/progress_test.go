package progress

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

func tick(t time.Time) []point.Point {
	g0 := point.New("gpu", t)
	g0.AddTag("gpu", "0").AddFloat("temp_c", 71).AddFloat("mem_temp_c", 60).AddFloat("slowdown_c", 87).AddFloat("mem_max_c", 95)
	g1 := point.New("gpu", t)
	g1.AddTag("gpu", "1").AddFloat("temp_c", 64).AddFloat("slowdown_c", 87)
	c := point.New("hwmon", t)
	c.AddTag("class", "cpu_package").AddFloat("temp_c", 55).AddFloat("crit_c", 100)
	n := point.New("hwmon", t)
	n.AddTag("class", "nvme").AddFloat("temp_c", 80) // not a CPU
	return []point.Point{g0, g1, c, n, point.New("collector_tick", t)}
}

func TestLineSaysPhaseTimeWorkAndTheHottestAgainstTheirLimits(t *testing.T) {
	d := New(&bytes.Buffer{}, false, time.Second)
	if err := d.Write(tick(time.Now())); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    Status
		want string
	}{
		{Status{Phase: "load", Elapsed: 40 * time.Second, Planned: 90 * time.Second, Iterations: 12,
			Metrics: map[string]float64{"flop_per_s": 52.3e12, "runtime_s": 1.1}},
			"load 40s of 1m30s, 50s left: 12 iterations, 52.3 TFLOP/s; GPU 0 71 °C (slowdown 87 °C); CPU 55 °C (critical 100 °C)"},
		{Status{Phase: "cooldown", Elapsed: 61 * time.Second, Planned: time.Hour, AtMost: true, Iterations: 3, Failed: 1,
			Metrics: map[string]float64{"runtime_s": 2}},
			"cooldown 1m1s (at most 1h0m0s): 3 iterations (1 failed), 2 s per iteration; GPU 0"},
		{Status{Phase: "load", Elapsed: 5 * time.Second, Iterations: 1, Metrics: map[string]float64{"copy_bytes_per_s": 4.1e10, "add_bytes_per_s": 3.9e10}},
			"load 5s: 1 iteration, 39 GB/s add"},
	} {
		got := d.Line(tc.s)
		if !strings.Contains(got, tc.want) {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	if d.Line(Status{}) != "" {
		t.Error("a line between phases")
	}
}

// Off a terminal the display writes a line every interval, and nothing
// after it is stopped.
func TestNotATerminalWritesALineEveryInterval(t *testing.T) {
	var out bytes.Buffer // Run writes from the calling goroutine
	d := New(&out, false, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 280*time.Millisecond)
	defer cancel()
	start := time.Now()
	d.Run(ctx, func() Status { return Status{Phase: "collect", Elapsed: time.Since(start), Planned: time.Second} })
	n := strings.Count(out.String(), "collect ")
	if n < 3 || n > 6 {
		t.Errorf("%d lines in 280 ms at one per 50 ms:\n%s", n, out.String())
	}
	if strings.Contains(out.String(), "\x1b[") {
		t.Error("escape codes written off a terminal")
	}
}

// On a terminal each phase gets its bar, finished when the next begins,
// and log lines written meanwhile come out whole.
func TestTerminalDrawsABarPerPhase(t *testing.T) {
	var out bytes.Buffer
	d := New(&out, true, time.Second)
	log := d.LogWriter()
	ctx, cancel := context.WithTimeout(context.Background(), 900*time.Millisecond)
	defer cancel()
	start := time.Now()
	go func() {
		time.Sleep(500 * time.Millisecond)
		log.Write([]byte("21:00:00 load        repeat dgemm for 1s\n"))
	}()
	// status is also called while the bars render: it must not block.
	d.Run(ctx, func() Status {
		el := time.Since(start)
		if el < 400*time.Millisecond {
			return Status{Phase: "baseline", Elapsed: el, Planned: 400 * time.Millisecond}
		}
		return Status{Phase: "load", Elapsed: el - 400*time.Millisecond, Planned: time.Second, Iterations: 2,
			Metrics: map[string]float64{"flop_per_s": 1.4e9}}
	})
	got := out.String()
	for _, want := range []string{"baseline", "[", "load", "2 iterations, 1.4 GFLOP/s", "repeat dgemm for 1s\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, got)
		}
	}
}

// Off a terminal with a logger, the progress is a record of that logger's
// format, so stderr holds one format (logfmt here) from which a program
// reads the facts by name, units in the names.
func TestWithALoggerProgressIsALogRecord(t *testing.T) {
	var out, logged bytes.Buffer
	d := New(&out, false, 50*time.Millisecond)
	d.SetLogger(slog.New(slog.NewTextHandler(&logged, nil)))
	if err := d.Write(tick(time.Now())); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 280*time.Millisecond)
	defer cancel()
	d.Run(ctx, func() Status {
		return Status{Phase: "load", Elapsed: 40 * time.Second, Planned: 90 * time.Second, Iterations: 12,
			Metrics: map[string]float64{"flop_per_s": 52.3e12}}
	})
	if out.Len() != 0 {
		t.Errorf("human lines written beside the log: %q", out.String())
	}
	lines := strings.Split(strings.TrimSpace(logged.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("%d records in 280 ms at one per 50 ms:\n%s", len(lines), logged.String())
	}
	want := []string{"level=INFO", "msg=progress", "phase=load", "elapsed_s=40", "planned_s=90", "left_s=50",
		"iterations=12", `rate="52.3 TFLOP/s"`, `gpu="GPU 0"`, "gpu_temp_c=71", "gpu_limit=slowdown", "gpu_limit_c=87",
		"cpu=CPU", "cpu_temp_c=55", "cpu_limit=critical", "cpu_limit_c=100"}
	for _, l := range lines {
		if !strings.HasPrefix(l, "time=") {
			t.Errorf("not a logfmt record: %q", l)
		}
		for _, w := range want {
			if !strings.Contains(l, " "+w) {
				t.Errorf("record lacks %s: %q", w, l)
			}
		}
	}
}
