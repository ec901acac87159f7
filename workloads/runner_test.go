package workloads

import (
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

var quiet = slog.New(slog.DiscardHandler)

// plant is a first-order thermal model of a CPU package: it heats toward
// hotC while the heater workload runs and cools toward idleC otherwise,
// with time constant tau. Its temperature is what the test source reports,
// so a test controls exactly what the runner sees.
type plant struct {
	mu           sync.Mutex
	t            float64
	idleC, hotC  float64
	tau          time.Duration
	coolTau      time.Duration // 0: tau
	heating      bool
	last         time.Time
	history      []sample
	disableDecay bool
}

type sample struct {
	at time.Time
	c  float64
}

func newPlant(startC, idleC, hotC float64, tau time.Duration) *plant {
	return &plant{t: startC, idleC: idleC, hotC: hotC, tau: tau, last: time.Now()}
}

func (p *plant) setHeating(on bool) {
	p.mu.Lock()
	p.advance(time.Now())
	p.heating = on
	p.mu.Unlock()
}

func (p *plant) advance(now time.Time) {
	dt := now.Sub(p.last)
	p.last = now
	target, tau := p.idleC, p.tau
	if p.coolTau > 0 {
		tau = p.coolTau
	}
	if p.heating {
		target, tau = p.hotC, p.tau
	}
	p.t = target + (p.t-target)*math.Exp(-dt.Seconds()/tau.Seconds())
}

func (p *plant) read(now time.Time) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.advance(now)
	p.history = append(p.history, sample{now, p.t})
	return p.t
}

// firstBelow returns when the reported temperature fell to c or below at or
// after from, and stayed there until until (zero: the end).
func (p *plant) firstBelow(c float64, from, until time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	var since time.Time
	for _, s := range p.history {
		if s.at.Before(from) {
			continue
		}
		if !until.IsZero() && s.at.After(until) {
			break
		}
		if s.c <= c {
			if since.IsZero() {
				since = s.at
			}
		} else {
			since = time.Time{}
		}
	}
	return since
}

// thermalSource reports the plant as an hwmon CPU package sensor, laid out as
// the hwmon source writes it.
type thermalSource struct{ p *plant }

func (s thermalSource) Name() string                       { return "thermal-test" }
func (s thermalSource) Discover(ctx context.Context) error { return nil }
func (s thermalSource) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	p := point.New("hwmon", t)
	p.AddTag("chip", "platform_coretemp_0").AddTag("chip_name", "coretemp").AddTag("sensor", "temp1").
		AddTag("label", "Package id 0").AddTag("class", "cpu_package")
	p.AddFloat("temp_c", s.p.read(time.Now()))
	p.AddFloat("crit_c", 100)
	return append(buf, p), nil
}

// heater is a built-in workload that heats the plant while an iteration
// runs; each iteration takes step and passes Checkpoint every 10 ms.
type heater struct {
	Typed[struct{}]
	p     *plant
	step  time.Duration
	iters atomic.Int64
	ticks atomic.Int64 // Checkpoint passes, to see a pause take hold
}

func (h *heater) Name() string    { return "heater" }
func (h *heater) Summary() string { return "heats the test plant" }
func (h *heater) Start(ctx context.Context, v Values) (Job, error) {
	return h, nil
}
func (h *heater) Iterate(ctx context.Context) (Result, error) {
	if h.p != nil {
		h.p.setHeating(true)
		defer h.p.setHeating(false)
	}
	end := time.Now().Add(h.step)
	for time.Now().Before(end) {
		if err := Checkpoint(ctx); err != nil {
			return Result{}, err
		}
		h.ticks.Add(1)
		time.Sleep(10 * time.Millisecond)
	}
	h.iters.Add(1)
	return Result{Work: 1, WorkUnit: "steps", Metrics: map[string]float64{"steps_per_s": 1 / h.step.Seconds()}}, nil
}
func (h *heater) Close() error { return nil }

// rig records a run as heatsink run does: a real collector with a run
// directory writer and the runner's store of latest values as sinks.
type rig struct {
	dir  string
	meta *rundir.Meta
	w    *rundir.Writer
	coll *collectors.Collector
}

func newRig(t *testing.T, r *Runner, interval time.Duration, srcs ...collectors.Source) *rig {
	t.Helper()
	dir := t.TempDir()
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta := &rundir.Meta{ID: "test-run", Host: "test", Start: time.Now(), IntervalS: interval.Seconds(), Status: "running"}
	coll := collectors.New(collectors.Options{Interval: interval, Host: "test", Logger: quiet}, srcs, []collectors.Sink{w, r.Latest()})
	return &rig{dir: dir, meta: meta, w: w, coll: coll}
}

// run performs the protocol and closes the run as the CLI does.
func (g *rig) run(t *testing.T, ctx context.Context, r *Runner) (Outcome, *rundir.Run) {
	t.Helper()
	out := r.Run(ctx, Recording{Collector: g.coll, RunID: g.meta.ID, Dir: g.dir, Meta: g.meta})
	if out.Err != nil {
		t.Errorf("run: %v", out.Err)
	}
	end := time.Now()
	g.meta.End, g.meta.Status = &end, out.Status
	if err := rundir.WriteMeta(g.dir, g.meta); err != nil {
		t.Fatal(err)
	}
	if err := g.w.Close(); err != nil {
		t.Fatal(err)
	}
	run, err := rundir.Load(g.dir)
	if err != nil {
		t.Fatal(err)
	}
	return out, run
}

func testConfig() RunnerConfig {
	return RunnerConfig{Hold: 500 * time.Millisecond, CooldownMax: 30 * time.Second, NominalMax: 30 * time.Second, Grace: 2 * time.Second}
}

func newTestRunner(t *testing.T, o Options) *Runner {
	t.Helper()
	o.Logger = quiet
	r, err := NewRunner(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func phaseNames(m *rundir.Meta) []string {
	var out []string
	for _, p := range m.Phases {
		out = append(out, p.Name)
	}
	return out
}

func events(run *rundir.Run, kind string) []point.Point {
	var out []point.Point
	for _, p := range run.Points {
		if p.Measurement == "event" && p.Tag("kind") == kind {
			out = append(out, p)
		}
	}
	return out
}

func TestRunRecordsPhasesIterationsAndEveryTick(t *testing.T) {
	const interval = time.Second
	v, err := CPUStream{}.Decode(map[string]string{"size": "1MiB", "ntimes": "3", "threads": "1"})
	if err != nil {
		t.Fatal(err)
	}
	r := newTestRunner(t, Options{Workload: CPUStream{}, Params: v, Config: testConfig(),
		Protocol: Protocol{Baseline: time.Second, Load: 1500 * time.Millisecond, Cooldown: time.Second}})
	g := newRig(t, r, interval)
	out, run := g.run(t, context.Background(), r)

	if out.Status != StatusComplete || out.JobStatus == nil || *out.JobStatus != 0 {
		t.Fatalf("outcome %+v", out)
	}
	m := run.Meta
	if got := strings.Join(phaseNames(m), ","); got != "baseline,load,cooldown" {
		t.Fatalf("phases %s", got)
	}
	for i, p := range m.Phases {
		if p.End == nil || p.End.Before(p.Start) {
			t.Fatalf("phase %s has no proper end: %+v", p.Name, p)
		}
		if i > 0 && p.Start.Before(*m.Phases[i-1].End) {
			t.Errorf("phase %s starts before %s ends", p.Name, m.Phases[i-1].Name)
		}
	}
	for name, want := range map[string]time.Duration{"baseline": time.Second, "cooldown": time.Second} {
		p, _ := m.PhaseNamed(name)
		if d := p.End.Sub(p.Start); d < want || d > want+2*time.Second {
			t.Errorf("%s lasted %v, want %v", name, d, want)
		}
	}
	load, _ := m.PhaseNamed("load")
	if d := load.End.Sub(load.Start); d < 1500*time.Millisecond {
		t.Errorf("load lasted %v, less than --load 1.5s", d)
	}

	its := m.Workload.Iterations
	if m.Workload.Name != "cpu-stream" || m.Workload.Params["size"] != "1048576" || len(its) != out.Iterations || len(its) < 2 {
		t.Fatalf("workload %+v, %d iterations (outcome %d)", m.Workload, len(its), out.Iterations)
	}
	for i, it := range its {
		if it.N != i+1 || it.ExitStatus != 0 || it.RuntimeS <= 0 || it.Metrics["triad_bytes_per_s"] <= 0 || it.Metrics["work_bytes"] <= 0 {
			t.Errorf("iteration %+v", it)
		}
		if it.Start.Before(load.Start) || it.End.After(*load.End) {
			t.Errorf("iteration %d [%v, %v] outside the load phase", it.N, it.Start, it.End)
		}
	}
	// The last iteration started before --load had passed; none after.
	if last := its[len(its)-1]; last.Start.Sub(load.Start) >= 1500*time.Millisecond {
		t.Errorf("iteration %d started %v into the load, after --load", last.N, last.Start.Sub(load.Start))
	}

	// Points: every iteration, every phase boundary, every tick.
	var iterPts, ticks []point.Point
	for _, p := range run.Points {
		switch p.Measurement {
		case "iteration":
			iterPts = append(iterPts, p)
		case "collector_tick":
			ticks = append(ticks, p)
		}
	}
	if len(iterPts) != len(its) {
		t.Errorf("%d iteration points for %d iterations", len(iterPts), len(its))
	}
	for _, p := range iterPts {
		if p.Tag("run") != "test-run" || p.Tag("workload") != "cpu-stream" {
			t.Errorf("iteration point tags %v", p.Tags)
		}
		if v, ok := p.Float("triad_bytes_per_s"); !ok || v <= 0 {
			t.Errorf("iteration point without triad rate: %v", p)
		}
	}
	if n := len(events(run, "phase_start")); n != 3 {
		t.Errorf("%d phase_start events", n)
	}
	if n := len(events(run, "phase_end")); n != 3 {
		t.Errorf("%d phase_end events", n)
	}
	if n, e := len(events(run, "iteration_start")), len(events(run, "iteration_end")); n != len(its) || e != len(its) {
		t.Errorf("%d iteration_start and %d iteration_end events for %d iterations", n, e, len(its))
	}
	checkTicksCover(t, ticks, m.Phases[0].Start, *m.Phases[len(m.Phases)-1].End, interval)
}

// checkTicksCover asserts one tick per interval from the start of the run to
// its end, with none missing.
func checkTicksCover(t *testing.T, ticks []point.Point, start, end time.Time, iv time.Duration) {
	t.Helper()
	if len(ticks) == 0 {
		t.Fatal("no collector ticks")
	}
	if first := ticks[0].Time; first.After(start) {
		t.Errorf("first tick %v after the start", first.Sub(start))
	}
	if last := ticks[len(ticks)-1].Time; last.Before(end) {
		t.Errorf("last tick %v before the end", end.Sub(last))
	}
	for i := 1; i < len(ticks); i++ {
		if d := ticks[i].Time.Sub(ticks[i-1].Time); d != iv {
			t.Errorf("ticks %v and %v are %v apart, want %v", ticks[i-1].Time, ticks[i].Time, d, iv)
		}
	}
}

func TestAutoCooldownEndsWhenTemperatureIsBackForTheHoldTime(t *testing.T) {
	const interval = 100 * time.Millisecond
	pl := newPlant(40, 40, 70, time.Second)
	h := &heater{p: pl, step: 300 * time.Millisecond}
	cfg := testConfig()
	r := newTestRunner(t, Options{Workload: h, Config: cfg,
		Protocol: Protocol{Baseline: time.Second, Load: 1500 * time.Millisecond, CooldownAuto: true}})
	g := newRig(t, r, interval, thermalSource{pl})
	out, run := g.run(t, context.Background(), r)
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	load, _ := run.Meta.PhaseNamed("load")
	cool, ok := run.Meta.PhaseNamed("cooldown")
	if !ok || cool.End == nil {
		t.Fatalf("no cooldown phase: %+v", run.Meta.Phases)
	}
	// Baseline mean is 40 °C exactly, so near baseline means <= 42 °C.
	back := pl.firstBelow(40+DefaultToleranceC, *load.End, time.Time{})
	if back.IsZero() {
		t.Fatal("the plant never cooled to 42 °C")
	}
	if cool.End.Before(back.Add(cfg.Hold)) {
		t.Errorf("cooldown ended %v after the load, before the temperature had been back for the hold time (back at %v)",
			cool.End.Sub(*load.End), back.Sub(*load.End))
	}
	if late := cool.End.Sub(back.Add(cfg.Hold)); late > 2*time.Second {
		t.Errorf("cooldown ended %v after the temperature had been back for the hold time", late)
	}
	ends := events(run, "phase_end")
	if msg, _ := ends[len(ends)-1].Field("message"); !strings.Contains(msg.StringV(), "near baseline") {
		t.Errorf("cooldown end message %q", msg.StringV())
	}
	// The plant really heated: the run's points show the load.
	var peak float64
	for _, p := range run.Points {
		if v, ok := p.Float("temp_c"); ok && p.Measurement == "hwmon" {
			peak = max(peak, v)
		}
	}
	if peak < 55 {
		t.Errorf("peak %.1f °C: the load did not heat the plant", peak)
	}
}

func TestAutoCooldownGivesUpAtItsMaximum(t *testing.T) {
	pl := newPlant(40, 40, 70, 500*time.Millisecond)
	pl.coolTau = time.Hour // it never cools
	h := &heater{p: pl, step: 200 * time.Millisecond}
	cfg := testConfig()
	cfg.CooldownMax = 1500 * time.Millisecond
	r := newTestRunner(t, Options{Workload: h, Config: cfg,
		Protocol: Protocol{Baseline: 500 * time.Millisecond, Load: time.Second, CooldownAuto: true}})
	g := newRig(t, r, 100*time.Millisecond, thermalSource{pl})
	_, run := g.run(t, context.Background(), r)
	cool, ok := run.Meta.PhaseNamed("cooldown")
	if !ok || cool.End == nil {
		t.Fatalf("phases %+v", run.Meta.Phases)
	}
	if d := cool.End.Sub(cool.Start); d < cfg.CooldownMax || d > cfg.CooldownMax+3*time.Second {
		t.Errorf("cooldown lasted %v, want its maximum %v", d, cfg.CooldownMax)
	}
	ends := events(run, "phase_end")
	msg, _ := ends[len(ends)-1].Field("message")
	if s := msg.StringV(); !strings.Contains(s, "not near baseline") || !strings.Contains(s, "class=cpu_package") {
		t.Errorf("cooldown end message %q should say which temperature is not back", s)
	}
}

func TestWaitNominalHoldsTheLoadUntilUnderTheLimits(t *testing.T) {
	pl := newPlant(60, 40, 70, time.Second) // still hot from a previous run
	h := &heater{p: pl, step: 100 * time.Millisecond}
	cfg := testConfig()
	cfg.Hold = 300 * time.Millisecond
	cfg.Nominal = []Limit{{Selector: Selector{Measurement: "hwmon", Field: "temp_c", Tags: map[string]string{"class": "cpu_.*"}}, MaxC: 45}}
	r := newTestRunner(t, Options{Workload: h, Config: cfg, Protocol: Protocol{WaitNominal: true}})
	g := newRig(t, r, 100*time.Millisecond, thermalSource{pl})
	out, run := g.run(t, context.Background(), r)
	if out.Status != StatusComplete || out.Iterations != 1 {
		t.Fatalf("outcome %+v", out)
	}
	if got := strings.Join(phaseNames(run.Meta), ","); got != "wait_nominal,load" {
		t.Fatalf("phases %s", got)
	}
	load, _ := run.Meta.PhaseNamed("load")
	under := pl.firstBelow(45, run.Meta.Phases[0].Start, load.Start)
	if under.IsZero() || load.Start.Before(under.Add(cfg.Hold)) {
		t.Errorf("load started at %v, before the plant had been under 45 °C for %v (from %v)", load.Start, cfg.Hold, under)
	}
}

func TestWaitNominalNeedsAReference(t *testing.T) {
	_, err := NewRunner(context.Background(), Options{Workload: &heater{}, Protocol: Protocol{WaitNominal: true}})
	if err == nil || !strings.Contains(err.Error(), "--wait-nominal") {
		t.Errorf("err %v", err)
	}
}

func TestFailingCommandEndsTheLoadAndPropagatesItsStatus(t *testing.T) {
	c, err := NewCommand([]string{"sh", "-c", `echo "try $HEATSINK_ITERATION"; echo oops >&2; exit 3`})
	if err != nil {
		t.Fatal(err)
	}
	r := newTestRunner(t, Options{Command: c, Config: testConfig(),
		Protocol: Protocol{Load: time.Minute, Cooldown: 300 * time.Millisecond}})
	g := newRig(t, r, 100*time.Millisecond)
	out, run := g.run(t, context.Background(), r)
	if out.Status != StatusFailed || out.JobStatus == nil || *out.JobStatus != 3 || out.Iterations != 1 {
		t.Fatalf("outcome %+v", out)
	}
	if run.Meta.ExitStatus == nil || *run.Meta.ExitStatus != 3 {
		t.Errorf("run.json exit_status %v", run.Meta.ExitStatus)
	}
	if got := strings.Join(phaseNames(run.Meta), ","); got != "load,cooldown" {
		t.Errorf("phases %s: the cooldown is still recorded after a failure", got)
	}
	if it := run.Meta.Workload.Iterations; len(it) != 1 || it[0].ExitStatus != 3 {
		t.Errorf("iterations %+v", it)
	}
	stdout, _ := os.ReadFile(filepath.Join(g.dir, "job.stdout"))
	stderr, _ := os.ReadFile(filepath.Join(g.dir, "job.stderr"))
	if string(stdout) != "try 1\n" || string(stderr) != "oops\n" {
		t.Errorf("job.stdout %q, job.stderr %q", stdout, stderr)
	}
}

func TestCommandGetsTheRunInItsEnvironment(t *testing.T) {
	c, err := NewCommand([]string{"sh", "-c", `echo "$HEATSINK_RUN_ID|$HEATSINK_RUN_DIR|$HEATSINK_ITERATION"`})
	if err != nil {
		t.Fatal(err)
	}
	r := newTestRunner(t, Options{Command: c, Config: testConfig()})
	g := newRig(t, r, 100*time.Millisecond)
	out, run := g.run(t, context.Background(), r)
	if out.Status != StatusComplete || out.Iterations != 1 {
		t.Fatalf("outcome %+v", out)
	}
	got, _ := os.ReadFile(filepath.Join(g.dir, "job.stdout"))
	if want := "test-run|" + g.dir + "|1\n"; string(got) != want {
		t.Errorf("job saw %q, want %q", got, want)
	}
	if w := run.Meta.Workload; w.Name != "sh" || len(w.Command) != 3 {
		t.Errorf("run.json workload %+v", w)
	}
}

func TestInterruptStopsTheJobAndSkipsTheCooldown(t *testing.T) {
	c, err := NewCommand([]string{"sh", "-c", `sleep 300 & echo $$; wait`})
	if err != nil {
		t.Fatal(err)
	}
	out := newLines()
	r := newTestRunner(t, Options{Command: c, Config: testConfig(), Stdout: out,
		Protocol: Protocol{Load: time.Hour, Cooldown: time.Hour}})
	g := newRig(t, r, 100*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	leader := make(chan int, 1)
	go func() {
		pid, _ := strconv.Atoi(out.next(t))
		leader <- pid
		cancel()
	}()
	res, run := g.run(t, ctx, r)
	if res.Status != StatusInterrupted || res.JobStatus == nil || *res.JobStatus != 128+15 {
		t.Fatalf("outcome %+v", res)
	}
	if got := strings.Join(phaseNames(run.Meta), ","); got != "load" {
		t.Errorf("phases %s", got)
	}
	if p := run.Meta.Phases[0]; p.End == nil {
		t.Error("the interrupted load has no end in run.json")
	}
	if pgid := <-leader; pgid == 0 {
		t.Error("no leader pid")
	} else if left := GroupMembers(pgid); len(left) != 0 {
		t.Errorf("job processes left in group %d: %v", pgid, left)
	}
}

func TestGuardPausesABuiltinWorkloadWithinAnIteration(t *testing.T) {
	h := &heater{step: 2 * time.Second}
	r := newTestRunner(t, Options{Workload: h, Config: testConfig()})
	g := newRig(t, r, 100*time.Millisecond)
	done := make(chan struct{})
	var res Outcome
	var run *rundir.Run
	go func() {
		defer close(done)
		res, run = g.run(t, context.Background(), r)
	}()
	for h.ticks.Load() < 5 {
		time.Sleep(10 * time.Millisecond)
	}
	r.Pause()
	time.Sleep(100 * time.Millisecond) // let the checkpoint in progress finish
	held := h.ticks.Load()
	time.Sleep(time.Second)
	if now := h.ticks.Load(); now != held {
		t.Errorf("the workload went on while paused: %d checkpoints -> %d", held, now)
	}
	r.Resume()
	<-done
	if res.Status != StatusComplete || len(run.Meta.Workload.Iterations) != 1 {
		t.Fatalf("outcome %+v", res)
	}
	it := run.Meta.Workload.Iterations[0]
	if p := it.Metrics["paused_s"]; p < 0.9 || p > it.RuntimeS {
		t.Errorf("paused_s %.2f in an iteration of %.2fs, want about 1.1", p, it.RuntimeS)
	}
}

func TestGuardPausesAndStopsACommandGroup(t *testing.T) {
	c, err := NewCommand([]string{"sh", "-c", `sleep 300 & echo $!; echo $$; wait`})
	if err != nil {
		t.Fatal(err)
	}
	out := newLines()
	r := newTestRunner(t, Options{Command: c, Config: testConfig(), Stdout: out,
		Protocol: Protocol{Load: time.Hour, Cooldown: 500 * time.Millisecond}})
	g := newRig(t, r, 100*time.Millisecond)
	done := make(chan struct{})
	var res Outcome
	var run *rundir.Run
	go func() {
		defer close(done)
		res, run = g.run(t, context.Background(), r)
	}()
	child, leader := out.next(t), out.next(t)
	r.Event(rundir.Event{Kind: "guard_pause", Message: "test rule fired"})
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []string{child, leader} {
		waitProcState(t, pid, 'T')
	}
	r.Resume()
	for _, pid := range []string{child, leader} {
		waitProcState(t, pid, 'S')
	}
	r.Pause()
	waitProcState(t, leader, 'T')
	r.Stop() // while paused
	<-done
	if res.Status != StatusStopped || res.JobStatus == nil || *res.JobStatus != 128+15 {
		t.Fatalf("outcome %+v", res)
	}
	if got := strings.Join(phaseNames(run.Meta), ","); got != "load,cooldown" {
		t.Errorf("phases %s: a stopped load is still followed by its cooldown", got)
	}
	var kinds []string
	for _, e := range run.Meta.Events {
		kinds = append(kinds, e.Kind+"@"+e.Attrs["phase"])
	}
	if got := strings.Join(kinds, ","); got != "guard_pause@load" {
		t.Errorf("run.json events %s", got)
	}
	if n := len(events(run, "guard_pause")); n != 1 {
		t.Errorf("%d guard_pause event points", n)
	}
}

func waitProcState(t *testing.T, pid string, want byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			t.Fatalf("pid %s: %v", pid, err)
		}
		st, _ := parseProcStat(b)
		if st.state == want || (want == 'S' && st.state == 'R') {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %s in state %c, want %c", pid, st.state, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStopBeforeTheLoadRunsNothing(t *testing.T) {
	h := &heater{step: 100 * time.Millisecond}
	r := newTestRunner(t, Options{Workload: h, Config: testConfig(),
		Protocol: Protocol{Baseline: time.Hour, Load: time.Second, Cooldown: time.Hour}})
	g := newRig(t, r, 100*time.Millisecond)
	go func() {
		time.Sleep(300 * time.Millisecond)
		r.Stop()
	}()
	res, run := g.run(t, context.Background(), r)
	if res.Status != StatusStopped || res.JobStatus != nil || h.iters.Load() != 0 {
		t.Fatalf("outcome %+v, %d iterations ran", res, h.iters.Load())
	}
	if got := strings.Join(phaseNames(run.Meta), ","); got != "baseline" {
		t.Errorf("phases %s", got)
	}
}

func TestNewRunnerRefusesBadProtocols(t *testing.T) {
	c, _ := NewCommand([]string{"true"})
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no job", Options{}, "either"},
		{"two jobs", Options{Workload: &heater{}, Command: c}, "either"},
		{"negative", Options{Workload: &heater{}, Protocol: Protocol{Load: -time.Second}}, "negative"},
		{"both cooldowns", Options{Workload: &heater{}, Protocol: Protocol{Cooldown: time.Second, CooldownAuto: true}}, "auto"},
		{"bad config", Options{Workload: &heater{}, Config: RunnerConfig{ToleranceC: -1}}, "tolerance_c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRunner(context.Background(), tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestParseCooldown(t *testing.T) {
	tests := []struct {
		in   string
		d    time.Duration
		auto bool
		bad  bool
	}{
		{"", 0, false, false}, {"auto", 0, true, false}, {"90s", 90 * time.Second, false, false},
		{"-1s", 0, false, true}, {"soon", 0, false, true}, {"Auto", 0, false, true},
	}
	for _, tt := range tests {
		d, auto, err := ParseCooldown(tt.in)
		if (err != nil) != tt.bad || d != tt.d || auto != tt.auto {
			t.Errorf("ParseCooldown(%q) = %v, %v, %v", tt.in, d, auto, err)
		}
	}
}

func TestAJobHeldByTheGuardDoesNotStart(t *testing.T) {
	h := &heater{step: 50 * time.Millisecond}
	r := newTestRunner(t, Options{Workload: h, Config: testConfig(), Protocol: Protocol{Baseline: 200 * time.Millisecond}})
	g := newRig(t, r, 100*time.Millisecond)
	r.Pause() // a pause rule fired during the baseline
	done := make(chan struct{})
	var run *rundir.Run
	go func() {
		defer close(done)
		_, run = g.run(t, context.Background(), r)
	}()
	time.Sleep(time.Second)
	if n := h.iters.Load(); n != 0 {
		t.Fatalf("%d iterations ran while the guard held the job", n)
	}
	resumed := time.Now()
	r.Resume()
	<-done
	load, ok := run.Meta.PhaseNamed("load")
	if !ok || load.Start.Before(resumed) || h.iters.Load() != 1 {
		t.Errorf("load phase %+v (resumed at %v), %d iterations", load, resumed, h.iters.Load())
	}
}

func TestAPanickingWorkloadFailsItsIteration(t *testing.T) {
	r := newTestRunner(t, Options{Workload: panicky{}, Config: testConfig()})
	g := newRig(t, r, 100*time.Millisecond)
	out, run := g.run(t, context.Background(), r)
	if out.Status != StatusFailed || out.JobStatus == nil || *out.JobStatus != 1 {
		t.Fatalf("outcome %+v", out)
	}
	if it := run.Meta.Workload.Iterations; len(it) != 1 || !strings.Contains(it[0].Error, "panicked: boom") {
		t.Errorf("iterations %+v", it)
	}
}

type panicky struct{ Typed[struct{}] }

func (panicky) Name() string                                 { return "panicky" }
func (panicky) Summary() string                              { return "panics" }
func (p panicky) Start(context.Context, Values) (Job, error) { return p, nil }
func (panicky) Iterate(ctx context.Context) (Result, error)  { panic("boom") }
func (panicky) Close() error                                 { return nil }

func TestRepeatRunsTheJobThatManyTimesAndBaselineIsReturned(t *testing.T) {
	pl := newPlant(40, 40, 70, time.Second)
	h := &heater{p: pl, step: 100 * time.Millisecond}
	r := newTestRunner(t, Options{Workload: h, Config: testConfig(),
		Protocol: Protocol{Baseline: 500 * time.Millisecond, Repeat: 3}})
	g := newRig(t, r, 100*time.Millisecond, thermalSource{pl})
	out, run := g.run(t, context.Background(), r)
	if out.Status != StatusComplete || out.Iterations != 3 || len(run.Meta.Workload.Iterations) != 3 {
		t.Fatalf("outcome %+v, %d iterations recorded; want 3", out, len(run.Meta.Workload.Iterations))
	}
	if len(out.Baseline) != 1 {
		t.Fatalf("baseline %v, want the one watched temperature", out.Baseline)
	}
	for k, v := range out.Baseline {
		if math.Abs(v-40) > 0.5 {
			t.Errorf("baseline %s = %.2f, want about 40", k, v)
		}
	}
}

func TestWaitNominalWaitsForAReferenceFromAnotherRun(t *testing.T) {
	pl := newPlant(40, 40, 70, time.Second)
	h := &heater{p: pl, step: 100 * time.Millisecond}
	cfg := testConfig()
	cfg.Hold = 300 * time.Millisecond
	first := newTestRunner(t, Options{Workload: &heater{step: 10 * time.Millisecond}, Config: cfg, Protocol: Protocol{Baseline: 300 * time.Millisecond}})
	g0 := newRig(t, first, 100*time.Millisecond, thermalSource{pl})
	out0, _ := g0.run(t, context.Background(), first)
	if len(out0.Baseline) != 1 {
		t.Fatalf("first run's baseline %v", out0.Baseline)
	}
	pl.mu.Lock()
	pl.t = 60 // hot again, as after an evaluation
	pl.mu.Unlock()
	r := newTestRunner(t, Options{Workload: h, Config: cfg, Protocol: Protocol{WaitNominal: true, Reference: out0.Baseline}})
	g := newRig(t, r, 100*time.Millisecond, thermalSource{pl})
	out, run := g.run(t, context.Background(), r)
	if out.Status != StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	load, _ := run.Meta.PhaseNamed("load")
	back := pl.firstBelow(40+DefaultToleranceC, run.Meta.Phases[0].Start, load.Start)
	if back.IsZero() || load.Start.Before(back.Add(cfg.Hold)) {
		t.Errorf("load started at %v, before the plant was back within tolerance of 40 °C for %v (from %v)", load.Start, cfg.Hold, back)
	}
}
