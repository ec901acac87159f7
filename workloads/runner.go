package workloads

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// Phase names, as recorded in run.json and in the phase tag of event points.
const (
	PhaseBaseline    = "baseline"
	PhaseWaitNominal = "wait_nominal"
	PhaseLoad        = "load"
	PhaseCooldown    = "cooldown"
)

// Run statuses, as recorded in run.json.
const (
	StatusComplete    = "complete"
	StatusFailed      = "failed"      // an iteration exited non-zero
	StatusInterrupted = "interrupted" // SIGINT/SIGTERM to heatsink
	StatusStopped     = "stopped"     // the guard stopped the job
)

// ExitStopped is the exit status recorded for a built-in workload's
// iteration cut short by a stop, the status a command ended by SIGTERM has.
const ExitStopped = exitSignalBase + 15

// Collector is what the runner needs of the sampling engine; a
// *collectors.Collector is one.
type Collector interface {
	Run(ctx context.Context) error
	Emit(points ...point.Point)
	Interval() time.Duration
}

// Protocol is the experiment of the reference study: an idle baseline, the
// job under load, and a cooldown, each recorded as a phase.
type Protocol struct {
	// Baseline is how long the node idles, recorded, before the load; 0 skips it.
	Baseline time.Duration
	// Load repeats the job until this much time has passed (an iteration in
	// progress is let finish, so every iteration has a complete result); 0
	// runs it once.
	Load time.Duration
	// Cooldown records the node for this long after the load; 0 skips it
	// unless CooldownAuto.
	Cooldown time.Duration
	// CooldownAuto ends the cooldown when every watched temperature has been
	// within RunnerConfig.ToleranceC of its baseline mean for
	// RunnerConfig.Hold, or after RunnerConfig.CooldownMax. Without a baseline
	// the reference is each temperature's last reading before the load.
	CooldownAuto bool
	// WaitNominal holds the load until every watched temperature has been
	// within tolerance of the baseline mean (or under RunnerConfig.Nominal's
	// absolute limits, when the configuration has any) for the hold time.
	WaitNominal bool
	// Repeat runs the job this many times when Load is 0 (0 and 1: once), so
	// a measurement can discard a warm-up iteration.
	Repeat int
	// Reference is the baseline that WaitNominal and CooldownAuto wait for
	// when this run records none of its own: a series of runs (the
	// evaluations of a tuning run) measures the idle node once and every
	// run then starts from the same thermal state.
	Reference map[string]float64
}

// ParseCooldown parses the --cooldown value: a duration, or "auto".
func ParseCooldown(s string) (d time.Duration, auto bool, err error) {
	if s == "auto" {
		return 0, true, nil
	}
	if s == "" {
		return 0, false, nil
	}
	d, err = time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false, fmt.Errorf("--cooldown %q: want a duration (e.g. 10m) or auto", s)
	}
	return d, false, nil
}

// Options configure a Runner. The job is either a built-in Workload with its
// Params or a Command.
type Options struct {
	Protocol Protocol
	Config   RunnerConfig
	Workload Workload
	Params   Values
	Command  *Command
	// Stdout and Stderr show a command's output (it is also saved in the run
	// directory as job.stdout and job.stderr); nil shows nothing.
	Stdout, Stderr io.Writer
	Logger         *slog.Logger
	// OnLoad, when set, is called as the load phase starts (true) and
	// as it ends (false), before the phase's end is recorded: the hold
	// acts on the job only while it runs.
	OnLoad func(started bool)
}

// Recording is where a run is recorded.
type Recording struct {
	Collector Collector
	RunID     string
	// Dir is the run directory; "" records points only (to whatever sinks the
	// collector has).
	Dir string
	// Meta is run.json's content, rewritten in Dir as the run goes; nil without Dir.
	Meta *rundir.Meta
}

// Outcome is how a run ended.
type Outcome struct {
	Status string
	// JobStatus is the exit status of the last iteration (the failing one, if
	// any failed); nil when the job never ran.
	JobStatus  *int
	Iterations int
	// Err reports records that could not be written (run.json, sink flushes).
	Err error
	// Baseline is the mean of each watched temperature over the baseline
	// phase (nil without one), to be another run's Protocol.Reference.
	Baseline map[string]float64
}

// Runner runs one job under the experiment protocol while the collector
// records. It is also the job handle of the alert guard: Pause, Resume and
// Stop act on whatever iteration is running and on the iterations to come.
type Runner struct {
	o      Options
	log    *slog.Logger
	latest *Latest
	limits []limitMatcher
	name   string
	job    Job      // built-in workload, started
	cmd    *Command // or a command
	gate   *gate

	mu        sync.Mutex
	j         *journal
	phase     string
	paused    bool // the job is held: by the guard, the hold, or both
	guardHeld bool
	throttled bool
	pausedAt  time.Time
	// The run clock (Ran): the run segments before the current one, and
	// when the current one began (the last resume).
	ranBefore  time.Duration
	runFrom    time.Time
	pausedIter time.Duration // paused time within the current iteration
	iterStart  time.Time
	stopped    bool
	stopc      chan struct{}
	cancelLoad context.CancelFunc
	// What Progress reports.
	phaseStart time.Time
	done       int                // iterations finished
	failed     int                // of which failed
	metrics    map[string]float64 // the last successful iteration's
}

type limitMatcher struct {
	m    matcher
	maxC float64
}

// NewRunner checks everything the run needs before anything runs: the
// protocol, the configuration, the job (a built-in workload is started here,
// so it fails now rather than after a 30-minute baseline).
func NewRunner(ctx context.Context, o Options) (*Runner, error) {
	if (o.Workload == nil) == (o.Command == nil) {
		return nil, errors.New("give either a built-in workload or a command to run")
	}
	p := o.Protocol
	switch {
	case p.Baseline < 0 || p.Load < 0 || p.Cooldown < 0:
		return nil, fmt.Errorf("negative phase duration (baseline %v, load %v, cooldown %v)", p.Baseline, p.Load, p.Cooldown)
	case p.CooldownAuto && p.Cooldown > 0:
		return nil, errors.New("cooldown is either a duration or auto, not both")
	case p.WaitNominal && p.Baseline == 0 && len(p.Reference) == 0 && len(o.Config.Nominal) == 0:
		return nil, errors.New("--wait-nominal needs a reference: a baseline (--baseline D) or absolute limits (runner.nominal in the configuration)")
	}
	o.Config.Fill()
	if err := o.Config.Validate(); err != nil {
		return nil, fmt.Errorf("runner configuration: %w", err)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	sels := slices.Clone(o.Config.Watch)
	for _, l := range o.Config.Nominal {
		sels = append(sels, l.Selector)
	}
	latest, err := NewLatest(sels...)
	if err != nil {
		return nil, err
	}
	r := &Runner{o: o, log: o.Logger, latest: latest, gate: newGate(), stopc: make(chan struct{}), j: &journal{log: o.Logger}, runFrom: time.Now()}
	for _, l := range o.Config.Nominal {
		ms, err := compileSelectors([]Selector{l.Selector})
		if err != nil {
			return nil, err
		}
		r.limits = append(r.limits, limitMatcher{ms[0], l.MaxC})
	}
	if o.Command != nil {
		r.cmd = o.Command
		r.cmd.Grace = o.Config.Grace
		r.name = r.cmd.Name()
		return r, nil
	}
	r.name = o.Workload.Name()
	job, err := o.Workload.Start(ctx, o.Params)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", r.name, err)
	}
	r.job = job
	return r, nil
}

// Latest returns the store of watched temperatures; register it as a sink of
// the collector that Run drives.
func (r *Runner) Latest() *Latest { return r.latest }

// Close releases what the built-in workload took.
func (r *Runner) Close() error {
	if r.job != nil {
		return r.job.Close()
	}
	return nil
}

// Run starts the collector, performs the protocol, stops the collector (which
// flushes every sink) and reports how the run ended. Cancelling ctx (Ctrl-C)
// stops the job (SIGTERM, then SIGKILL after the grace period), skips the
// remaining phases and finishes the records.
func (r *Runner) Run(ctx context.Context, rec Recording) Outcome {
	dir := rec.Dir
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	r.mu.Lock()
	r.j = &journal{emit: rec.Collector.Emit, runID: rec.RunID, dir: dir, meta: rec.Meta, log: r.log}
	r.mu.Unlock()
	r.j.update(func(m *rundir.Meta) {
		m.Workload = &rundir.Workload{Name: r.name}
		if r.cmd != nil {
			m.Workload.Command = r.cmd.Argv
		} else {
			m.Workload.Params = r.o.Params.Map()
		}
	})
	var closeOut func()
	if r.cmd != nil {
		var err error
		if closeOut, err = r.captureOutput(dir); err != nil {
			return Outcome{Status: StatusFailed, Err: err}
		}
		defer closeOut()
	}

	interval := rec.Collector.Interval()
	collCtx, stopCollector := context.WithCancel(context.WithoutCancel(ctx))
	collDone := make(chan error, 1)
	go func() { collDone <- rec.Collector.Run(collCtx) }()
	// The first phase starts once the collector has taken its first sample,
	// so ticks cover every phase from its start.
	r.latest.waitTick(ctx, time.Now(), 2*interval+time.Second)

	out := r.protocol(ctx, rec.RunID, dir, interval)

	r.j.update(func(m *rundir.Meta) { m.ExitStatus = out.JobStatus })
	r.j.save(true)
	if out.Status != StatusInterrupted {
		// One more tick, so the last sample falls at or after the end of the
		// run rather than up to an interval before it.
		r.latest.waitTick(ctx, time.Now(), 2*interval+time.Second)
	}
	stopCollector()
	out.Err = errors.Join(<-collDone, r.j.err())
	return out
}

// captureOutput saves a command's output in the run directory and shows it.
func (r *Runner) captureOutput(dir string) (func(), error) {
	var files []*os.File
	open := func(name string, show io.Writer) (io.Writer, error) {
		if dir == "" {
			return show, nil
		}
		// Not through a link planted in the run directory (heatsink
		// often runs as root).
		f, err := rundir.OpenInDir(dir, name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		return &tee{file: f, show: show}, nil
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	var err error
	if r.cmd.Stdout, err = open("job.stdout", r.o.Stdout); err != nil {
		closeAll()
		return nil, err
	}
	if r.cmd.Stderr, err = open("job.stderr", r.o.Stderr); err != nil {
		closeAll()
		return nil, err
	}
	return closeAll, nil
}

// tee writes a job's output to its file and shows it; a failure to show it
// (heatsink's own output closed) is ignored, as the file is the record.
type tee struct {
	file io.Writer
	show io.Writer
}

func (t *tee) Write(b []byte) (int, error) {
	if t.show != nil {
		if _, err := t.show.Write(b); err != nil {
			t.show = nil
		}
	}
	return t.file.Write(b)
}

func (r *Runner) protocol(ctx context.Context, runID, dir string, interval time.Duration) Outcome {
	p := r.o.Protocol
	out := Outcome{Status: StatusComplete}
	reference := p.Reference // baseline means, the reference of auto cooldown and the nominal wait

	if p.Baseline > 0 {
		start := r.enter(PhaseBaseline, "idle for "+p.Baseline.String())
		r.latest.ResetStats()
		err := r.sleep(ctx, p.Baseline)
		reference = r.latest.Means()
		out.Baseline = reference
		r.leave(PhaseBaseline, baselineMessage(time.Since(start), reference))
		if err != nil {
			return r.ended(out, err)
		}
	}
	if p.WaitNominal {
		msg := "until every watched temperature is within " + r.tolerance() + " of its baseline mean for " + r.o.Config.Hold.String()
		check := func(now time.Time) verdict { return r.withinReference(now, reference, interval) }
		if len(r.limits) > 0 {
			msg = "until every watched temperature is under its configured limit for " + r.o.Config.Hold.String()
			check = func(now time.Time) verdict { return r.underLimits(now, interval) }
		}
		r.enter(PhaseWaitNominal, msg)
		settled, why, err := r.settle(ctx, r.o.Config.NominalMax, interval, check, true)
		switch {
		case err != nil:
			r.leave(PhaseWaitNominal, "cut short: "+err.Error())
			return r.ended(out, err)
		case settled:
			r.leave(PhaseWaitNominal, "nominal: "+why)
		default:
			r.leave(PhaseWaitNominal, "not nominal after "+r.o.Config.NominalMax.String()+", loading anyway: "+why)
			r.note("not nominal after " + r.o.Config.NominalMax.String() + ": " + why)
		}
	}
	if p.CooldownAuto && reference == nil {
		reference = r.lastValues()
	}

	out = r.load(ctx, runID, dir, out)
	if ctx.Err() != nil {
		return r.ended(out, ctx.Err())
	}
	if out.Iterations == 0 && r.isStopped() {
		return out // stopped before the load: there is nothing to cool down from
	}

	switch {
	case p.CooldownAuto:
		r.enter(PhaseCooldown, fmt.Sprintf("until every watched temperature is near its baseline (within %s of its baseline mean) for %v (at most %v)",
			r.tolerance(), r.o.Config.Hold, r.o.Config.CooldownMax))
		settled, why, err := r.settle(ctx, r.o.Config.CooldownMax, interval, func(now time.Time) verdict {
			return r.withinReference(now, reference, interval)
		}, false)
		switch {
		case err != nil:
			r.leave(PhaseCooldown, "cut short: "+err.Error())
			return r.ended(out, err)
		case settled:
			r.leave(PhaseCooldown, "near baseline: "+why)
		default:
			r.leave(PhaseCooldown, "not near baseline after "+r.o.Config.CooldownMax.String()+": "+why)
		}
	case p.Cooldown > 0:
		r.enter(PhaseCooldown, "record for "+p.Cooldown.String())
		start := time.Now()
		err := sleepCtx(ctx, p.Cooldown) // a stop does not end the cooldown
		r.leave(PhaseCooldown, fmt.Sprintf("recorded %v", time.Since(start).Round(time.Millisecond)))
		if err != nil {
			return r.ended(out, err)
		}
	}
	return out
}

// ended marks an outcome as interrupted by a signal or stopped by the guard.
func (r *Runner) ended(out Outcome, err error) Outcome {
	if errors.Is(err, errStopped) {
		out.Status = StatusStopped
	} else {
		out.Status = StatusInterrupted
	}
	return out
}

func baselineMessage(d time.Duration, means map[string]float64) string {
	if len(means) == 0 {
		return fmt.Sprintf("%v idle; no watched temperature", d.Round(time.Millisecond))
	}
	keys := slices.Sorted(maps.Keys(means))
	if len(keys) > 4 {
		// A node's dozens of cores and sensors would make one unreadable
		// line: say how many, and the range with the hottest.
		lo, hi := keys[0], keys[0]
		for _, k := range keys {
			if means[k] < means[lo] {
				lo = k
			}
			if means[k] > means[hi] {
				hi = k
			}
		}
		return fmt.Sprintf("%v idle; %d watched temperatures, means %.2f to %.2f (hottest %s)",
			d.Round(time.Millisecond), len(keys), means[lo], means[hi], hi)
	}
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s mean %.2f", k, means[k]))
	}
	return fmt.Sprintf("%v idle; %s", d.Round(time.Millisecond), strings.Join(parts, "; "))
}

// load runs the job: once, or repeatedly until Protocol.Load has passed. A
// failing iteration ends it; so do a stop and ctx.
func (r *Runner) load(ctx context.Context, runID, dir string, out Outcome) Outcome {
	loadCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.mu.Lock()
	stopped := r.stopped
	r.cancelLoad = cancel
	r.mu.Unlock()
	// A job the guard holds does not start: the load phase begins when the
	// job does.
	if err := r.gate.wait(loadCtx); err != nil || stopped {
		if r.isStopped() {
			out.Status = StatusStopped
		}
		return out
	}
	d := r.o.Protocol.Load
	msg := "run " + r.name + " once"
	if d == 0 && r.o.Protocol.Repeat > 1 {
		msg = fmt.Sprintf("run %s %d times", r.name, r.o.Protocol.Repeat)
	}
	if d > 0 {
		msg = "repeat " + r.name + " for " + d.String()
	}
	start := r.enter(PhaseLoad, msg)
	if r.o.OnLoad != nil {
		r.o.OnLoad(true)
	}
	var endMsg string
	for n := 1; ; n++ {
		if err := r.gate.wait(loadCtx); err != nil {
			break // stopped or interrupted while paused between iterations
		}
		it := r.iterate(loadCtx, n, runID, dir)
		status := it.ExitStatus
		out.JobStatus = &status
		out.Iterations = n
		if status != 0 {
			if loadCtx.Err() == nil {
				out.Status = StatusFailed
				endMsg = fmt.Sprintf("iteration %d failed with exit status %d", n, status)
			}
			break
		}
		if loadCtx.Err() != nil || (d == 0 && n >= r.o.Protocol.Repeat) || (d > 0 && time.Since(start) >= d) {
			break
		}
	}
	if r.isStopped() {
		out.Status = StatusStopped
		endMsg = "the guard stopped the job"
	} else if ctx.Err() != nil {
		endMsg = "interrupted"
	}
	if endMsg == "" {
		endMsg = plural(out.Iterations, "iteration")
	}
	if r.o.OnLoad != nil {
		r.o.OnLoad(false)
	}
	r.mu.Lock()
	r.cancelLoad = nil
	r.mu.Unlock()
	r.leave(PhaseLoad, endMsg)
	return out
}

// iterate runs the job once and records it.
func (r *Runner) iterate(ctx context.Context, n int, runID, dir string) rundir.Iteration {
	it := rundir.Iteration{N: n, Start: time.Now()}
	r.mu.Lock()
	r.iterStart, r.pausedIter = it.Start, 0
	r.mu.Unlock()
	r.j.event(schema.EventPoint{Time: it.Start, Kind: schema.KindIterationStart, Phase: PhaseLoad, Message: fmt.Sprintf("iteration %d", n), Iteration: n}, nil, false)
	if r.cmd != nil {
		env := []string{"HEATSINK_RUN_ID=" + runID, "HEATSINK_ITERATION=" + strconv.Itoa(n)}
		if dir != "" {
			env = append(env, "HEATSINK_RUN_DIR="+dir)
		}
		status, err := r.cmd.Run(ctx, env)
		it.ExitStatus = status
		if err != nil {
			it.Error = err.Error()
		}
	} else {
		res, err := r.iterateBuiltin(ctx)
		if err == nil {
			// A metric that shadows the point's own n or exit_status would
			// be written twice and read back as the wrong iteration: the
			// workload is wrong, and its iteration fails saying so.
			if verr := (schema.IterationPoint{Workload: r.name, N: n, Metrics: res.Metrics}).Validate(); verr != nil {
				err = fmt.Errorf("workload %s reports a metric the iteration point cannot carry: %w", r.name, verr)
			}
		}
		switch {
		case err == nil:
			it.Metrics = maps.Clone(res.Metrics)
			if res.WorkUnit != "" && res.Work > 0 {
				if it.Metrics == nil {
					it.Metrics = map[string]float64{}
				}
				it.Metrics["work_"+res.WorkUnit] = res.Work
			}
		case ctx.Err() != nil:
			it.ExitStatus, it.Error = ExitStopped, "stopped: "+err.Error()
		default:
			it.ExitStatus, it.Error = 1, err.Error()
		}
	}
	it.End = time.Now()
	it.RuntimeS = it.End.Sub(it.Start).Seconds()
	if p := r.pausedInIteration(it.End); p > 0 {
		if it.Metrics == nil {
			it.Metrics = map[string]float64{}
		}
		it.Metrics[schema.FieldPausedS] = p.Seconds()
	}
	r.log.Debug("iteration", "n", n, "exit_status", it.ExitStatus, "runtime_s", it.RuntimeS, "err", it.Error)
	r.mu.Lock()
	r.done++
	if it.ExitStatus != 0 || it.Error != "" {
		r.failed++
	} else {
		r.metrics = maps.Clone(it.Metrics)
		if r.metrics == nil {
			r.metrics = map[string]float64{}
		}
		r.metrics["runtime_s"] = it.RuntimeS
	}
	r.mu.Unlock()
	r.j.iteration(r.name, it)
	return it
}

// iterateBuiltin runs one iteration of the built-in workload; a panic in it
// fails the iteration rather than losing the run's records.
func (r *Runner) iterateBuiltin(ctx context.Context) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("workload %s panicked: %v", r.name, p)
		}
	}()
	return r.job.Iterate(withGate(ctx, r.gate))
}

func (r *Runner) pausedInIteration(end time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pausedIter
	if r.paused {
		p += end.Sub(later(r.pausedAt, r.iterStart))
	}
	r.iterStart = time.Time{}
	return p
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

var errStopped = errors.New("the guard stopped the job")

// sleep waits d, returning early with ctx's error or errStopped.
func (r *Runner) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.stopc:
		return errStopped
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// verdict is one look at the watched temperatures: whether they are where
// the wait wants them, in words, and whether there was nothing to look at.
type verdict struct {
	ok      bool
	why     string
	nothing bool
}

// settle polls check once an interval until it has held for the hold time,
// or max has passed. It reports whether it settled and check's last word.
// With nothing to watch it ends at once: holding would wait for nothing.
// A stop ends it early when stoppable (the nominal wait, before the load).
func (r *Runner) settle(ctx context.Context, max, interval time.Duration, check func(time.Time) verdict, stoppable bool) (bool, string, error) {
	hold := r.o.Config.Hold
	start := time.Now()
	var since time.Time // start of the current run of good checks
	tick := time.NewTicker(interval)
	defer tick.Stop()
	stopc := r.stopc
	if !stoppable {
		stopc = nil
	}
	var why string
	for {
		now := time.Now()
		v := check(now)
		if v.nothing {
			return true, v.why, nil
		}
		ok := v.ok
		why = v.why
		switch {
		case !ok:
			since = time.Time{}
		case since.IsZero():
			since = now
		}
		if ok && now.Sub(since) >= hold {
			return true, why, nil
		}
		if now.Sub(start) >= max {
			return false, why, nil
		}
		select {
		case <-ctx.Done():
			return false, why, ctx.Err()
		case <-stopc:
			return false, why, errStopped
		case <-tick.C:
		}
	}
}

// staleAfter is how old a reading may be and still count: a sensor silent for
// longer cannot say whether it is near its baseline, so it is left out (and named).
func staleAfter(interval time.Duration) time.Duration { return 5 * interval }

// withinReference checks the latest readings against reference+tolerance:
// "near baseline", the runner's live test. The report's "return to idle"
// is stricter and after the fact (idle maximum + its tolerance, judged on
// the whole recording); near baseline uses the mean, which a live run knows
// as soon as the baseline ends and which sensor noise cannot hold above.
func (r *Runner) withinReference(now time.Time, ref map[string]float64, interval time.Duration) verdict {
	if len(ref) == 0 {
		return verdict{ok: true, nothing: true, why: "no watched temperature to wait for (this machine reports none the runner watches)"}
	}
	byName := map[string]Reading{}
	for _, rd := range r.latest.Readings() {
		byName[rd.Series] = rd
	}
	tol := r.o.Config.ToleranceC
	var above, silent []string
	for _, k := range slices.Sorted(maps.Keys(ref)) {
		rd, ok := byName[k]
		if !ok || now.Sub(rd.Time) > staleAfter(interval) {
			silent = append(silent, k)
			continue
		}
		if rd.Value > ref[k]+tol {
			above = append(above, fmt.Sprintf("%s %.2f > %.2f", k, rd.Value, ref[k]+tol))
		}
	}
	return verdict{ok: len(above) == 0, why: judgement(len(ref), above, silent)}
}

// underLimits checks the latest readings against the configured absolute limits.
func (r *Runner) underLimits(now time.Time, interval time.Duration) verdict {
	var above []string
	n := 0
	for _, rd := range r.latest.Readings() {
		for _, l := range r.limits {
			if !l.m.matches(&rd) {
				continue
			}
			if now.Sub(rd.Time) > staleAfter(interval) {
				break
			}
			n++
			if rd.Value > l.maxC {
				above = append(above, fmt.Sprintf("%s %.2f > %.2f", rd.Series, rd.Value, l.maxC))
			}
			break
		}
	}
	if n == 0 {
		return verdict{ok: true, nothing: true, why: "no temperature the limits apply to"}
	}
	return verdict{ok: len(above) == 0, why: judgement(n, above, nil)}
}

func judgement(n int, above, silent []string) string {
	var b strings.Builder
	if len(above) == 0 {
		fmt.Fprintf(&b, "%d of %d watched temperatures within reach", n-len(silent), n)
	} else {
		fmt.Fprintf(&b, "above: %s", strings.Join(above, "; "))
	}
	if len(silent) > 0 {
		fmt.Fprintf(&b, "; silent: %s", strings.Join(silent, "; "))
	}
	return b.String()
}

func (r *Runner) lastValues() map[string]float64 {
	out := map[string]float64{}
	for _, rd := range r.latest.Readings() {
		out[rd.Series] = rd.Value
	}
	return out
}

func (r *Runner) tolerance() string { return fmt.Sprintf("%g °C", r.o.Config.ToleranceC) }

func (r *Runner) enter(phase, msg string) time.Time {
	now := time.Now()
	r.mu.Lock()
	r.phase, r.phaseStart = phase, now
	r.mu.Unlock()
	r.log.Info("phase start", "phase", phase, "plan", msg)
	r.j.phaseStart(now, phase, msg)
	return now
}

func (r *Runner) leave(phase, msg string) {
	r.log.Info("phase end", "phase", phase, "result", msg)
	r.j.phaseEnd(time.Now(), phase, msg)
	r.mu.Lock()
	r.phase = ""
	r.mu.Unlock()
}

func (r *Runner) note(msg string) {
	r.mu.Lock()
	phase := r.phase
	r.mu.Unlock()
	r.log.Warn(msg)
	r.j.event(schema.EventPoint{Time: time.Now(), Kind: schema.KindNote, Phase: phase, Message: msg}, nil, true)
}

func (r *Runner) isStopped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// Event records an event that happened during the run (an alert firing or
// clearing, a guard action with the rule behind it) in run.json and as an
// event point tagged with the phase it happened in. It is the alert engine's
// OnEvent; Pause, Resume and Stop record nothing themselves, since their
// caller knows why it acts.
func (r *Runner) Event(ev rundir.Event) {
	r.mu.Lock()
	phase, j := r.phase, r.j
	r.mu.Unlock()
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	j.event(schema.EventPoint{Time: ev.Time, Kind: ev.Kind, Phase: phase, Message: ev.Message}, maps.Clone(ev.Attrs), true)
}

// Pause holds the job: a running command's process group gets SIGSTOP, a
// built-in workload blocks at its next Checkpoint, and no new iteration
// starts until Resume. It returns at once.
func (r *Runner) Pause() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.guardHeld = true
	return r.applyHeld()
}

// Resume lets a paused job go on (SIGCONT to a command's group), unless
// the hold has it paused at this moment of its duty cycle.
func (r *Runner) Resume() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.guardHeld = false
	return r.applyHeld()
}

// Throttle is the hold's actuator (heatsink run --hold): true pauses the
// job as Pause does, false lets it run unless the guard holds it. The
// guard's pause and the hold's are separate, so neither resumes a job the
// other holds. It returns at once. From its first call the job is paced
// (Paced): built-in workloads keep nothing queued at a Checkpoint.
func (r *Runner) Throttle(held bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gate.setPaced()
	r.throttled = held
	return r.applyHeld()
}

// Ran is the job's run clock: how long it has run since the runner was
// made, not counting the time it was held. A pause stops the clock at once
// for a command (SIGSTOP stops it where it is) and for a built-in workload
// once it parks (every worker waits at a Checkpoint), so the kernel it
// launched last counts as run. It counts the guard's pause and the hold's
// alike: a hold that lets go while the guard holds the job sees no run.
// The hold's duty cycle reads the duty it realised from it.
func (r *Runner) Ran() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ranBefore + r.segmentLocked(time.Now())
}

// segmentLocked is the current run segment: from the last resume to now,
// or to when the paused job stopped. Called with r.mu held.
func (r *Runner) segmentLocked(now time.Time) time.Duration {
	end := now
	if r.paused {
		if r.cmd != nil {
			end = r.pausedAt
		} else if t, ok := r.gate.parkedSince(); ok {
			end = t
		}
	}
	return max(end.Sub(r.runFrom), 0)
}

// applyHeld pauses or resumes the job to match the guard and the hold.
// It is called with r.mu held.
func (r *Runner) applyHeld() error {
	want := r.guardHeld || r.throttled
	if want == r.paused {
		return nil
	}
	now := time.Now()
	var err error
	if want {
		r.paused, r.pausedAt = true, now
		r.gate.shut()
		if r.cmd != nil {
			err = r.cmd.Pause()
		}
		return err
	}
	if !r.iterStart.IsZero() {
		r.pausedIter += now.Sub(later(r.pausedAt, r.iterStart))
	}
	// A built-in that never parked ran through the pause: its segment
	// goes on, and the clock counts it.
	r.ranBefore += r.segmentLocked(now)
	r.runFrom = now
	r.paused = false
	if r.cmd != nil {
		err = r.cmd.Resume()
	}
	r.gate.open()
	return err
}

// UpdateMeta changes run.json's content (saved with the run's next write):
// what a part of the run beside the runner records there, as the hold
// does its summary.
func (r *Runner) UpdateMeta(fn func(m *rundir.Meta)) {
	r.mu.Lock()
	j := r.j
	r.mu.Unlock()
	j.update(fn)
}

// Stop ends the job: a running command's group gets SIGTERM, then SIGKILL
// after the grace period; a built-in iteration is cancelled; no iteration
// starts after it. The cooldown is still recorded when the load had begun.
// It returns at once.
func (r *Runner) Stop() error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	close(r.stopc)
	if r.cancelLoad != nil {
		r.cancelLoad()
	}
	r.mu.Unlock()
	return nil
}

// Kill cuts the grace period of a stop or interrupt short (a second Ctrl-C):
// a running command's group gets SIGKILL now.
func (r *Runner) Kill() {
	if r.cmd != nil {
		r.cmd.Kill()
	}
}

// plural writes a count with its noun: "1 iteration", "3 iterations".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
