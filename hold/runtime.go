package hold

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// Switch is the job as a hold acts on it: Throttle(true) pauses it
// (SIGSTOP to a command's process group; a built-in workload waits at its
// next workloads.Checkpoint, between kernel launches or passes),
// Throttle(false) lets it run. workloads.Runner is one.
type Switch interface {
	Throttle(held bool) error
}

// RunClock is a Switch that times the job: Ran is how long it has really
// run, not held, on a clock that stops once a pause has taken effect (a
// built-in workload parked at a Checkpoint with nothing queued on the GPU)
// and that the guard's pause stops too. workloads.Runner is one. The duty
// cycle reads each period's run from it and carries the difference to the
// duty into the next period; a Switch without it is timed by its Throttle
// calls, as if it stopped at once and nothing else held it.
type RunClock interface {
	Ran() time.Duration
}

// Config is a hold on a running job.
type Config struct {
	Target Target
	// Model is the component's model; nil holds with the plain pause and
	// NoModel says why.
	Model   *Model
	NoModel string
	// FixedDuty, when set, runs the job at that duty instead of the
	// controller's (no model needed), judged against the set point all
	// the same: the best fixed duty a benchmark bisects for.
	FixedDuty *float64
	// IntervalS is the sampling interval: the controller steps once a tick.
	IntervalS float64
	// Free is the free run's record (FreeRun, FreeWorkPerS...), copied
	// into the summary for the report's throughput against free running.
	Free rundir.Hold
	// Running says the job was running free when the hold started (a
	// rule switched it on mid-load).
	Running bool
	// Builtin says the job is a built-in workload, paced at its own gate
	// between kernels of a few milliseconds (a paced DGEMM's row blocks):
	// with a fast part the duty cycle then runs at builtinPeriodS. A
	// command's GPU work runs on through a SIGSTOP to the end of its
	// kernel, so a shorter period than maxFastPeriodS buys it nothing.
	Builtin bool
	// Period, when positive, is the duty cycle's period instead of the
	// one the model gives (heatsink run --hold-period).
	Period time.Duration
	Switch Switch
	RunID  string
	// Event records a run event (the runner's Event).
	Event func(rundir.Event)
	// Record, when set, is given the summary as the hold stops, for
	// run.json.
	Record func(rundir.Hold)
	Logger *slog.Logger
}

// Runtime is a hold while a job runs: a collector sink that takes each
// tick's hottest reading of the component, steps the controller and
// records a hold point, and the duty cycle that pauses and resumes the job
// between ticks. Start and Stop bracket the load phase.
type Runtime struct {
	cfg    Config
	period time.Duration

	mu     sync.Mutex
	emit   func(...point.Point)
	ctrl   *Controller
	active bool
	duty   float64
	start  time.Time
	stopAt time.Time
	cancel context.CancelFunc
	done   chan struct{}
	ranS   float64 // time the job ran under the duty cycle
	mode   Mode
	fell   string
	times  []float64 // since start, s
	reads  []float64
	// The held GPU's NVML utilisation, each tick's: over the load, and
	// over the ticks the job did not run at all (lastRanS: ranS at the
	// last tick, to tell them).
	util     []float64
	heldUtil []float64
	lastTick time.Time
	lastRan  time.Duration
	clock    RunClock // the job's, from Start
	// unread counts the ticks in a row without a reading of the
	// component; freed says the plain pause let the job run for it.
	unread int
	freed  bool
}

// unreadTicks is how many ticks without a reading of the component the
// plain pause keeps its last decision before it lets the job run. At the
// load's start that decision is "held" (the first reading is to be the
// idle): a component no source reads (--hold gpu_core on a node without
// NVML, a GPU fallen off the bus) would keep the job stopped for good and
// its load phase would never end. A hold cannot protect what it cannot
// read; the alert rules still act on what is read.
const unreadTicks = 3

// New checks cfg and returns a hold that does nothing until Start.
func NewRuntime(cfg Config) (*Runtime, error) {
	if cfg.Switch == nil {
		return nil, fmt.Errorf("hold %s: no job to act on", cfg.Target)
	}
	if cfg.IntervalS <= 0 {
		cfg.IntervalS = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Event == nil {
		cfg.Event = func(rundir.Event) {}
	}
	if _, err := New(Options{SetC: cfg.Target.SetC, Model: cfg.Model, IntervalS: cfg.IntervalS}); err != nil {
		return nil, fmt.Errorf("hold %s: %w", cfg.Target, err)
	}
	period := PeriodFor(cfg.Model, cfg.IntervalS)
	if d := cfg.FixedDuty; d != nil {
		if !(*d >= 0 && *d <= 1) {
			return nil, fmt.Errorf("hold %s: fixed duty %v must be from 0 to 1", cfg.Target, *d)
		}
		if cfg.Model == nil {
			period = time.Duration(math.Min(maxFastPeriodS, cfg.IntervalS) * float64(time.Second))
		}
	}
	if cfg.Builtin && (cfg.FixedDuty != nil || (cfg.Model != nil && cfg.Model.FastC >= 1)) {
		period = min(period, time.Duration(builtinPeriodS*float64(time.Second)))
	}
	if cfg.Period > 0 {
		period = cfg.Period
	}
	return &Runtime{cfg: cfg, period: period, emit: func(...point.Point) {}}, nil
}

// PeriodFor is the duty cycle's period for a model. With a fast part it is
// at most 0.05 s: a GPU die follows its power within a fraction of a
// second, quicker than a 1 Hz fit can show, so the fitted τ_fast (3.5 s on
// the H100 of 2026-11-28, whose readings swung 50 ↔ 63 °C at a 0.7 s period
// because the die's real lag is about 0.2 s) is no guide to the ripple;
// 0.05 s keeps it near 1 °C there. A fitted τ_fast under 0.25 s shortens
// the period further, to a fifth of it. A plant with no fast part (a
// coolant) gets a twentieth of τ, at most the interval. The plain pause
// acts once a tick.
func PeriodFor(m *Model, intervalS float64) time.Duration {
	p := intervalS
	switch {
	case m == nil:
	case m.FastC >= 1 && m.TauFastS > 0:
		p = math.Max(0.01, math.Min(maxFastPeriodS, m.TauFastS/5))
	case m.FastC >= 1:
		p = maxFastPeriodS
	default:
		p = math.Max(0.05, m.TauS/20)
	}
	return time.Duration(math.Min(p, intervalS) * float64(time.Second))
}

// maxFastPeriodS is the longest duty-cycle period for a plant with a fast
// part (see PeriodFor).
const maxFastPeriodS = 0.05

// builtinPeriodS is the period for a built-in workload on a plant with a
// fast part: the H100's die follows its power within some 20 ms (8 °C
// peak to peak at a 50 ms period on 2026-11-28), which a 5 ms period
// smooths to about 1 °C. The job parks at its gate between kernels of a
// few milliseconds, and the cycle carries any overrun (Runtime.cycle).
const builtinPeriodS = 0.01

// SetRun gives the hold the run's id and the collector's Emit, through
// which its points reach every sink with the next tick.
func (h *Runtime) SetRun(runID string, emit func(...point.Point)) {
	h.mu.Lock()
	h.cfg.RunID, h.emit = runID, emit
	h.mu.Unlock()
}

// Start begins holding: the load has started (workloads.Options.OnLoad).
func (h *Runtime) Start() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.active {
		return
	}
	ctrl, err := New(Options{SetC: h.cfg.Target.SetC, Model: h.cfg.Model, IntervalS: h.cfg.IntervalS, Running: h.cfg.Running})
	if err != nil { // checked in NewRuntime
		h.cfg.Logger.Error("hold", "err", err)
		return
	}
	h.ctrl, h.active, h.start = ctrl, true, time.Now()
	if c, ok := h.cfg.Switch.(RunClock); ok {
		h.clock = c
	} else {
		h.clock = &throttleClock{from: h.start}
	}
	h.mode = ctrl.Mode()
	// Until the controller's first step (the next tick) the job stays as
	// the controller assumes it was: held at the load's start, so the
	// first reading is the idle the model starts from, or running when a
	// rule switched the hold on mid-load.
	h.duty = 0
	if h.cfg.Running {
		h.duty = 1
	}
	if d := h.cfg.FixedDuty; d != nil {
		h.duty, h.mode = *d, ModeFixed
	}
	msg := fmt.Sprintf("hold %s: %s, duty cycle period %v", h.cfg.Target, h.describeModel(), h.period)
	h.cfg.Logger.Info(msg)
	h.cfg.Event(rundir.Event{Kind: schema.KindHoldStart, Message: msg})
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go h.cycle(ctx, h.done)
}

func (h *Runtime) describeModel() string {
	if d := h.cfg.FixedDuty; d != nil {
		return fmt.Sprintf("a fixed duty of %g", *d)
	}
	if m := h.cfg.Model; m != nil {
		return fmt.Sprintf("model from %s (idle %.1f °C, rise %.1f °C of which %.1f °C fast, τ %.1f s)", m.Source, m.BaseC, m.RiseC(), m.FastC, m.TauS)
	}
	return "the plain pause: " + h.cfg.NoModel
}

// Stop ends the hold as the load ends, leaving the job free.
func (h *Runtime) Stop() {
	h.mu.Lock()
	if !h.active {
		h.mu.Unlock()
		return
	}
	h.active = false
	cancel, done := h.cancel, h.done
	h.mu.Unlock()
	cancel()
	<-done
	h.mu.Lock()
	h.stopAt = time.Now()
	h.mu.Unlock()
	if h.cfg.Record != nil {
		h.cfg.Record(h.Summary())
	}
}

// cycle pauses and resumes the job at the period with the current duty.
// A built-in workload does not stop the moment the gate shuts: the kernel
// it launched last runs to its end (a 20 ms GEMM on an H100 against a
// 15 ms on-time at duty 0.15 and period 0.1 s). And the guard may hold the
// job through an on-time. So the cycle reads how long the job really ran
// in each period (RunClock) and carries the difference to the duty into
// the next period's on-time, as a sigma-delta modulator does: over a few
// periods the job runs the duty asked for even though each period's run
// is whole kernels. The summary's duty is that real run.
func (h *Runtime) cycle(ctx context.Context, done chan struct{}) {
	defer close(done)
	sw := h.cfg.Switch
	h.mu.Lock()
	clock := h.clock
	h.mu.Unlock()
	held := false
	set := func(v bool) {
		if v != held {
			if err := sw.Throttle(v); err != nil {
				h.cfg.Logger.Warn("hold: the job did not follow", "held", v, "err", err)
			}
			held = v
			if c, ok := clock.(*throttleClock); ok {
				c.set(v)
			}
		}
	}
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	mark, markAt := clock.Ran(), time.Now()
	// lap adds the run since the last lap to the summary and returns it
	// with the wall time since then.
	lap := func() (ran, wall time.Duration) {
		now, at := clock.Ran(), time.Now()
		ran, wall = now-mark, at.Sub(markAt)
		mark, markAt = now, at
		h.addRan(ran)
		return ran, wall
	}
	defer func() {
		lap()
		set(false)
	}()
	var credit time.Duration // run owed to the job (negative: run too long)
	// limit bounds the debt: a period, or the longest run from a resume
	// to the park (a kernel longer than the period), at most a second;
	// burst is the run since the job last stopped.
	limit := h.period
	var burst time.Duration
	for {
		h.mu.Lock()
		u := h.duty
		h.mu.Unlock()
		want := time.Duration(u*float64(h.period)) + credit
		on := min(max(want, 0), h.period)
		// Slivers under a millisecond are not worth a signal pair.
		if on < time.Millisecond {
			on = 0
		} else if h.period-on < time.Millisecond {
			on = h.period
		}
		start := time.Now()
		if on > 0 {
			set(false)
			if !sleep(ctx, t, on) {
				return
			}
		}
		if on < h.period {
			set(true)
			if !sleep(ctx, t, h.period-time.Since(start)) {
				return
			}
		}
		// A kernel still running at the period's end counts in the next
		// period's lap, where it runs.
		ran, wall := lap()
		burst += ran
		if ran < wall-time.Millisecond { // it stopped in this period
			limit = max(limit, min(burst, time.Second))
			burst = 0
		}
		// The debt is kept to a period, or to a kernel where kernels are
		// longer (else whole kernels run more than the duty: 0.5 for 0.3
		// with 150 ms kernels at a 50 ms period), so a long stall (a
		// host-side phase, a page fault, the guard's pause) is not paid
		// back for seconds. The duty is of the wall time since the last
		// lap, not the period asked for: a timer that wakes late (a
		// millisecond on a busy host, a tenth of a 10 ms period) lengthens
		// the off-time, which the next period pays (a cycle that owed
		// u·period ran 0.454 for 0.5 on this machine under load).
		credit = min(max(credit+time.Duration(u*float64(wall))-ran, -limit), limit)
	}
}

// throttleClock times a Switch that cannot time itself: the job runs
// whenever the hold does not throttle it.
type throttleClock struct {
	mu     sync.Mutex
	held   bool
	from   time.Time
	before time.Duration
}

func (c *throttleClock) set(held bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if held && !c.held {
		c.before += now.Sub(c.from)
	}
	if !held && c.held {
		c.from = now
	}
	c.held = held
}

// Ran implements RunClock.
func (c *throttleClock) Ran() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held {
		return c.before
	}
	return c.before + time.Since(c.from)
}

func (h *Runtime) addRan(d time.Duration) {
	h.mu.Lock()
	h.ranS += d.Seconds()
	h.mu.Unlock()
}

func sleep(ctx context.Context, t *time.Timer, d time.Duration) bool {
	t.Reset(d)
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Write implements collectors.Sink: each tick's batch steps the controller
// with the hottest reading of the component in it.
func (h *Runtime) Write(points []point.Point) error {
	hot, found, tick := math.Inf(-1), false, time.Time{}
	util, hasUtil := 0.0, false // the hottest reading's GPU's
	for i := range points {
		p := &points[i]
		if p.Measurement == schema.CollectorTick {
			tick = p.Time
			continue
		}
		if v, ok := h.cfg.Target.Reading(p); ok && (!found || v > hot) {
			hot, found = v, true
			util, hasUtil = h.cfg.Target.Utilisation(p)
		}
	}
	if tick.IsZero() {
		return nil // points from outside a tick: events, alerts
	}
	h.mu.Lock()
	if !h.active {
		h.mu.Unlock()
		return nil
	}
	clock := h.clock
	h.mu.Unlock()
	ran := clock.Ran() // outside h.mu: a Runner's clock takes its own lock
	h.mu.Lock()
	if !h.active {
		h.mu.Unlock()
		return nil
	}
	var st Step
	switch {
	case h.cfg.FixedDuty != nil:
		st = Step{Duty: *h.cfg.FixedDuty, Mode: ModeFixed, PredictedC: math.NaN(), Gain: 1}
	case hasUtil && h.quietLocked(tick, ran, util):
		st = h.ctrl.StepQuiet(hot, found)
	default:
		st = h.ctrl.Step(hot, found)
	}
	var note string
	if found {
		if h.freed {
			note = fmt.Sprintf("a reading of %s again (%.1f °C): the plain pause acts on it", componentTag(h.cfg.Target), hot)
		}
		h.unread, h.freed = 0, false
	} else if h.unread++; h.unread >= unreadTicks && st.Mode == ModePause && st.Duty < 1 {
		if !h.freed {
			note = fmt.Sprintf("no reading of %s for %d ticks: the job runs free until one comes (a hold cannot act on a component it cannot read)", componentTag(h.cfg.Target), h.unread)
		}
		st.Duty, h.freed = 1, true
	}
	h.duty = st.Duty
	if st.Changed != "" {
		h.fell = st.Changed
	}
	h.mode = st.Mode
	if found {
		h.times = append(h.times, tick.Sub(h.start).Seconds())
		h.reads = append(h.reads, hot)
	}
	if hasUtil {
		h.noteUtilLocked(tick, ran, util)
	}
	emit, runID := h.emit, h.cfg.RunID
	h.mu.Unlock()
	if st.Changed != "" {
		h.cfg.Logger.Warn("hold: " + st.Changed)
		h.cfg.Event(rundir.Event{Time: tick, Kind: schema.KindHoldFallback, Message: st.Changed})
	}
	if note != "" {
		level := slog.LevelWarn
		if found {
			level = slog.LevelInfo
		}
		h.cfg.Logger.Log(context.Background(), level, "hold "+h.cfg.Target.String()+": "+note)
		h.cfg.Event(rundir.Event{Time: tick, Kind: schema.KindNote, Message: "hold: " + note})
	}
	p := point.New(schema.Hold, tick)
	p.AddTag(schema.TagComponent, componentTag(h.cfg.Target))
	if runID != "" {
		p.AddTag(schema.TagRun, runID)
	}
	p.AddFloat(schema.FieldSetpointC, h.cfg.Target.SetC)
	if found {
		p.AddFloat(schema.FieldTempC, hot)
	}
	if hasUtil {
		p.AddFloat(schema.FieldUtilPct, util)
	}
	p.AddFloat(schema.FieldDuty, st.Duty)
	if !math.IsNaN(st.PredictedC) {
		p.AddFloat(schema.FieldPredictedC, st.PredictedC)
	}
	p.AddFloat(schema.FieldGain, st.Gain)
	p.AddString(schema.FieldMode, string(st.Mode))
	p.AddFloat(schema.FieldPeriodS, h.period.Seconds())
	emit(p)
	return nil
}

// quietLocked says whether the job ran in the tick ending at tick but the
// held GPU did not work with it: under half the busy share its run would
// give (NVML's utilisation against the run clock). Called with h.mu held,
// before noteUtilLocked.
func (h *Runtime) quietLocked(tick time.Time, ran time.Duration, utilPct float64) bool {
	if h.lastTick.IsZero() {
		return false
	}
	dt := tick.Sub(h.lastTick).Seconds()
	if dt <= 0 {
		return false
	}
	share := (ran - h.lastRan).Seconds() / dt
	return share >= 0.05 && utilPct < 50*share
}

// noteUtilLocked keeps the held GPU's utilisation of a tick: NVML's share
// of its last sample window (1/6 s to 1 s, by product) in which a kernel
// ran. Over many ticks its mean is the share of the load the card
// worked, the duty the GPU realised, whatever the job's duty cycle
// believed: a command's kernels queued before SIGSTOP run on while it is
// stopped. A tick in which the job ran not at all (the plain pause, a low
// duty's skipped periods, the guard) says directly whether the card
// worked on without it. The first tick's window began before the hold.
// Called with h.mu held.
func (h *Runtime) noteUtilLocked(tick time.Time, ran time.Duration, util float64) {
	if !h.lastTick.IsZero() {
		h.util = append(h.util, util)
		if ran == h.lastRan && tick.Sub(h.lastTick) >= 900*time.Millisecond {
			h.heldUtil = append(h.heldUtil, util)
		}
	}
	h.lastTick, h.lastRan = tick, ran
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func componentTag(t Target) string {
	if t.Device != "" {
		return t.Component + ":" + t.Device
	}
	return t.Component
}

// Flush implements collectors.Sink; a hold keeps nothing to flush.
func (h *Runtime) Flush() error { return nil }

// Close implements collectors.Sink.
func (h *Runtime) Close() error { return nil }

// Summary is run.json's record of the hold so far.
func (h *Runtime) Summary() rundir.Hold {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := rundir.Hold{Target: h.cfg.Target.String(), SetC: h.cfg.Target.SetC, PeriodS: h.period.Seconds(),
		NoModel: h.cfg.NoModel, Mode: string(h.mode), Fallback: h.fell, Readings: len(h.reads),
		FreeRun: h.cfg.Free.FreeRun, FreeWorkPerS: h.cfg.Free.FreeWorkPerS, FreeWorkUnit: h.cfg.Free.FreeWorkUnit,
		FreeIterationsPerS: h.cfg.Free.FreeIterationsPerS}
	if h.ctrl != nil && h.cfg.Model != nil && h.cfg.FixedDuty == nil {
		// The model as given with the gain beside it, as rundir.HoldModel
		// documents: recording the scaled rises and the gain too counted
		// the gain twice (fast_c 25.6 °C with gain 2 for the 12.8 °C
		// hold_start named on the H100).
		m := h.ctrl.m
		s.Model = &rundir.HoldModel{BaseC: m.BaseC, FastC: m.FastC, SlowC: m.SlowC, TauS: m.TauS, TauFastS: m.TauFastS, Gain: h.ctrl.gain, Source: m.Source}
		s.SettleS = 3 * m.TauS
	}
	if !h.start.IsZero() {
		end := h.stopAt
		if h.active {
			end = time.Now()
		}
		if el := end.Sub(h.start).Seconds(); el > 0 {
			s.Duty = math.Min(1, h.ranS/el)
		}
	}
	if len(h.util) > 0 {
		d := mean(h.util) / 100
		s.GPUDuty = &d
	}
	if len(h.heldUtil) > 0 {
		u := mean(h.heldUtil)
		s.GPUHeldUtilPct, s.GPUHeldTicks = &u, len(h.heldUtil)
	}
	if len(h.reads) == 0 {
		return s
	}
	tr := Trace{TimeS: h.times, ReadingC: h.reads, SetC: slices.Repeat([]float64{h.cfg.Target.SetC}, len(h.reads)), RunS: 1, DurationS: 1}
	q := Judge(tr, s.SettleS)
	s.OvershootC, s.PeakC = q.OvershootC, &q.PeakC
	if q.N > 0 {
		s.MeanAbsC, s.P95AbsC = &q.MeanAbsC, &q.P95AbsC
	}
	return s
}
