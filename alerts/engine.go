package alerts

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"gonum.org/v1/gonum/stat"
)

// Job is what the guard acts on: the job `heatsink run` started, as a whole
// process group. Stop must also end a paused job (the runner sends SIGCONT
// after SIGTERM), since a stop rule may fire while a pause rule holds it.
// Pause and Resume are called on the tick with the engine's lock held: they
// must return at once and must not call back into the Engine. Stop is
// called in the background and may wait out a grace period.
type Job interface {
	Pause() error
	Resume() error
	Stop() error
}

// Holder is a Job that can hold a component at a set point (heatsink run
// --hold): the hold:TARGET action switches it on when its rule fires, for
// the rest of the load (it holds the component under the condition that
// fired, so clearing must not switch it off). Hold is called on the tick
// with the engine's lock held and must return at once.
type Holder interface {
	Hold(target string) error
}

// Emitter stores points with the next tick: a collectors.Outbox, made
// before the collector so the engine can be built first.
type Emitter interface {
	Emit(points ...point.Point)
}

// Options connect an Engine to the rest of heatsink. All are optional.
type Options struct {
	// Emit receives the alert points, to be stored with the next tick.
	Emit Emitter
	// OnEvent receives every firing, clearing and guard action, for run.json.
	// It is called from Write's and SetJob's goroutines.
	OnEvent func(rundir.Event)
	// Logger receives one line per firing, clearing and guard action, and
	// delivery failures; default slog.Default.
	Logger *slog.Logger
	// HTTPClient posts webhooks; default a client with no overall timeout
	// (each attempt has the webhook's own).
	HTTPClient *http.Client
	// Now is the clock for silence; default time.Now.
	Now func() time.Time
	// Interval is the sampling interval, to check windows; default 1s.
	Interval time.Duration
	// CloseTimeout bounds how long Close waits for webhooks and commands
	// still queued or running before it cancels them (and logs what was not
	// sent); default 10s.
	CloseTimeout time.Duration
	// DropEnv names variables of heatsink's environment that commands must
	// not inherit: the secrets heatsink read from it (configs.Config.SecretEnv).
	DropEnv []string
	// MaxInFlight is how many deliveries run at once per webhook or command,
	// so a slow receiver holds a fixed number of goroutines; default 4.
	MaxInFlight int
	// QueueSize bounds the alerts waiting per webhook or command while its
	// workers are busy (a receiver down for long). Past it the oldest is
	// dropped, logged and counted in Deliveries; default 1024.
	QueueSize int
}

// Engine evaluates alert rules on every tick's points and carries out their
// actions. It implements collectors.Sink.
type Engine struct {
	opts     Options
	rules    []*ruleState
	interest map[string][]interest // by measurement
	webhooks map[string]*webhook
	commands map[string]*command
	seed     maphash.Seed

	mu      sync.Mutex
	closed  bool
	job     Job
	paused  bool                // this engine paused the attached job
	pausers map[holder]struct{} // firing (rule, series) with the pause action
	stopper map[holder]struct{} // firing (rule, series) with the stop action
	lookup  func(int) (float64, bool)
	cur     *series // the series lookup reads

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // queue workers and the job's Stop
	queues []*queue       // one per webhook and command
}

type interest struct {
	rs  *ruleState
	ref bool // the point feeds a blind spot's reference, not its component
}

type holder struct {
	rs *ruleState
	s  *series
}

type ruleState struct {
	*rule
	series    map[uint64]*series
	list      []*series // the same, in order of appearance, to iterate cheaply
	refs      map[uint64]*series
	refList   []*series
	latestRef *series
	touched   []*series
	firing    int
}

type alertState uint8

const (
	stateOK alertState = iota
	statePending
	stateFiring
)

// series is what a rule remembers of one series (measurement + tags).
type series struct {
	key         string
	measurement string
	tags        []point.Tag
	matched     bool

	last time.Time // of the latest point that had the field
	num  float64
	str  string
	bits uint64
	has  bool

	limits  []float64 // the rule's expression variables, latest known
	limitOK []bool

	base  time.Time
	ts    []float64 // seconds since base
	vs    []float64
	start int // first sample inside the window

	state     alertState
	since     time.Time // pending since
	firedAt   time.Time
	sent      []time.Time // per webhook of the rule, last delivery
	value     float64
	threshold float64
	hasValue  bool
	warned    bool // a missing limit was logged
	touched   bool
}

// NewEngine compiles the rules of cfg.
func NewEngine(cfg Config, opts Options) (*Engine, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.CloseTimeout <= 0 {
		opts.CloseTimeout = 10 * time.Second
	}
	if opts.MaxInFlight < 0 || opts.QueueSize < 0 {
		return nil, fmt.Errorf("alerts: max in flight %d and queue size %d must not be negative", opts.MaxInFlight, opts.QueueSize)
	}
	if opts.MaxInFlight == 0 {
		opts.MaxInFlight = defaultMaxInFlight
	}
	if opts.QueueSize == 0 {
		opts.QueueSize = defaultQueueSize
	}
	rules, err := compile(cfg, opts.Interval)
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	e := &Engine{
		opts:     opts,
		interest: map[string][]interest{},
		webhooks: map[string]*webhook{},
		commands: map[string]*command{},
		seed:     maphash.MakeSeed(),
		pausers:  map[holder]struct{}{},
		stopper:  map[holder]struct{}{},
	}
	e.lookup = func(i int) (float64, bool) { return e.cur.limits[i], e.cur.limitOK[i] }
	for name, w := range cfg.Webhooks {
		h, err := newWebhook(name, w, opts.HTTPClient)
		if err != nil {
			return nil, fmt.Errorf("alerts: %w", err)
		}
		h.q = newQueue("webhook "+name, h.batch(), opts.QueueSize, opts.Logger, h.send)
		e.webhooks[name] = h
		e.queues = append(e.queues, h.q)
	}
	for name, c := range cfg.Commands {
		cmd := newCommand(name, c, opts.DropEnv)
		cmd.q = newQueue("command "+name, 1, opts.QueueSize, opts.Logger,
			func(ctx context.Context, as []*alert) error { return cmd.run(ctx, as[0]) })
		e.commands[name] = cmd
		e.queues = append(e.queues, cmd.q)
	}
	for _, r := range rules {
		rs := &ruleState{rule: r, series: map[uint64]*series{}}
		e.rules = append(e.rules, rs)
		if r.sel.measurement == "" {
			for m, sch := range measurements {
				if sch.sensor {
					e.interest[m] = append(e.interest[m], interest{rs: rs})
				}
			}
		} else {
			e.interest[r.sel.measurement] = append(e.interest[r.sel.measurement], interest{rs: rs})
		}
		if r.kind == condBlindSpot {
			rs.refs = map[uint64]*series{}
			e.interest[r.ref.measurement] = append(e.interest[r.ref.measurement], interest{rs: rs, ref: true})
		}
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	for _, q := range e.queues {
		q.start(e.ctx, opts.MaxInFlight, &e.wg)
	}
	return e, nil
}

// Rules returns the number of rules evaluated.
func (e *Engine) Rules() int { return len(e.rules) }

// RuleStatus is one rule and its series that are firing or pending, for a
// status page or a metrics endpoint.
type RuleStatus struct {
	Name, Severity string
	// Field is the field the rule watches ("" for silence over every field).
	Field  string
	Alerts []AlertStatus
}

// AlertStatus is one series of a rule whose condition holds.
type AlertStatus struct {
	Measurement string
	Tags        []point.Tag
	// Firing is false while the condition has held for less than the
	// rule's `for` (pending).
	Firing bool
	// Since is when it fired, or when the condition began to hold.
	Since time.Time
	// Value and Threshold are those of the firing, when numeric.
	Value, Threshold float64
	HasValue         bool
}

// Status returns every rule, in configuration order, with its firing and
// pending series. It only reads; safe for concurrent use with Write.
func (e *Engine) Status() []RuleStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]RuleStatus, 0, len(e.rules))
	for _, rs := range e.rules {
		st := RuleStatus{Name: rs.Name, Severity: rs.Severity, Field: rs.sel.field}
		for _, s := range rs.list {
			switch s.state {
			case stateFiring:
				st.Alerts = append(st.Alerts, AlertStatus{Measurement: s.measurement, Tags: append([]point.Tag(nil), s.tags...),
					Firing: true, Since: s.firedAt, Value: s.value, Threshold: s.threshold, HasValue: s.hasValue})
			case statePending:
				st.Alerts = append(st.Alerts, AlertStatus{Measurement: s.measurement, Tags: append([]point.Tag(nil), s.tags...), Since: s.since})
			}
		}
		out = append(out, st)
	}
	return out
}

// SetJob attaches the job the pause and stop actions act on; nil detaches
// it. A job attached while a pause rule fires is paused at once, and one
// attached while a stop rule fires is stopped: the guard holds across the
// iterations of a run. SetJob does not resume the job it replaces.
func (e *Engine) SetJob(j Job) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.job, e.paused = j, false
	if j == nil {
		return
	}
	now := e.opts.Now()
	for h := range e.stopper {
		e.stopJob(h.rs, h.s, now)
		return
	}
	for h := range e.pausers {
		e.pauseJob(h.rs, h.s, now)
		return
	}
}

// Write evaluates every rule on one tick's points. It never blocks on
// webhooks, commands or the job's Stop: those run in the background.
func (e *Engine) Write(points []point.Point) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errors.New("alerts: write after close")
	}
	var newest time.Time // the batch's: a tick's time, also in a replay
	for i := range points {
		p := &points[i]
		if p.Time.After(newest) {
			newest = p.Time
		}
		ins := e.interest[p.Measurement]
		if len(ins) == 0 {
			continue
		}
		h := e.hash(p)
		for _, in := range ins {
			if in.ref {
				e.ingestRef(in.rs, p, h)
			} else {
				e.ingest(in.rs, p, h)
			}
		}
	}
	now := e.opts.Now()
	for _, rs := range e.rules {
		switch rs.kind {
		case condBlindSpot:
			for _, s := range rs.touched {
				s.touched = false
				e.step(rs, s, s.last, e.blindSpot(rs, s))
			}
			rs.touched = rs.touched[:0]
		case condSilent:
			for _, s := range rs.list {
				if !s.matched || !s.has {
					continue
				}
				age := now.Sub(s.last)
				e.step(rs, s, now, outcome{known: true, active: age > rs.silent, cleared: age <= rs.silent,
					value: age.Seconds(), threshold: rs.silent.Seconds(), numeric: true})
			}
		}
		if rs.firing > 0 && rs.kind != condSilent && !newest.IsZero() {
			e.clearStale(rs, newest)
		}
		if rs.firing > 0 && len(rs.webhooks) > 0 {
			e.repeat(rs, now)
		}
	}
	return nil
}

// staleTicks is how many sampling intervals a firing series may report
// nothing before its alert clears as unknown. A series is evaluated only
// when a point of it comes: without this, a GPU fallen off the bus (or a
// hwmon chip whose driver was unloaded) while its rule paused the job
// would keep the job stopped, and heatsink run waiting on it, for good.
// Prometheus resolves an alert whose series went stale alike. A rule on
// the silence itself (silent:) says that the series stopped.
const staleTicks = 10

// clearStale clears rs's firing series that reported nothing for
// staleTicks intervals before t.
func (e *Engine) clearStale(rs *ruleState, t time.Time) {
	after := staleTicks * e.opts.Interval
	for _, s := range rs.list {
		if s.state != stateFiring || s.last.IsZero() {
			continue
		}
		if age := t.Sub(s.last); age > after {
			e.step(rs, s, t, outcome{known: true, cleared: true, stale: age})
		}
	}
}

// Flush has nothing to make durable: alert points go out through Emit, and
// deliveries are under way on their own.
func (e *Engine) Flush() error { return nil }

// Close waits up to Options.CloseTimeout for webhooks and commands still
// queued or running to be delivered, then cancels them and logs, per
// action, how many alerts were not sent. Alerts still firing are left as
// they are.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.mu.Unlock()
	for _, q := range e.queues {
		q.close()
	}
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	t := time.NewTimer(e.opts.CloseTimeout)
	defer t.Stop()
	select {
	case <-done:
		e.cancel()
		return nil
	case <-t.C:
	}
	var running, queued int
	for _, q := range e.queues {
		qd, r := q.pending()
		running, queued = running+r, queued+qd
	}
	e.cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	// The workers have left (or are past hope): what is still queued was
	// never attempted.
	for _, q := range e.queues {
		if qd, r := q.pending(); qd+r > 0 {
			e.opts.Logger.Error("alert action not sent: engine closed", "action", q.action,
				"queued", qd, "running", r, "close_timeout", e.opts.CloseTimeout)
		}
	}
	return fmt.Errorf("alerts: %d webhook deliveries or commands still running after %v were cancelled, %d queued not sent",
		running, e.opts.CloseTimeout, queued)
}

// hash identifies a point's series without building its key: tags are
// combined order-independently, as the series key sorts them.
func (e *Engine) hash(p *point.Point) uint64 {
	var sum uint64
	for _, t := range p.Tags {
		x := maphash.String(e.seed, t.Key)*0x9E3779B97F4A7C15 + maphash.String(e.seed, t.Value)
		sum += x ^ x>>29
	}
	return maphash.String(e.seed, p.Measurement)*0xBF58476D1CE4E5B9 ^ sum
}

func (e *Engine) seriesOf(m map[uint64]*series, list *[]*series, sel *matcher, p *point.Point, h uint64, nvars int) *series {
	s := m[h]
	if s == nil {
		s = &series{
			key:         p.SeriesKey(),
			measurement: p.Measurement,
			tags:        append([]point.Tag(nil), p.Tags...),
			matched:     sel.matches(p),
			limits:      make([]float64, nvars),
			limitOK:     make([]bool, nvars),
		}
		m[h] = s
		*list = append(*list, s)
	}
	return s
}

func (m *matcher) matches(p *point.Point) bool {
	for _, f := range m.exact {
		if p.Tag(f.key) != f.value {
			return false
		}
	}
	for _, f := range m.re {
		if !f.re.MatchString(p.Tag(f.key)) {
			return false
		}
	}
	return true
}

func (e *Engine) ingest(rs *ruleState, p *point.Point, h uint64) {
	s := e.seriesOf(rs.series, &rs.list, &rs.sel, p, h, len(rs.vars))
	if !s.matched {
		return
	}
	if rs.kind == condSilent {
		if rs.sel.field == "" {
			s.last, s.has = p.Time, true
		} else if _, ok := p.Field(rs.sel.field); ok {
			s.last, s.has = p.Time, true
		}
		return
	}
	v, ok := p.Field(rs.sel.field)
	if !ok {
		return
	}
	switch rs.kind {
	case condIs:
		if v.Kind() != lineprotocol.Bool {
			return
		}
		s.num = 0
		if v.BoolV() {
			s.num = 1
		}
	case condEquals, condNotEquals:
		if v.Kind() != lineprotocol.String {
			return
		}
		s.str = v.StringV()
	case condAnyBits:
		switch v.Kind() {
		case lineprotocol.Int:
			s.bits = uint64(v.IntV())
		case lineprotocol.Uint:
			s.bits = v.UintV()
		default:
			return
		}
	default:
		if v.Kind() != lineprotocol.Float && v.Kind() != lineprotocol.Int && v.Kind() != lineprotocol.Uint {
			return
		}
		s.num, _ = point.Float(v)
	}
	s.last, s.has = p.Time, true
	for i, name := range rs.vars {
		if x, ok := p.Float(name); ok {
			s.limits[i], s.limitOK[i] = x, true
		}
	}
	if rs.window > 0 {
		s.push(p.Time, s.num, rs.window)
	}
	if rs.kind == condBlindSpot {
		if !s.touched {
			s.touched = true
			rs.touched = append(rs.touched, s)
		}
		return
	}
	e.step(rs, s, p.Time, e.evaluate(rs, s))
}

func (e *Engine) ingestRef(rs *ruleState, p *point.Point, h uint64) {
	s := e.seriesOf(rs.refs, &rs.refList, &rs.ref, p, h, 0)
	if !s.matched {
		return
	}
	x, ok := p.Float(rs.ref.field)
	if !ok {
		return
	}
	s.num, s.last, s.has = x, p.Time, true
	s.push(p.Time, x, rs.window)
	if rs.latestRef == nil || !s.last.Before(rs.latestRef.last) {
		rs.latestRef = s
	}
}

// push appends a sample and drops those older than the window.
func (s *series) push(t time.Time, v float64, window time.Duration) {
	if len(s.ts) == 0 {
		s.base = t
	}
	x := t.Sub(s.base).Seconds()
	s.ts, s.vs = append(s.ts, x), append(s.vs, v)
	from := x - window.Seconds()
	for s.start < len(s.ts) && s.ts[s.start] < from {
		s.start++
	}
	if s.start > 64 && s.start > len(s.ts)/2 {
		n := copy(s.ts, s.ts[s.start:])
		copy(s.vs, s.vs[s.start:])
		s.ts, s.vs, s.start = s.ts[:n], s.vs[:n], 0
	}
}

// fit returns the least-squares slope (units per second) of the samples in
// the window and the fitted value at the latest one. It reports false until
// the samples span half the window, so a rule does not act on the first
// two readings of a series.
func (s *series) fit(window time.Duration) (slope, last float64, ok bool) {
	ts, vs := s.ts[s.start:], s.vs[s.start:]
	n := len(ts)
	if n < 2 || ts[n-1]-ts[0] < window.Seconds()/2 {
		return 0, 0, false
	}
	intercept, slope := stat.LinearRegression(ts, vs, nil, false)
	if math.IsNaN(slope) || math.IsInf(slope, 0) {
		return 0, 0, false // every sample at one time: no slope to fit
	}
	return slope, intercept + slope*ts[n-1], true
}

// outcome is one evaluation of a rule on a series. Its message is built
// only when the state changes (describe), to keep the tick cheap.
type outcome struct {
	known     bool // false: a limit or enough samples are missing; keep the state
	active    bool // the firing condition holds
	cleared   bool // the clearing condition (past the hysteresis) holds
	numeric   bool // value and threshold mean something
	value     float64
	threshold float64
	// For the message: a forecast's limit and slope (per minute); a blind
	// spot's clause (rate or difference), rates and reference value.
	limit, rate, refRate, refValue float64
	byRate                         bool
	// stale is how long the series has reported nothing, when that
	// cleared it (clearStale).
	stale time.Duration
}

const never = time.Duration(1<<63 - 1)

func (e *Engine) evaluate(rs *ruleState, s *series) outcome {
	switch rs.kind {
	case condThreshold:
		e.cur = s
		thr, ok := rs.value.eval(e.lookup)
		if !ok {
			e.missingLimit(rs, s)
			return outcome{}
		}
		o := outcome{known: true, value: s.num, threshold: thr, numeric: true, active: rs.op.holds(s.num, thr)}
		cp := thr
		switch {
		case rs.clear != nil:
			if cp, ok = rs.clear.eval(e.lookup); !ok {
				e.missingLimit(rs, s)
				return outcome{}
			}
		case rs.op.upward():
			cp = thr - rs.margin
		default:
			cp = thr + rs.margin
		}
		o.cleared = !rs.op.holds(s.num, cp)
		return o
	case condRate:
		slope, _, ok := s.fit(rs.window)
		if !ok {
			return outcome{}
		}
		r := slope * 60
		cp := rs.perMin - rs.margin
		if !rs.op.upward() {
			cp = rs.perMin + rs.margin
		}
		return outcome{known: true, value: r, threshold: rs.perMin, numeric: true,
			active: rs.op.holds(r, rs.perMin), cleared: !rs.op.holds(r, cp)}
	case condForecast:
		e.cur = s
		thr, ok := rs.value.eval(e.lookup)
		if !ok {
			e.missingLimit(rs, s)
			return outcome{}
		}
		slope, fitted, ok := s.fit(rs.window)
		if !ok {
			return outcome{}
		}
		eta := never
		switch {
		case rs.op.holds(s.num, thr):
			eta = 0
		case rs.op.upward() && slope > 0 || !rs.op.upward() && slope < 0:
			eta = time.Duration(max(0, (thr-fitted)/slope) * float64(time.Second))
		}
		o := outcome{known: true, active: eta <= rs.within, cleared: eta > rs.clearWithin,
			value: eta.Seconds(), threshold: rs.within.Seconds(), numeric: true, limit: thr, rate: slope * 60}
		if eta == never {
			o.value = math.Inf(1) // not heading there: the alert point leaves value out
		}
		return o
	case condIs:
		want := 0.0
		if *rs.Is {
			want = 1
		}
		active := s.num == want
		return outcome{known: true, active: active, cleared: !active, value: s.num, threshold: want, numeric: true}
	case condEquals, condNotEquals:
		want := ""
		if rs.Equals != nil {
			want = *rs.Equals
		} else {
			want = *rs.NotEquals
		}
		active := (s.str == want) == (rs.kind == condEquals)
		return outcome{known: true, active: active, cleared: !active}
	case condAnyBits:
		set := s.bits & *rs.AnyBits
		return outcome{known: true, active: set != 0, cleared: set == 0, value: float64(set), threshold: float64(*rs.AnyBits), numeric: true}
	}
	return outcome{}
}

func (e *Engine) blindSpot(rs *ruleState, s *series) outcome {
	ref := rs.latestRef
	if ref == nil || s.last.Sub(ref.last) > rs.window {
		return outcome{}
	}
	o := outcome{numeric: true, refValue: ref.num}
	var rateActive, diffActive bool
	if rs.rising != nil {
		cs, _, ok1 := s.fit(rs.window)
		rsl, _, ok2 := ref.fit(rs.window)
		if ok1 && ok2 {
			o.known, o.byRate = true, true
			o.rate, o.refRate = cs*60, rsl*60
			rateActive = o.rate > *rs.rising && o.refRate < rs.still && o.refRate > -rs.still
			o.value, o.threshold = o.rate, *rs.rising
		}
	}
	if rs.difference != nil {
		d := s.num - ref.num
		diffActive = d > *rs.difference
		if diffActive && !rateActive || !o.known {
			o.value, o.threshold, o.byRate = d, *rs.difference, false
		}
		o.known = true
	}
	o.active = rateActive || diffActive
	o.cleared = !o.active
	return o
}

// describe says in words what an evaluation found, for the alert's message.
func (e *Engine) describe(rs *ruleState, s *series, o outcome) string {
	field := rs.sel.field
	if o.stale > 0 {
		return fmt.Sprintf("no %s point with %s for %.0fs: cleared, its state unknown", s.measurement, field, o.stale.Seconds())
	}
	switch rs.kind {
	case condThreshold:
		return fmt.Sprintf("%s = %g %s %g%s", field, s.num, opString(rs.op, o.active), o.threshold, source(rs.value))
	case condRate:
		return fmt.Sprintf("%s changes %+.3g/min over %v, %s %g/min", field, o.value, rs.window, opString(rs.op, o.active), rs.perMin)
	case condForecast:
		if math.IsInf(o.value, 1) {
			return fmt.Sprintf("%s = %g is not heading for %g%s", field, s.num, o.limit, source(rs.value))
		}
		return fmt.Sprintf("%s = %g reaches %g%s in %.0fs at %+.3g/min", field, s.num, o.limit, source(rs.value), o.value, o.rate)
	case condIs:
		return fmt.Sprintf("%s is %v", field, s.num == 1)
	case condEquals, condNotEquals:
		return fmt.Sprintf("%s is %q", field, s.str)
	case condAnyBits:
		return fmt.Sprintf("%s = %#x has bits %#x of %#x", field, s.bits, s.bits&*rs.AnyBits, *rs.AnyBits)
	case condSilent:
		return fmt.Sprintf("no %s point for %.1fs", s.measurement, o.value)
	case condBlindSpot:
		ref := rs.ref.measurement + "." + rs.ref.field
		if o.byRate {
			return fmt.Sprintf("%s rises %+.3g/min while %s moves %+.3g/min", field, o.rate, ref, o.refRate)
		}
		return fmt.Sprintf("%s = %g runs %.3g above %s = %g", field, s.num, o.value, ref, o.refValue)
	}
	return ""
}

func (e *Engine) missingLimit(rs *ruleState, s *series) {
	if s.warned {
		return
	}
	s.warned = true
	var missing []string
	for i, v := range rs.vars {
		if !s.limitOK[i] {
			missing = append(missing, v)
		}
	}
	e.opts.Logger.Info("alert rule cannot be evaluated on a series that reports no such limit",
		"rule", rs.Name, "series", s.key, "missing", strings.Join(missing, ","))
}

// source shows where a threshold on a device limit came from.
func source(e *expr) string {
	if len(e.vars) == 0 {
		return ""
	}
	return " (" + e.src + ")"
}

func opString(op cmpOp, holds bool) string {
	if !holds {
		op = op.inverse()
	}
	for s, o := range opNames {
		if o == op {
			return s
		}
	}
	return "?"
}

// step advances a series' alert state with one evaluation at time t.
func (e *Engine) step(rs *ruleState, s *series, t time.Time, o outcome) {
	if !o.known {
		return
	}
	switch s.state {
	case stateOK, statePending:
		if !o.active {
			s.state = stateOK
			return
		}
		if s.state == stateOK {
			s.state, s.since = statePending, t
		}
		if t.Sub(s.since) >= rs.For {
			s.state, s.firedAt = stateFiring, t
			rs.firing++
			e.record(rs, s, t, o, schema.StateFiring)
		}
	case stateFiring:
		if o.cleared {
			s.state = stateOK
			rs.firing--
			e.record(rs, s, t, o, schema.StateCleared)
		}
	}
}

// alert is one firing or clearing, as actions receive it.
type alert struct {
	Rule, Severity, State  string
	Measurement, Field     string
	Series                 string
	Tags                   []point.Tag
	Value, Threshold       float64
	HasValue               bool
	Message                string
	Time, StartsAt, EndsAt time.Time
}

func (e *Engine) record(rs *ruleState, s *series, t time.Time, o outcome, state string) {
	s.value, s.threshold, s.hasValue = o.value, o.threshold, o.numeric
	msg := e.describe(rs, s, o)
	if rs.Summary != "" {
		msg = rs.Summary + ": " + msg
	}
	a := &alert{Rule: rs.Name, Severity: rs.Severity, State: state, Measurement: s.measurement,
		Field: rs.sel.field, Series: s.key, Tags: s.tags, Value: o.value, Threshold: o.threshold,
		HasValue: o.numeric, Message: msg, Time: t, StartsAt: s.firedAt}
	if state == schema.StateCleared {
		a.EndsAt = t
	}
	if e.opts.Emit != nil {
		e.opts.Emit.Emit(a.point())
	}
	kind := schema.KindAlertFired
	level := map[string]slog.Level{"info": slog.LevelInfo, "warning": slog.LevelWarn, "critical": slog.LevelError}[rs.Severity]
	if state == schema.StateCleared {
		kind, level = schema.KindAlertCleared, slog.LevelInfo
	}
	attrs := map[string]string{"rule": rs.Name, "severity": rs.Severity, "series": s.key}
	args := []any{"rule", rs.Name, "severity", rs.Severity, "series", s.key}
	if o.numeric {
		attrs["value"] = strconv.FormatFloat(o.value, 'g', -1, 64)
		attrs["threshold"] = strconv.FormatFloat(o.threshold, 'g', -1, 64)
		args = append(args, "value", o.value, "threshold", o.threshold)
	}
	e.event(rundir.Event{Time: t, Kind: kind, Message: msg, Attrs: attrs})
	e.opts.Logger.Log(context.Background(), level, "alert "+state+": "+msg, args...)

	for i, name := range rs.webhooks {
		e.notify(e.webhooks[name], a)
		if len(s.sent) != len(rs.webhooks) {
			s.sent = make([]time.Time, len(rs.webhooks))
		}
		s.sent[i] = t
	}
	for _, name := range rs.commands {
		e.commands[name].q.push(a)
	}
	h := holder{rs, s}
	switch {
	case rs.pause && state == schema.StateFiring:
		e.pausers[h] = struct{}{}
		if len(e.pausers) == 1 {
			e.pauseJob(rs, s, t)
		}
	case rs.pause:
		delete(e.pausers, h)
		if len(e.pausers) == 0 {
			e.resumeJob(rs, s, t)
		}
	case rs.stop && state == schema.StateFiring:
		e.stopper[h] = struct{}{}
		e.stopJob(rs, s, t)
	case rs.stop:
		delete(e.stopper, h)
	}
	if state == schema.StateFiring {
		for _, target := range rs.holds {
			e.holdJob(rs, s, t, target)
		}
	}
}

func (e *Engine) holdJob(rs *ruleState, s *series, t time.Time, target string) {
	hj, ok := e.job.(Holder)
	if !ok {
		e.opts.Logger.Info("alert wants to hold a component, but no job that can be held is attached: not applicable", "rule", rs.Name, "series", s.key, "hold", target)
		return
	}
	err := hj.Hold(target)
	e.guardEvent(schema.KindGuardHold, rs, s, t, fmt.Sprintf("guard holds %s: %s fired on %s", target, rs.Name, s.key), err)
}

// repeat resends firing alerts to webhooks that want reminders.
func (e *Engine) repeat(rs *ruleState, now time.Time) {
	for _, s := range rs.list {
		if s.state != stateFiring {
			continue
		}
		for i, name := range rs.webhooks {
			w := e.webhooks[name]
			if w.repeat <= 0 || now.Sub(s.sent[i]) < w.repeat {
				continue
			}
			s.sent[i] = now
			w.q.pushReminder(&alert{Rule: rs.Name, Severity: rs.Severity, State: schema.StateFiring, Measurement: s.measurement,
				Field: rs.sel.field, Series: s.key, Tags: s.tags, Value: s.value, Threshold: s.threshold,
				HasValue: s.hasValue, Message: "still firing", Time: now, StartsAt: s.firedAt})
		}
	}
}

// notify queues the alert for the webhook: it never waits on the network.
func (e *Engine) notify(w *webhook, a *alert) {
	w.q.push(a)
}

func (e *Engine) event(ev rundir.Event) {
	if e.opts.OnEvent != nil {
		e.opts.OnEvent(ev)
	}
}

func (e *Engine) guardEvent(kind string, rs *ruleState, s *series, t time.Time, msg string, err error) {
	attrs := map[string]string{"rule": rs.Name, "series": s.key}
	level := slog.LevelWarn
	if err != nil {
		attrs["error"] = err.Error()
		msg += ": " + err.Error()
		level = slog.LevelError
	}
	e.event(rundir.Event{Time: t, Kind: kind, Message: msg, Attrs: attrs})
	e.opts.Logger.Log(context.Background(), level, msg, "rule", rs.Name, "series", s.key)
}

func (e *Engine) pauseJob(rs *ruleState, s *series, t time.Time) {
	if e.job == nil {
		e.opts.Logger.Info("alert wants to pause the job, but no job is attached: not applicable", "rule", rs.Name, "series", s.key)
		return
	}
	err := e.job.Pause()
	e.paused = err == nil
	e.guardEvent(schema.KindGuardPause, rs, s, t, fmt.Sprintf("guard paused the job: %s fired on %s", rs.Name, s.key), err)
}

func (e *Engine) resumeJob(rs *ruleState, s *series, t time.Time) {
	if e.job == nil || !e.paused {
		return
	}
	err := e.job.Resume()
	e.paused = err != nil
	e.guardEvent(schema.KindGuardResume, rs, s, t, fmt.Sprintf("guard resumed the job: %s cleared on %s and no pause rule fires", rs.Name, s.key), err)
}

func (e *Engine) stopJob(rs *ruleState, s *series, t time.Time) {
	j := e.job
	if j == nil {
		e.opts.Logger.Info("alert wants to stop the job, but no job is attached: not applicable", "rule", rs.Name, "series", s.key)
		return
	}
	e.job, e.paused = nil, false
	e.guardEvent(schema.KindGuardStop, rs, s, t, fmt.Sprintf("guard stops the job: %s fired on %s", rs.Name, s.key), nil)
	// Stop may wait out a grace period: never on the tick.
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		if err := j.Stop(); err != nil {
			e.opts.Logger.Error("guard could not stop the job", "rule", rs.Name, "err", err)
		}
	}()
}

// point renders the alert as the data model's alert point.
func (a *alert) point() point.Point {
	return schema.AlertPoint{Time: a.Time, Rule: a.Rule, Severity: a.Severity, Measurement: a.Measurement,
		Tags: a.Tags, State: a.State, HasValue: a.HasValue, Value: a.Value, Threshold: a.Threshold,
		Message: a.Message}.Point()
}
