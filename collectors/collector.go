package collectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Options configure a Collector. The zero value samples every second.
type Options struct {
	// Interval between ticks; ticks fall on multiples of it on the wall clock.
	Interval time.Duration
	// Deadline for each source's sample, from the tick; default Interval/2.
	Deadline time.Duration
	// FlushEvery is how often sinks are flushed (synced or sent); default 5 s.
	FlushEvery time.Duration
	// MaxBackoff caps the wait before a failed source is tried again; default 30 s.
	MaxBackoff time.Duration
	// Host is added as the host tag to every point that lacks one; default os.Hostname.
	Host string
	// Tags are added, like Host, to every point that lacks them: a site's
	// cluster or rack, or the job running on the node (see SetTags).
	Tags []point.Tag
	// Ticks stops the collector after this many ticks when positive.
	Ticks int
	// Logger receives source failures and recoveries; default slog.Default.
	Logger *slog.Logger
	// Outbox receives the points emitted from outside the tick loop; a
	// new one when nil. Give one to build what emits before the collector.
	Outbox *Outbox
}

func (o *Options) fill() {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Deadline <= 0 || o.Deadline > o.Interval {
		o.Deadline = o.Interval / 2
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = 5 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Outbox == nil {
		o.Outbox = &Outbox{}
	}
}

// Collector samples sources on a fixed tick and writes the points to sinks.
type Collector struct {
	opts    Options
	sources []*sourceState
	sinks   []Sink
	results chan result

	mu     sync.Mutex
	tags   []point.Tag // Options.Tags, replaced by SetTags
	tagger Tagger      // set by SetTagger
	next   *reconfig   // set by Reconfigure, applied by the tick loop
	snap   snapshot    // what Stats and SourceStatus report while Run runs

	stats Stats
	batch []point.Point
	// unavailable gathers the sources found absent in the first tick, so
	// that a VM's five missing sources are one log line, not five.
	unavailable []string
	// retired holds removed sources whose last sample is still in flight;
	// closing waits for removed sources and sinks being closed.
	retired map[*sourceState]bool
	closing sync.WaitGroup
}

// reconfig is a replacement of the sources and sinks waiting for a tick boundary.
type reconfig struct {
	sources []Source
	sinks   []Sink
}

// snapshot is the collector's state as of the last tick, readable from any
// goroutine (a health endpoint) while the tick loop runs.
type snapshot struct {
	stats    Stats
	status   []SourceStatus
	lastTick time.Time
}

// Stats counts what the collector did; see Collector.Stats.
type Stats struct {
	Ticks       int
	MissedTicks int
	Points      int
	SinkErrors  int
	// LastSinkError is when a sink last failed a write or flush, and why.
	LastSinkError    time.Time
	LastSinkErrorMsg string
}

type sourceState struct {
	src         Source
	busy        bool // a sample is in flight (possibly past its deadline)
	discovered  bool
	failures    int // consecutive
	retryAt     time.Time
	lastErr     string
	lastOK      time.Time
	unsupported bool
	errors      uint64
	timeouts    uint64
	buf         []point.Point

	// Of the current tick:
	launched bool
	res      *result
}

type result struct {
	s       *sourceState
	tick    int
	points  []point.Point
	err     error
	latency time.Duration
	// discovered is set when this sample ran a successful Discover.
	discovered bool
}

// New returns a collector of the given sources and sinks.
func New(opts Options, sources []Source, sinks []Sink) *Collector {
	opts.fill()
	// Room for every source's result and those of sources a Reconfigure
	// adds or retires; a sample finding it full waits for the next tick.
	c := &Collector{opts: opts, sinks: sinks, results: make(chan result, 2*len(sources)+16),
		tags: opts.Tags, retired: map[*sourceState]bool{}}
	for _, s := range sources {
		c.sources = append(c.sources, &sourceState{src: s})
	}
	c.snap.status = c.buildStatus(nil)
	return c
}

// SetTags replaces Options.Tags from the next tick on, for the points of
// that tick and those emitted before it: a node agent tags everything it
// records with the job the scheduler runs on the node while the job runs.
// Safe for concurrent use.
func (c *Collector) SetTags(tags ...point.Tag) {
	c.mu.Lock()
	c.tags = append([]point.Tag(nil), tags...)
	c.mu.Unlock()
}

// Tagger gives each point the tags it lacks that depend on the point
// itself: a node agent tags a GPU's points with the Slurm jobs holding
// that GPU, and the node's shared readings with every job on the node.
type Tagger interface {
	TagsFor(p *point.Point) []point.Tag
}

// SetTagger replaces the tagger (nil: none) from the next tick on, like
// SetTags; the tags it gives a point go after SetTags's, and neither
// replaces a tag the point has. Safe for concurrent use.
func (c *Collector) SetTagger(t Tagger) {
	c.mu.Lock()
	c.tagger = t
	c.mu.Unlock()
}

// Tags returns the extra tags in force.
func (c *Collector) Tags() []point.Tag {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]point.Tag(nil), c.tags...)
}

// Reconfigure replaces the sources and sinks at the next tick boundary,
// so a running agent can reload its configuration without losing a tick.
// Safe for concurrent use; it returns at once. A source or sink present in
// both the old and the new list (the same value) keeps its state: no
// re-discovery, no reset of derived rates. A source no longer listed is
// closed (when it is a Closer) as soon as its sample in flight, if any,
// has returned; a sink no longer listed is flushed and closed after the
// last tick written to it, in the background, and Run waits for both
// before it returns. A later call before the boundary replaces an earlier one.
func (c *Collector) Reconfigure(sources []Source, sinks []Sink) {
	c.mu.Lock()
	c.next = &reconfig{sources: append([]Source(nil), sources...), sinks: append([]Sink(nil), sinks...)}
	c.mu.Unlock()
}

// applyReconfig swaps in a pending Reconfigure; it runs on the tick
// goroutine between ticks.
func (c *Collector) applyReconfig() {
	c.mu.Lock()
	next := c.next
	c.next = nil
	c.mu.Unlock()
	if next == nil {
		return
	}
	kept := map[Source]*sourceState{}
	for _, s := range c.sources {
		kept[s.src] = s
	}
	srcs := make([]*sourceState, 0, len(next.sources))
	for _, src := range next.sources {
		if s, ok := kept[src]; ok {
			srcs = append(srcs, s)
			delete(kept, src)
			continue
		}
		srcs = append(srcs, &sourceState{src: src})
	}
	for _, s := range kept {
		if s.busy {
			c.retired[s] = true // closed when its sample returns
			continue
		}
		c.closeSource(s)
	}
	keptSinks := map[Sink]bool{}
	for _, k := range next.sinks {
		keptSinks[k] = true
	}
	for _, k := range c.sinks {
		if keptSinks[k] {
			continue
		}
		c.closing.Add(1)
		go func() {
			defer c.closing.Done()
			err := k.Flush()
			if cerr := k.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				c.opts.Logger.Error("closing a sink removed by reconfiguration", "sink", fmt.Sprintf("%T", k), "err", err)
			}
		}()
	}
	c.sources, c.sinks = srcs, next.sinks
	c.opts.Logger.Info("collector reconfigured", "sources", len(srcs), "sinks", len(next.sinks))
}

// Sources returns the sources in force, after any Reconfigure; call it
// after Run returns to close them.
func (c *Collector) Sources() []Source {
	out := make([]Source, len(c.sources))
	for i, s := range c.sources {
		out[i] = s.src
	}
	return out
}

// Sinks returns the sinks in force, after any Reconfigure; call it after
// Run returns to close them.
func (c *Collector) Sinks() []Sink { return append([]Sink(nil), c.sinks...) }

func (c *Collector) closeSource(s *sourceState) {
	if cl, ok := s.src.(Closer); ok {
		if err := cl.Close(); err != nil {
			c.opts.Logger.Warn("closing a source removed by reconfiguration", "source", s.src.Name(), "err", err)
		}
	}
}

// Interval returns the tick interval in force.
func (c *Collector) Interval() time.Duration { return c.opts.Interval }

// Emit queues points for the sinks; they are written with the next tick, or
// when Run returns. Safe for concurrent use.
func (c *Collector) Emit(points ...point.Point) { c.opts.Outbox.Emit(points...) }

// Stats returns counters of the run so far, as of the last tick. Safe for
// concurrent use.
func (c *Collector) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap.stats
}

// LastTick returns when the last tick was written; zero before the first.
// A health check compares it with the interval to tell a stalled collector.
// Safe for concurrent use.
func (c *Collector) LastTick() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap.lastTick
}

// updateSnapshot publishes the tick loop's state for Stats and SourceStatus.
func (c *Collector) updateSnapshot(tick time.Time) {
	status := c.buildStatus(make([]SourceStatus, 0, len(c.sources)))
	c.mu.Lock()
	c.snap.stats, c.snap.status = c.stats, status
	if !tick.IsZero() {
		c.snap.lastTick = tick
	}
	c.mu.Unlock()
}

// Run ticks until ctx is cancelled (or Options.Ticks ticks have passed), then
// writes any emitted points, flushes every sink and returns. It does not close
// the sinks or sources in force (see Sources and Sinks); it closes only those
// a Reconfigure removed. Sink errors never stop it; they are logged and counted.
func (c *Collector) Run(ctx context.Context) error {
	iv := c.opts.Interval
	base := nextBoundary(time.Now(), iv)
	timer := time.NewTimer(time.Until(base))
	defer timer.Stop()
	lastFlush := time.Now()
	var tickNo int
	for k := 0; ; {
		due := base.Add(time.Duration(k) * iv)
		timer.Reset(time.Until(due))
		select {
		case <-ctx.Done():
			return c.finish()
		case <-timer.C:
		}
		now := time.Now()
		// A wall-clock step (NTP, suspend) makes wall and monotonic time
		// disagree; re-anchor the schedule on the wall clock's boundaries.
		if skew := now.Round(0).Sub(due.Round(0)) - now.Sub(due); skew > iv/4 || skew < -iv/4 {
			c.opts.Logger.Warn("wall clock stepped; re-aligning ticks", "step", skew)
			base, k = nextBoundary(now, iv), 0
			continue
		}
		late := now.Sub(due)
		if late >= iv {
			skipped := int(late / iv)
			c.stats.MissedTicks += skipped
			k += skipped
			c.opts.Logger.Warn("collector fell behind", "missed_ticks", skipped)
			continue
		}
		// The stamp is the scheduled boundary, never the wake-up time rounded:
		// a tick woken late must not take the next tick's timestamp.
		stamp := due.Round(0)
		tickNo++
		c.tick(ctx, tickNo, stamp, now, late)
		if time.Since(lastFlush) >= c.opts.FlushEvery {
			c.flush()
			lastFlush = time.Now()
		}
		k++
		if c.opts.Ticks > 0 && tickNo >= c.opts.Ticks {
			return c.finish()
		}
	}
}

// nextBoundary returns the first wall-clock multiple of iv after now, with a
// monotonic reading, so waiting for it is driven by the monotonic clock.
func nextBoundary(now time.Time, iv time.Duration) time.Time {
	return now.Add(now.Truncate(iv).Add(iv).Sub(now))
}

func (c *Collector) tick(ctx context.Context, tickNo int, stamp, woke time.Time, lag time.Duration) {
	c.applyReconfig()
	tctx, cancel := context.WithDeadline(ctx, woke.Add(c.opts.Deadline))
	defer cancel()
	// Samples that outlived an earlier tick's deadline and have returned
	// since are settled first, so that their sources are free to be
	// launched now. Waiting for them only below would miss them whenever
	// this tick launches nothing (every source still busy): their sources
	// would then stay busy for good.
	c.drainLate(woke)
	launched := 0
	for _, s := range c.sources {
		s.launched, s.res = false, nil
		if s.busy {
			// Still inside an earlier sample: it hangs; this tick loses it.
			s.timeouts++
			continue
		}
		if woke.Before(s.retryAt) {
			continue
		}
		s.busy, s.launched = true, true
		launched++
		go c.sample(tctx, s, tickNo, stamp)
	}
	// Results of earlier ticks' late samples are drained here too.
	deadline := time.NewTimer(time.Until(woke.Add(c.opts.Deadline)))
	defer deadline.Stop()
	for got := 0; got < launched; {
		select {
		case r := <-c.results:
			if !c.late(r, tickNo, woke) {
				r.s.res = &r
				got++
			}
		case <-deadline.C:
			got = launched
		}
	}

	batch := c.batch[:0]
	for _, s := range c.sources {
		if !s.launched {
			if s.busy {
				batch = append(batch, c.sourceHealth(s, stamp, nil))
			}
			continue
		}
		if s.res == nil {
			s.timeouts++
			c.noteError(s, fmt.Errorf("no sample within %v", c.opts.Deadline))
			batch = append(batch, c.sourceHealth(s, stamp, nil))
			continue
		}
		r := s.res
		batch = append(batch, r.points...)
		c.settle(*r, woke, true)
		batch = append(batch, c.sourceHealth(s, stamp, r))
	}
	tp := point.New(schema.CollectorTick, stamp)
	tp.AddFloat(schema.FieldLagS, lag.Seconds())
	tp.AddUint(schema.FieldMissedTicksTotal, uint64(c.stats.MissedTicks))
	tp.AddInt(schema.FieldPoints, int64(len(batch)))
	batch = append(batch, tp)
	for _, k := range c.sinks {
		if r, ok := k.(SelfReporter); ok {
			batch = r.SelfMetrics(stamp, batch)
		}
	}
	batch = c.opts.Outbox.drain(batch)
	c.write(batch)
	if c.stats.Ticks == 0 && len(c.unavailable) > 0 {
		c.opts.Logger.Info("sources unavailable", "sources", strings.Join(c.unavailable, ", "),
			"why", "not on this machine; heatsink sensors (or --log-level debug) says why")
		c.unavailable = nil
	}
	c.stats.Ticks++
	c.batch = batch
	c.updateSnapshot(stamp)
}

// drainLate settles, without waiting, every result that has come back
// since the last tick: all are late, their ticks written already.
func (c *Collector) drainLate(woke time.Time) {
	for {
		select {
		case r := <-c.results:
			c.late(r, -1, woke)
		default:
			return
		}
	}
}

// late frees r's source and, unless r belongs to tick tickNo, settles it
// as a late result, whose points are dropped (their tick was written
// without them) and which counts only for the source's health; it
// reports whether it did.
func (c *Collector) late(r result, tickNo int, woke time.Time) bool {
	r.s.busy = false
	if c.retired[r.s] {
		// Removed by Reconfigure while sampling: its points are of a
		// source no longer configured.
		delete(c.retired, r.s)
		c.closeSource(r.s)
		return true
	}
	if r.tick == tickNo {
		return false
	}
	c.settle(r, woke, false)
	return true
}

func (c *Collector) sample(ctx context.Context, s *sourceState, tickNo int, stamp time.Time) {
	t0 := time.Now()
	r := result{s: s, tick: tickNo}
	defer func() {
		if p := recover(); p != nil {
			r.err = fmt.Errorf("panic: %v", p)
			r.points = nil
		}
		r.latency = time.Since(t0)
		c.results <- r
	}()
	if !s.discovered {
		if err := s.src.Discover(ctx); err != nil {
			r.err = fmt.Errorf("discover: %w", err)
			return
		}
		r.discovered = true // recorded by settle, on the tick goroutine
	}
	r.points, r.err = s.src.Sample(ctx, stamp, s.buf[:0])
}

// settle updates a source's failure state from its result. A sample that
// produced nothing and failed sends the source back to discovery after a
// backoff; partial results keep it going.
func (c *Collector) settle(r result, now time.Time, onTime bool) {
	s := r.s
	if r.discovered {
		s.discovered = true
	}
	if onTime && r.points != nil {
		s.buf = r.points
	}
	if r.err == nil {
		if s.failures > 0 {
			c.opts.Logger.Info("source recovered", "source", s.src.Name(), "after_failures", s.failures)
		}
		s.failures, s.lastErr, s.unsupported = 0, "", false
		s.lastOK = now
		return
	}
	c.noteError(s, r.err)
	if len(r.points) > 0 {
		return
	}
	s.failures++
	s.discovered = false
	backoff := c.opts.Interval << min(s.failures-1, 16)
	if errors.Is(r.err, errors.ErrUnsupported) {
		backoff = c.opts.MaxBackoff
	}
	s.retryAt = now.Add(min(backoff, c.opts.MaxBackoff))
}

// noteError counts an error and logs it when it differs from the last one,
// so a source failing every second does not flood the log.
func (c *Collector) noteError(s *sourceState, err error) {
	// Absent hardware is no error to count: errors_total climbing on every
	// node without a GPU would make a rate alert useless.
	if !errors.Is(err, errors.ErrUnsupported) {
		s.errors++
	}
	if msg := err.Error(); msg != s.lastErr {
		s.lastErr = msg
		s.unsupported = errors.Is(err, errors.ErrUnsupported)
		if s.unsupported {
			// Absent hardware is the normal case on most machines, not a
			// fault. The first tick's are summed up in one line after it.
			if c.stats.Ticks == 0 {
				c.unavailable = append(c.unavailable, s.src.Name())
				c.opts.Logger.Debug("source unavailable", "source", s.src.Name(), "reason", msg)
				return
			}
			c.opts.Logger.Info("source unavailable", "source", s.src.Name(), "reason", msg)
			return
		}
		c.opts.Logger.Warn("source error", "source", s.src.Name(), "err", msg)
	}
}

// SourceStatus is the state of one source, for run.json and status output.
type SourceStatus struct {
	Name string
	// OK is true when the last sample succeeded.
	OK bool
	// Unavailable is true when the hardware or its library is absent.
	Unavailable bool
	// LastError is the most recent error, "" when OK.
	LastError string
	Errors    uint64
	Timeouts  uint64
	// LastOK is when a sample last succeeded; zero if none has.
	LastOK time.Time
}

// SourceStatus reports each source's state as of the last tick, in the
// order of the sources in force. Safe for concurrent use.
func (c *Collector) SourceStatus() []SourceStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]SourceStatus(nil), c.snap.status...)
}

func (c *Collector) buildStatus(out []SourceStatus) []SourceStatus {
	for _, s := range c.sources {
		out = append(out, SourceStatus{Name: s.src.Name(), OK: s.lastErr == "" && s.discovered,
			Unavailable: s.unsupported, LastError: s.lastErr, Errors: s.errors, Timeouts: s.timeouts, LastOK: s.lastOK})
	}
	return out
}

func (c *Collector) sourceHealth(s *sourceState, stamp time.Time, r *result) point.Point {
	p := point.New(schema.CollectorSource, stamp)
	p.Tags = []point.Tag{{Key: schema.TagSource, Value: s.src.Name()}}
	if r != nil {
		p.AddFloat(schema.FieldLatencyS, r.latency.Seconds())
		p.AddInt(schema.FieldPoints, int64(len(r.points)))
	}
	// A source whose hardware or library this node lacks (no GPU, no
	// NVMe) is unavailable, not failing: it says available=false and no
	// ok, so an alert on ok == 0 fires only on sources that are there.
	absent := s.unsupported && (r == nil || r.err != nil)
	p.AddBool(schema.FieldAvailable, !absent)
	if !absent {
		p.AddBool(schema.FieldOK, r != nil && r.err == nil)
	}
	p.AddUint(schema.FieldErrorsTotal, s.errors)
	p.AddUint(schema.FieldTimeoutsTotal, s.timeouts)
	if sr, ok := s.src.(StallReporter); ok {
		p.AddInt(schema.FieldStalledReads, int64(sr.Stalled()))
	}
	return p
}

func (c *Collector) write(batch []point.Point) {
	host := c.opts.Host
	c.mu.Lock()
	extra := c.tags // replaced, never modified, by SetTags
	tagger := c.tagger
	c.mu.Unlock()
	for i := range batch {
		if host != "" && batch[i].Tag("host") == "" {
			// Clip the slice so the append copies instead of writing into a
			// tag array a source may reuse.
			t := batch[i].Tags
			batch[i].Tags = append(t[:len(t):len(t)], point.Tag{Key: "host", Value: host})
		}
		for _, x := range extra {
			if x.Value != "" && batch[i].Tag(x.Key) == "" {
				t := batch[i].Tags
				batch[i].Tags = append(t[:len(t):len(t)], x)
			}
		}
		if tagger == nil {
			continue
		}
		for _, x := range tagger.TagsFor(&batch[i]) {
			if x.Value != "" && batch[i].Tag(x.Key) == "" {
				t := batch[i].Tags
				batch[i].Tags = append(t[:len(t):len(t)], x)
			}
		}
	}
	c.stats.Points += len(batch)
	for _, k := range c.sinks {
		if err := k.Write(batch); err != nil {
			c.stats.SinkErrors++
			c.stats.LastSinkError, c.stats.LastSinkErrorMsg = time.Now(), fmt.Sprintf("%T: %v", k, err)
			c.opts.Logger.Error("sink write failed", "sink", fmt.Sprintf("%T", k), "err", err)
		}
	}
}

func (c *Collector) flush() {
	for _, k := range c.sinks {
		if err := k.Flush(); err != nil {
			c.stats.SinkErrors++
			c.stats.LastSinkError, c.stats.LastSinkErrorMsg = time.Now(), fmt.Sprintf("%T: %v", k, err)
			c.opts.Logger.Error("sink flush failed", "sink", fmt.Sprintf("%T", k), "err", err)
		}
	}
}

func (c *Collector) finish() error {
	// A reconfiguration that missed the last tick still takes effect, so
	// the caller's new sinks are the ones flushed and its old ones closed.
	c.applyReconfig()
	if rest := c.opts.Outbox.drain(nil); len(rest) > 0 {
		c.write(rest)
	}
	var errs []error
	for _, k := range c.sinks {
		if err := k.Flush(); err != nil {
			errs = append(errs, fmt.Errorf("flush %T: %w", k, err))
		}
	}
	c.closing.Wait() // sinks removed by Reconfigure
	c.updateSnapshot(time.Time{})
	return errors.Join(errs...)
}
