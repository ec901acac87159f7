package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
)

func TestCollectStopsCleanlyOnSIGTERM(t *testing.T) {
	testCollectStopsCleanlyOn(t, syscall.SIGTERM)
}

// Without --listen, collect is no node agent but a recording from a
// terminal: a hang-up ends it as SIGTERM does, its records finished.
func TestCollectWithoutListenStopsCleanlyOnSIGHUP(t *testing.T) {
	testCollectStopsCleanlyOn(t, syscall.SIGHUP)
}

func testCollectStopsCleanlyOn(t *testing.T, sig syscall.Signal) {
	bin := heatsinkBinary(t)
	dir := filepath.Join(t.TempDir(), "run")
	cmd := ownState(t, exec.Command(bin, "collect", "--interval", "200ms", "--out", dir))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	// A collect that does not stop must fail the test, not hang it.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("collect after %v: %v\n%s", sig, err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("collect still running 30s after %v\n%s", sig, stderr.String())
	}
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Meta.Status != "interrupted" || run.Meta.End == nil {
		t.Errorf("run.json status %q, end %v; want interrupted with an end time", run.Meta.Status, run.Meta.End)
	}
	ticks := 0
	for _, p := range run.Points {
		if p.Measurement == "collector_tick" {
			ticks++
		}
	}
	// 1.5 s at 5 Hz, minus start-up: every tick up to the signal must be on disk.
	if ticks < 4 {
		t.Errorf("%d ticks recorded before %v, want at least 4", ticks, sig)
	}
	if len(run.BadLines) != 0 {
		t.Errorf("bad lines after a clean stop: %v", run.BadLines)
	}
}

func TestCollectWithoutDestinationIsAnError(t *testing.T) {
	bin := heatsinkBinary(t)
	out, err := exec.Command(bin, "collect", "--duration", "1s").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "nowhere to write") {
		t.Fatalf("err %v, output %s", err, out)
	}
}

func TestBadConfigNamesFileAndLine(t *testing.T) {
	bin := heatsinkBinary(t)
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(cfg, []byte("interval: 1s\nsources:\n  hwmon:\n    sensor_exlude: x\n"), 0o644)
	out, err := exec.Command(bin, "collect", "--config", cfg, "--duration", "1s", "--stdout").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bad.yaml:4") || !strings.Contains(string(out), "sensor_exlude") {
		t.Fatalf("err %v, output %s", err, out)
	}
}

func TestCollectRefusesARunDirectoryThatHoldsARun(t *testing.T) {
	bin := heatsinkBinary(t)
	dir := filepath.Join(t.TempDir(), "run")
	if out, err := exec.Command(bin, "collect", "--interval", "100ms", "--duration", "200ms", "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("first collect: %v\n%s", err, out)
	}
	before, _ := os.ReadFile(filepath.Join(dir, rundir.PointsFile))
	out, err := exec.Command(bin, "collect", "--interval", "100ms", "--duration", "200ms", "--out", dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already holds a run") {
		t.Fatalf("second collect into the same directory: err %v\n%s", err, out)
	}
	after, _ := os.ReadFile(filepath.Join(dir, rundir.PointsFile))
	if string(before) != string(after) {
		t.Error("the refused collect changed the recorded points")
	}
	out, err = exec.Command(bin, "collect", "--duration", "1s", "--stdout", "json").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--stdout=json") {
		t.Errorf("--stdout json: err %v\n%s", err, out)
	}
}

// Off a terminal stderr holds one format: the progress record every 10 s
// and the final summary come out as the log does (logfmt by default, JSON
// with --log-format json), never as human lines between its records.
func TestStderrOffATerminalIsOneLogFormat(t *testing.T) {
	bin := heatsinkBinary(t)
	for _, tc := range []struct {
		format string
		parses func(line string) bool
	}{
		{"auto", func(l string) bool {
			return strings.HasPrefix(l, "time=") && strings.Contains(l, " level=") && strings.Contains(l, " msg=")
		}},
		{"json", func(l string) bool {
			var rec map[string]any
			return json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] != nil && rec["level"] != nil
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			// 11 s: one progress record (every 10 s) before the end.
			cmd := exec.Command(bin, "collect", "--duration", "11s", "--out", filepath.Join(t.TempDir(), "run"), "--log-format", tc.format)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr // a pipe-like buffer: not a terminal
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			out := stderr.String()
			for _, want := range []string{"progress", "collection finished"} {
				if !strings.Contains(out, want) {
					t.Errorf("stderr lacks the %s record:\n%s", want, out)
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if !tc.parses(l) {
					t.Errorf("a line not in the log's %s format: %q", tc.format, l)
				}
			}
		})
	}
}
