package workloads_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// gpu is a sensor source whose GPU core temperature the test sets, with an
// NVML-style slowdown threshold of 90 °C.
type gpu struct{ milliC atomic.Int64 }

func (g *gpu) Name() string                       { return "test-gpu" }
func (g *gpu) Discover(ctx context.Context) error { return nil }
func (g *gpu) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	p := point.New("gpu", t)
	p.AddTag("gpu", "0").AddTag("uuid", "GPU-test")
	p.AddFloat("temp_c", float64(g.milliC.Load())/1000)
	p.AddFloat("slowdown_c", 90)
	return append(buf, p), nil
}
func (g *gpu) set(c float64) { g.milliC.Store(int64(c * 1000)) }

const guardConfig = `interval: 100ms
alerts:
  rules:
    - name: gpu_near_slowdown
      measurement: gpu
      field: temp_c
      threshold: {op: ">=", value: slowdown_c - 5, margin: 2}
      actions: [pause]
    - name: gpu_at_shutdown
      measurement: gpu
      field: temp_c
      threshold: {op: ">=", value: slowdown_c + 5}
      actions: [stop]
`

func procState(t *testing.T, pid string) byte {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		t.Fatalf("pid %s: %v", pid, err)
	}
	i := strings.LastIndexByte(string(b), ')')
	return b[i+2]
}

func waitState(t *testing.T, pid string, want ...byte) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := procState(t, pid)
		for _, w := range want {
			if s == w {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %s in state %c, want one of %q", pid, s, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The whole guard path with real parts: a rule of the alert engine fires on
// a reading, the engine pauses the runner's job, and the job's real process
// group stops (state T); the rule clears and it continues; a stop rule ends
// it, and the cooldown is still recorded.
func TestGuardPausesResumesAndStopsARealJob(t *testing.T) {
	cfg, err := configs.Parse("guard.yaml", []byte(guardConfig))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := workloads.NewCommand([]string{"sh", "-c", `sleep 300 & echo $!; echo $$; wait`})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	quiet := slog.New(slog.DiscardHandler)
	r, err := workloads.NewRunner(context.Background(), workloads.Options{
		Command: cmd, Config: *workloads.RunnerConfigOf(cfg), Stdout: pw, Logger: quiet,
		Protocol: workloads.Protocol{Load: time.Hour, Cooldown: 500 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	dir := t.TempDir()
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	box := &collectors.Outbox{}
	eng, err := alerts.NewEngine(*alerts.ConfigOf(cfg), alerts.Options{
		Emit: box, OnEvent: r.Event, Logger: quiet, Interval: cfg.Interval,
	})
	if err != nil {
		t.Fatal(err)
	}
	eng.SetJob(r)
	src := &gpu{}
	src.set(40)
	coll := collectors.New(collectors.Options{Interval: cfg.Interval, Host: "test", Logger: quiet, Outbox: box},
		[]collectors.Source{src}, []collectors.Sink{w, r.Latest(), eng})
	meta := &rundir.Meta{ID: "guard-run", Start: time.Now()}

	done := make(chan workloads.Outcome, 1)
	go func() {
		done <- r.Run(context.Background(), workloads.Recording{Collector: coll, RunID: meta.ID, Dir: dir, Meta: meta})
	}()
	sc := bufio.NewScanner(pr)
	var pids []string
	for len(pids) < 2 && sc.Scan() {
		pids = append(pids, sc.Text())
	}
	go io.Copy(io.Discard, pr)
	child, leader := pids[0], pids[1]

	src.set(87) // within 5 °C of slowdown: pause
	waitState(t, leader, 'T')
	waitState(t, child, 'T')
	src.set(86) // above the clearing point (83 °C): still held
	time.Sleep(500 * time.Millisecond)
	if s := procState(t, leader); s != 'T' {
		t.Errorf("resumed at 86 °C, above the hysteresis margin (state %c)", s)
	}
	src.set(80) // cleared: resume
	waitState(t, leader, 'S', 'R')
	waitState(t, child, 'S', 'R')
	src.set(96) // past slowdown + 5: both rules fire, pause then stop; the stop ends the paused job
	var out workloads.Outcome
	select {
	case out = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the stop rule did not end the run")
	}
	eng.Close()
	w.Close()
	if out.Status != workloads.StatusStopped || out.JobStatus == nil || *out.JobStatus != 128+15 {
		t.Errorf("outcome %+v", out)
	}
	if len(workloads.GroupMembers(atoi(t, leader))) != 0 {
		t.Error("job processes left after the stop")
	}
	var phases []string
	for _, p := range meta.Phases {
		phases = append(phases, p.Name)
	}
	if strings.Join(phases, ",") != "load,cooldown" {
		t.Errorf("phases %v", phases)
	}
	var guard []string
	for _, e := range meta.Events {
		if strings.HasPrefix(e.Kind, "guard_") {
			guard = append(guard, e.Kind+"@"+e.Attrs["phase"]+":"+e.Attrs["rule"])
		}
	}
	want := "guard_pause@load:gpu_near_slowdown,guard_resume@load:gpu_near_slowdown," +
		"guard_pause@load:gpu_near_slowdown,guard_stop@load:gpu_at_shutdown"
	if got := strings.Join(guard, ","); got != want {
		t.Errorf("guard events in run.json:\n got %s\nwant %s", got, want)
	}
	run, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, p := range run.Points {
		if p.Measurement == "event" && p.Tag("run") == "guard-run" {
			kinds[p.Tag("kind")]++
		}
	}
	if kinds["guard_pause"] != 2 || kinds["guard_resume"] != 1 || kinds["guard_stop"] != 1 || kinds["alert_fired"] < 2 {
		t.Errorf("event points %v", kinds)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a pid: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}
