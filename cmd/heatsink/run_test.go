package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// exitCode runs heatsink to completion and returns its exit status and output.
func exitCode(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := ownState(t, exec.CommandContext(ctx, heatsinkBinary(t), args...))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("heatsink %v: %v", args, err)
	return 0, ""
}

func TestRunProtocolRecordsPhasesIterationsAndEveryTick(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out := exitCode(t, "run", "--workload", "cpu-stream", "--set", "size=1MiB", "--set", "threads=1",
		"--baseline", "2s", "--load", "3s", "--cooldown", "2s", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := run.Meta
	if m.Status != "complete" || m.ExitStatus == nil || *m.ExitStatus != 0 || m.End == nil {
		t.Errorf("run.json status %q, exit status %v, end %v", m.Status, m.ExitStatus, m.End)
	}
	var names []string
	for _, p := range m.Phases {
		names = append(names, p.Name)
		if p.End == nil {
			t.Errorf("phase %s has no end", p.Name)
		}
	}
	if strings.Join(names, ",") != "baseline,load,cooldown" {
		t.Fatalf("phases %v", names)
	}
	its := m.Workload.Iterations
	if m.Workload.Name != "cpu-stream" || len(its) == 0 {
		t.Fatalf("workload %+v", m.Workload)
	}
	for i, it := range its {
		if it.N != i+1 || it.ExitStatus != 0 || it.Metrics["triad_bytes_per_s"] <= 0 || it.Metrics["copy_bytes_per_s"] <= 0 {
			t.Errorf("iteration %+v", it)
		}
	}
	var ticks []time.Time
	iterations, phaseEvents := 0, 0
	for _, p := range run.Points {
		switch {
		case p.Measurement == "collector_tick":
			ticks = append(ticks, p.Time)
		case p.Measurement == "iteration" && p.Tag("run") == m.ID:
			iterations++
		case p.Measurement == "event" && p.Tag("run") == m.ID && strings.HasPrefix(p.Tag("kind"), "phase_"):
			phaseEvents++
		}
	}
	if iterations != len(its) || phaseEvents != 6 {
		t.Errorf("%d iteration points for %d iterations, %d phase events for 3 phases", iterations, len(its), phaseEvents)
	}
	// 1 Hz from the start of the baseline to the end of the cooldown, none missing.
	start, end := m.Phases[0].Start, *m.Phases[2].End
	if len(ticks) < 7 || ticks[0].After(start) || ticks[len(ticks)-1].Before(end) {
		t.Fatalf("ticks %v..%v (%d) do not cover the run %v..%v", ticks[0], ticks[len(ticks)-1], len(ticks), start, end)
	}
	for i := 1; i < len(ticks); i++ {
		if d := ticks[i].Sub(ticks[i-1]); d != time.Second {
			t.Errorf("ticks %v and %v are %v apart", ticks[i-1], ticks[i], d)
		}
	}
}

func TestRunExitsWithTheJobsStatus(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out := exitCode(t, "run", "--out", dir, "--", "sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 7")
	if code != 7 {
		t.Fatalf("exit %d, want the job's 7\n%s", code, out)
	}
	if !strings.Contains(out, "to-stdout") || !strings.Contains(out, "to-stderr") {
		t.Errorf("the job's output is not shown:\n%s", out)
	}
	m, err := rundir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "failed" || m.ExitStatus == nil || *m.ExitStatus != 7 {
		t.Errorf("run.json status %q exit status %v", m.Status, m.ExitStatus)
	}
	for name, want := range map[string]string{"job.stdout": "to-stdout\n", "job.stderr": "to-stderr\n"} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
}

func TestRunGivesTheJobItsRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out := exitCode(t, "run", "--out", dir, "--", "sh", "-c", `echo "$HEATSINK_RUN_ID|$HEATSINK_RUN_DIR|$HEATSINK_ITERATION"`)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	m, err := rundir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "job.stdout"))
	if want := m.ID + "|" + dir + "|1\n"; string(b) != want {
		t.Errorf("the job saw %q, want %q", b, want)
	}
}

func TestRunRefusesBadJobsBeforeAnythingRuns(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(cfg, []byte("interval: 1s\nrunner:\n  hold: 10s\n  tolerance_c: -2\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown workload", []string{"--workload", "stresss"}, []string{`unknown workload "stresss"`, "cpu-stream"}},
		{"unknown parameter", []string{"--workload", "cpu-stream", "--set", "sise=1MiB"}, []string{`unknown parameter "sise"`, "size"}},
		{"bad value", []string{"--workload", "cpu-stream", "--set", "threads=many"}, []string{"threads", "not an integer"}},
		{"out of range", []string{"--workload", "cpu-stream", "--set", "size=1KiB"}, []string{"size", "below the minimum"}},
		{"no =", []string{"--workload", "cpu-stream", "--set", "size"}, []string{`--set "size"`, "key=value"}},
		{"missing command", []string{"--", "heatsink-no-such-command"}, []string{"heatsink-no-such-command", "not found"}},
		{"both", []string{"--workload", "cpu-stream", "--", "true"}, []string{"either"}},
		{"neither", nil, []string{"nothing to run"}},
		{"set without workload", []string{"--set", "a=b", "--", "true"}, []string{"--set"}},
		{"bad cooldown", []string{"--cooldown", "later", "--", "true"}, []string{"--cooldown", "auto"}},
		{"nominal without reference", []string{"--wait-nominal", "--", "true"}, []string{"--wait-nominal", "baseline"}},
		{"bad runner config", []string{"--config", cfg, "--", "true"}, []string{"bad.yaml:4", "runner.tolerance_c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			// Were the job accepted, the hour-long cooldown would show it.
			args := append([]string{"run", "--cooldown", "1h", "--out", dir}, tt.args...)
			t0 := time.Now()
			code, out := exitCode(t, args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the run directory was created (%v): something ran", err)
			}
			if d := time.Since(t0); d > 30*time.Second {
				t.Errorf("took %v: the error came after the baseline", d)
			}
		})
	}
}

// startRun starts heatsink run and returns it with the first line the job
// printed (its shell's pid, i.e. its process group).
func startRun(t *testing.T, args ...string) (*exec.Cmd, int, *strings.Builder) {
	t.Helper()
	cmd := ownState(t, exec.Command(heatsinkBinary(t), args...))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		s, _ := r.ReadString('\n')
		line <- s
		io.Copy(io.Discard, r)
	}()
	select {
	case s := <-line:
		pid, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			t.Fatalf("job printed %q\n%s", s, stderr.String())
		}
		return cmd, pid, &stderr
	case <-time.After(30 * time.Second):
		t.Fatalf("the job printed nothing\n%s", stderr.String())
	}
	return nil, 0, nil
}

func waitExit(t *testing.T, cmd *exec.Cmd, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("heatsink still running after %v", within)
	}
	return 0
}

func TestRunSIGTERMStopsEveryProcessOfTheJob(t *testing.T) {
	testRunSignalStopsEveryProcessOfTheJob(t, syscall.SIGTERM)
}

// A terminal hang-up is no reason to leave run.json "running" and the job
// orphaned: SIGHUP stops the run as SIGTERM does.
func TestRunSIGHUPStopsLikeSIGTERM(t *testing.T) {
	testRunSignalStopsEveryProcessOfTheJob(t, syscall.SIGHUP)
}

// testRunSignalStopsEveryProcessOfTheJob sends sig to heatsink run: the
// job's whole group gets SIGTERM, its 143 is heatsink's exit status, and
// run.json and points.lp are finished.
func testRunSignalStopsEveryProcessOfTheJob(t *testing.T, sig syscall.Signal) {
	dir := filepath.Join(t.TempDir(), "run")
	cmd, pgid, stderr := startRun(t, "run", "--out", dir, "--load", "1h", "--cooldown", "1h", "--",
		"sh", "-c", "sleep 300 & sleep 300 & echo $$; wait")
	if n := len(workloads.GroupMembers(pgid)); n != 3 {
		t.Fatalf("job group %d has %d processes, want 3", pgid, n)
	}
	cmd.Process.Signal(sig)
	if code := waitExit(t, cmd, 30*time.Second); code != 128+15 {
		t.Errorf("exit %d, want the job's 143\n%s", code, stderr)
	}
	if left := workloads.GroupMembers(pgid); len(left) != 0 {
		t.Errorf("job processes left: %v", left)
	}
	m, err := rundir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "interrupted" || m.End == nil || len(m.Phases) != 1 || m.Phases[0].End == nil {
		t.Errorf("run.json status %q, end %v, phases %+v", m.Status, m.End, m.Phases)
	}
	if len(m.Workload.Iterations) != 1 || m.Workload.Iterations[0].ExitStatus != 128+15 {
		t.Errorf("iterations %+v", m.Workload.Iterations)
	}
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var loadEnd bool
	for _, p := range run.Points {
		loadEnd = loadEnd || (p.Measurement == "event" && p.Tag("kind") == "phase_end" && p.Tag("phase") == "load")
	}
	if !loadEnd || len(run.BadLines) > 0 {
		t.Errorf("points flushed: load end event %v, bad lines %v", loadEnd, run.BadLines)
	}
}

func TestRunKillsAJobIgnoringSIGTERMAfterTheGrace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	cmd, pgid, stderr := startRun(t, "run", "--out", dir, "--grace", "1s", "--",
		"sh", "-c", `trap "" TERM; echo $$; sleep 300`)
	t0 := time.Now()
	cmd.Process.Signal(os.Interrupt)
	if code := waitExit(t, cmd, 30*time.Second); code != 128+9 {
		t.Errorf("exit %d, want the job's 137\n%s", code, stderr)
	}
	if d := time.Since(t0); d < time.Second {
		t.Errorf("killed after %v, within the 1s grace", d)
	}
	if left := workloads.GroupMembers(pgid); len(left) != 0 {
		t.Errorf("job processes left: %v", left)
	}
}

func TestRunSecondSignalKillsAtOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	cmd, pgid, stderr := startRun(t, "run", "--out", dir, "--grace", "1h", "--",
		"sh", "-c", `trap "" TERM INT; echo $$; sleep 300`)
	cmd.Process.Signal(os.Interrupt)
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	if code := waitExit(t, cmd, 30*time.Second); code != 128+9 {
		t.Errorf("exit %d, want 137\n%s", code, stderr)
	}
	if left := workloads.GroupMembers(pgid); len(left) != 0 {
		t.Errorf("job processes left: %v", left)
	}
}

func TestWorkloadsListsParameters(t *testing.T) {
	code, out := exitCode(t, "workloads")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, w := range []string{"cpu-stream", "--set size=", "default 64MiB", "--set threads=", "--set ntimes=", "device"} {
		if !strings.Contains(out, w) {
			t.Errorf("listing lacks %q:\n%s", w, out)
		}
	}
}
