package alerts_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/point"
)

// gpuSource is a sensor source whose GPU temperature the test sets.
type gpuSource struct {
	milliC  atomic.Int64
	samples atomic.Int64
	gone    atomic.Bool // fallen off the bus: no point at all
}

func (s *gpuSource) Name() string                       { return "testgpu" }
func (s *gpuSource) Discover(ctx context.Context) error { return nil }
func (s *gpuSource) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	s.samples.Add(1)
	if s.gone.Load() {
		return buf, nil
	}
	p := point.New("gpu", t)
	p.AddTag("gpu", "0")
	p.AddFloat("temp_c", float64(s.milliC.Load())/1000)
	p.AddFloat("slowdown_c", 90)
	return append(buf, p), nil
}

func (s *gpuSource) set(c float64) { s.milliC.Store(int64(c * 1000)) }

// settle waits until the collector has taken n more samples at the current value.
func (s *gpuSource) settle(t *testing.T, n int64) {
	t.Helper()
	want := s.samples.Load() + n
	waitFor(t, "samples", func() bool { return s.samples.Load() >= want })
}

// groupJob is the process-group job the runner gives the guard, reduced to
// the signals: SIGSTOP, SIGCONT, SIGKILL to the whole group.
type groupJob struct {
	pgid    int
	mu      sync.Mutex
	actions []string
}

func (j *groupJob) signal(name string, sig syscall.Signal) error {
	j.mu.Lock()
	j.actions = append(j.actions, name)
	j.mu.Unlock()
	return syscall.Kill(-j.pgid, sig)
}

func (j *groupJob) Pause() error  { return j.signal("pause", syscall.SIGSTOP) }
func (j *groupJob) Resume() error { return j.signal("resume", syscall.SIGCONT) }
func (j *groupJob) Stop() error   { return j.signal("stop", syscall.SIGKILL) }

func (j *groupJob) done() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.actions...)
}

// startGroup starts a shell that runs a child, both in a new process group.
// Its channel yields the shell's exit once.
func startGroup(t *testing.T) (*exec.Cmd, <-chan error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 60 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	waited := make(chan struct{})
	go func() { exited <- cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-waited
	})
	waitFor(t, "the child in the group", func() bool { return len(groupStates(t, cmd.Process.Pid)) == 2 })
	return cmd, exited
}

// groupStates returns the state letter (/proc/PID/stat) of every process of
// the group: R running, S sleeping, T stopped...
func groupStates(t *testing.T, pgid int) map[int]byte {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	states := map[int]byte{}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // exited meanwhile
		}
		s := string(b)
		rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(rest) < 3 {
			continue
		}
		if pg, _ := strconv.Atoi(rest[2]); pg == pgid {
			pid, _ := strconv.Atoi(strings.Fields(s)[0])
			states[pid] = rest[0][0]
		}
	}
	return states
}

func allIn(states map[int]byte, want ...byte) bool {
	if len(states) == 0 {
		return false
	}
	for _, s := range states {
		if !strings.ContainsRune(string(want), rune(s)) {
			return false
		}
	}
	return true
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runGuard drives an engine of the rules through a real collector sampling
// src every 100 ms, with job attached.
func runGuard(t *testing.T, rules string, src *gpuSource, job alerts.Job) *recorder {
	t.Helper()
	rec := &recorder{}
	box := &collectors.Outbox{}
	eng, err := alerts.NewEngine(parseRules(t, rules), alerts.Options{
		Emit:     box,
		OnEvent:  rec.event,
		Logger:   quietLogger(),
		Interval: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	eng.SetJob(job)
	col := collectors.New(collectors.Options{Interval: 100 * time.Millisecond, Host: "n1", Logger: quietLogger(), Outbox: box},
		[]collectors.Source{src}, []collectors.Sink{eng})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- col.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := eng.Close(); err != nil {
			t.Error(err)
		}
	})
	return rec
}

func TestGuardPausesAndResumesARealProcessGroup(t *testing.T) {
	cmd, _ := startGroup(t)
	pgid := cmd.Process.Pid
	job := &groupJob{pgid: pgid}
	src := &gpuSource{}
	src.set(70)
	rec := runGuard(t, `
alerts:
  rules:
    - {name: gpu_hot, measurement: gpu, field: temp_c, for: 200ms,
       threshold: {op: ">=", value: slowdown_c - 5, margin: 2}, actions: [pause]}`, src, job)

	src.settle(t, 5)
	if st := groupStates(t, pgid); !allIn(st, 'S', 'R') {
		t.Fatalf("before any alert the group is %c", st)
	}
	src.set(88) // within 5 °C of the 90 °C slowdown
	waitFor(t, "the group to be stopped", func() bool { return allIn(groupStates(t, pgid), 'T') })

	src.set(84) // below the threshold, not yet past the 2 °C margin: still held
	src.settle(t, 5)
	if st := groupStates(t, pgid); !allIn(st, 'T') {
		t.Fatalf("resumed inside the hysteresis band: %c", st)
	}
	src.set(80)
	waitFor(t, "the group to run again", func() bool { return allIn(groupStates(t, pgid), 'S', 'R') })

	if got := job.done(); !slices.Equal(got, []string{"pause", "resume"}) {
		t.Errorf("job actions %q", got)
	}
	// The event follows the signal: wait for it rather than race it.
	waitFor(t, "the resume event", func() bool { return len(rec.kinds()) >= 4 })
	if kinds, want := rec.kinds(), []string{"alert_fired", "guard_pause", "alert_cleared", "guard_resume"}; !slices.Equal(kinds, want) {
		t.Errorf("events %q, want %q", kinds, want)
	}
}

// A GPU that falls off the bus while its rule holds the job paused sends
// no point again: its alert clears as unknown after ten ticks without one
// and the job runs again, where it used to stay stopped, and heatsink run
// wait on it, for good.
func TestGuardResumesTheJobWhenThePausingSeriesGoesSilent(t *testing.T) {
	cmd, _ := startGroup(t)
	pgid := cmd.Process.Pid
	job := &groupJob{pgid: pgid}
	src := &gpuSource{}
	src.set(88)
	rec := runGuard(t, `
alerts:
  rules:
    - {name: gpu_hot, measurement: gpu, field: temp_c,
       threshold: {op: ">=", value: slowdown_c - 5, margin: 2}, actions: [pause]}`, src, job)
	waitFor(t, "the group to be stopped", func() bool { return allIn(groupStates(t, pgid), 'T') })
	src.gone.Store(true)
	src.settle(t, 5) // half the ten ticks: still held
	if st := groupStates(t, pgid); !allIn(st, 'T') {
		t.Fatalf("resumed %d ticks into the silence: %c", 5, st)
	}
	waitFor(t, "the group to run again", func() bool { return allIn(groupStates(t, pgid), 'S', 'R') })
	waitFor(t, "the resume event", func() bool { return len(rec.kinds()) >= 4 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if kinds, want := []string{rec.events[0].Kind, rec.events[1].Kind, rec.events[2].Kind, rec.events[3].Kind}, []string{"alert_fired", "guard_pause", "alert_cleared", "guard_resume"}; !slices.Equal(kinds, want) {
		t.Errorf("events %q, want %q", kinds, want)
	}
	if m := rec.events[2].Message; !regexp.MustCompile(`no gpu point with temp_c for \d+s: cleared, its state unknown`).MatchString(m) {
		t.Errorf("the clearing says %q", m)
	}
}

func TestGuardStopsARealProcessGroup(t *testing.T) {
	cmd, exited := startGroup(t)
	job := &groupJob{pgid: cmd.Process.Pid}
	src := &gpuSource{}
	src.set(95)
	runGuard(t, `
alerts:
  rules:
    - {name: gpu_critical, measurement: gpu, field: temp_c, threshold: {op: ">=", value: slowdown_c}, actions: [stop]}`, src, job)
	select {
	case err := <-exited:
		if ws, ok := err.(*exec.ExitError); !ok || ws.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("job ended with %v, want killed", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the guard did not stop the job")
	}
}

func TestAJobAttachedWhileAPauseRuleFiresIsPausedAtOnce(t *testing.T) {
	src := &gpuSource{}
	src.set(88)
	rec := &recorder{}
	var log syncBuffer
	eng, err := alerts.NewEngine(parseRules(t, `
alerts:
  rules:
    - {name: gpu_hot, measurement: gpu, field: temp_c, threshold: {op: ">=", value: 85}, actions: [pause]}`),
		alerts.Options{OnEvent: rec.event, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	p, _ := src.Sample(context.Background(), time.Now(), nil)
	eng.Write(p) // fires with no job: not applicable, logged
	if !strings.Contains(log.String(), "no job is attached: not applicable") {
		t.Errorf("log:\n%s", log.String())
	}
	cmd, _ := startGroup(t)
	job := &groupJob{pgid: cmd.Process.Pid}
	eng.SetJob(job)
	waitFor(t, "the group to be stopped", func() bool { return allIn(groupStates(t, cmd.Process.Pid), 'T') })
	src.set(70)
	p, _ = src.Sample(context.Background(), time.Now(), nil)
	eng.Write(p)
	waitFor(t, "the group to run again", func() bool { return allIn(groupStates(t, cmd.Process.Pid), 'S', 'R') })
	if got := job.done(); !slices.Equal(got, []string{"pause", "resume"}) {
		t.Errorf("job actions %q", got)
	}
}

// syncBuffer is a log destination safe for the engine's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
