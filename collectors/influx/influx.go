// Package influx sends heatsink's points to InfluxDB (2.x, or 1.8 and
// later through its v2 API) without ever losing one to an outage: every
// point goes to a durable local spool first (collectors/spool), and a
// shipper goroutine sends the spool in batches with the client's blocking
// write API, retrying with backoff for as long as it takes. The client's
// own asynchronous WriteAPI is not used: it drops batches after a few
// minutes of outage.
//
// Each destination (server, organisation, bucket) has its own spool, a
// subdirectory of the spool root, so points recorded for one destination
// never reach another by themselves. When the spool cannot take points (a
// full disk, its size cap) they go to the server directly: only what
// neither takes is lost, and that is counted and logged.
//
// Delivery is at least once: a batch whose reply was lost is sent again,
// which InfluxDB absorbs (a point with the same series and timestamp
// overwrites). The package also reads runs back out of InfluxDB (Export).
package influx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api"
	http2 "github.com/influxdata/influxdb-client-go/v2/api/http"
	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/heatsink-hpc/heatsink/collectors/spool"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Options configure a Sink beyond its Config.
type Options struct {
	Config
	// Logger receives outages, recoveries and losses; default slog.Default.
	Logger *slog.Logger
	// MetricsEvery is how often the sink reports itself (influx_sink points
	// and spool alerts) when the collector asks (SelfMetrics); default 10s.
	MetricsEvery time.Duration
	// DrainTimeout bounds how long Close waits for unsent points to go out;
	// what is left stays in the spool for the next start. Default 10s.
	DrainTimeout time.Duration
	// MinRetryInterval is the first backoff after a failed write; default 500ms.
	MinRetryInterval time.Duration
	// SpoolSyncEvery is passed to the spool (0: fsync every Write).
	SpoolSyncEvery time.Duration
	// SpoolSegmentBytes is passed to the spool (0: its default).
	SpoolSegmentBytes int64
	// DirectMaxBytes bounds the points the spool refused that wait in
	// memory to be sent directly; default DefaultDirectMaxBytes.
	DirectMaxBytes int
}

// Stats count what the sink did since it was opened.
type Stats struct {
	Spool spool.Stats
	// SentPoints were acknowledged by the server.
	SentPoints int64
	// Retries counts failed write attempts that will be (or were) retried.
	Retries int64
	// RejectedPoints were refused by the server as invalid (HTTP 400/422)
	// and will not be retried; each rejection is logged.
	RejectedPoints int64
	// BypassedPoints are the points Write could not append to the spool (a
	// full disk, the size cap); of them, DirectPoints went to the server
	// directly (they count in SentPoints too) and LostPoints went nowhere:
	// the server did not take them before memory for them ran out or the
	// sink closed.
	BypassedPoints int64
	DirectPoints   int64
	LostPoints     int64
	// WaitingPoints are bypassed points still in memory, neither sent nor lost yet.
	WaitingPoints int64
}

// Sink is a collectors.Sink writing to InfluxDB through a durable spool.
type Sink struct {
	cfg    Config
	opts   Options
	log    *slog.Logger
	spool  *spool.Spool
	client influxdb2.Client
	writer api.WriteAPIBlocking

	wmu     sync.Mutex
	enc     point.Encoder
	scratch []point.Field

	flushNow chan struct{}
	// abortCtx ends when Close gives up waiting: stop sending now.
	abortCtx context.Context
	abortNow context.CancelFunc
	abort    <-chan struct{}
	done     chan struct{} // closed when the shipper has returned
	closed   atomic.Bool
	draining atomic.Bool

	sent     atomic.Int64
	retries  atomic.Int64
	rejected atomic.Int64
	lastOK   atomic.Bool
	lastErr  atomic.Pointer[string] // why the last write failed, while lastOK is false

	// The points the spool refused: waiting in direct for directly sending.
	direct        *directQueue
	directDone    chan struct{} // closed when sendDirect has returned
	bypassed      atomic.Int64
	directSent    atomic.Int64
	lost          atomic.Int64
	spoolRefusing atomic.Bool
	spoolErr      atomic.Pointer[string] // why the spool last refused points

	// SelfMetrics' state; only the collector's tick goroutine calls it.
	lastReport   time.Time
	lastBypassed int64
	lastLost     int64
	alerting     bool
}

// New opens the spool and starts the shipper. It does not contact the
// server; call Check for that. Points left in the spool by an earlier run
// (a crash, an outage) are sent first.
func New(o Options) (*Sink, error) {
	cfg := o.Config.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("influx: %w", err)
	}
	if !cfg.Enabled() {
		return nil, errors.New("influx: no url configured")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MetricsEvery <= 0 {
		o.MetricsEvery = 10 * time.Second
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 10 * time.Second
	}
	if o.MinRetryInterval <= 0 {
		o.MinRetryInterval = 500 * time.Millisecond
	}
	if o.DirectMaxBytes <= 0 {
		o.DirectMaxBytes = DefaultDirectMaxBytes
	}
	if err := cfg.Token.Resolve(); err != nil {
		return nil, fmt.Errorf("influx token: %w", err)
	}
	client, err := newClient(cfg)
	if err != nil {
		return nil, err
	}
	dest, err := DestinationOf(cfg)
	if err != nil {
		client.Close()
		return nil, err
	}
	warnOldLayout(cfg.SpoolDir, o.Logger)
	sp, err := spool.Open(filepath.Join(cfg.SpoolDir, dest.dirName()), spool.Options{
		MaxBytes:     cfg.SpoolMaxBytes,
		SegmentBytes: o.SpoolSegmentBytes,
		SyncEvery:    o.SpoolSyncEvery,
		Logger:       o.Logger.With("sink", "influx"),
		Destination:  dest.String(),
	})
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("influx: %w", err)
	}
	s := &Sink{
		cfg:        cfg,
		opts:       o,
		log:        o.Logger.With("sink", "influx", "url", cfg.URL, "bucket", cfg.Bucket),
		spool:      sp,
		client:     client,
		writer:     client.WriteAPIBlocking(cfg.Org, cfg.Bucket),
		flushNow:   make(chan struct{}, 1),
		done:       make(chan struct{}),
		direct:     newDirectQueue(o.DirectMaxBytes),
		directDone: make(chan struct{}),
	}
	s.abortCtx, s.abortNow = context.WithCancel(context.Background())
	s.abort = s.abortCtx.Done()
	s.lastOK.Store(true)
	s.lastReport = time.Now()
	go s.ship()
	go s.sendDirect()
	return s, nil
}

// newClient makes a client for cfg (defaults applied, token resolved).
func newClient(cfg Config) (influxdb2.Client, error) {
	tlsCfg, err := cfg.TLS.tlsConfig()
	if err != nil {
		return nil, err
	}
	copts := influxdb2.DefaultOptions().
		SetHTTPRequestTimeout(uint(max(1, math.Ceil(cfg.Timeout.Seconds())))).
		SetUseGZip(cfg.Gzip).
		SetLogLevel(0)
	if tlsCfg != nil {
		copts.SetTLSConfig(tlsCfg)
	}
	return influxdb2.NewClientWithOptions(strings.TrimRight(cfg.URL, "/"), cfg.Token.Reveal(), copts), nil
}

// SpoolDir returns the directory of the sink's spool.
func (s *Sink) SpoolDir() string { return s.spool.Dir() }

// Stats returns the sink's counters now.
func (s *Sink) Stats() Stats {
	return Stats{
		Spool:          s.spool.Stats(),
		SentPoints:     s.sent.Load(),
		Retries:        s.retries.Load(),
		RejectedPoints: s.rejected.Load(),
		BypassedPoints: s.bypassed.Load(),
		DirectPoints:   s.directSent.Load(),
		LostPoints:     s.lost.Load(),
		WaitingPoints:  s.direct.waiting(),
	}
}

// Health reports whether the sink delivers: false, with the last error,
// while writes to the server fail (the spool keeps the points meanwhile),
// and while the spool refuses points, since a point then survives only if
// the server takes it at once.
func (s *Sink) Health() (ok bool, problem string) {
	if s.spoolRefusing.Load() {
		why := "refused"
		if p := s.spoolErr.Load(); p != nil {
			why = *p
		}
		return false, fmt.Sprintf("spool %s refuses points (%s): they go to InfluxDB directly, %d lost so far", s.spool.Dir(), why, s.lost.Load())
	}
	if s.lastOK.Load() {
		return true, ""
	}
	if p := s.lastErr.Load(); p != nil {
		return false, *p
	}
	return false, "writes fail"
}

// Write appends points to the spool and returns; the shipper sends them.
// When the spool refuses them (full, or its disk is) they wait in memory
// to be sent to the server directly, and are lost, counted, logged and
// alerted on only if the server does not take them either. Write returns
// nil then, so the collector does not log the same trouble every tick.
func (s *Sink) Write(points []point.Point) error {
	if len(points) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return errors.New("influx: write after close")
	}
	s.enc.Reset()
	n := 0
	var bad error
	for i := range points {
		p := &points[i]
		if hasUint(p) {
			// InfluxDB 1.x rejects unsigned integers (the "u" suffix) unless
			// built with the uint tag, so counters go as signed integers:
			// the same values, accepted by 1.x and 2.x alike.
			q := *p
			s.scratch = signedFields(s.scratch[:0], p.Fields)
			q.Fields = s.scratch
			p = &q
		}
		if err := s.enc.Encode(p); err != nil {
			if bad == nil {
				bad = fmt.Errorf("influx: %w", err)
			}
			continue
		}
		n++
	}
	if n == 0 {
		return bad
	}
	if err := s.spool.Append(s.enc.Bytes(), n); err != nil {
		s.bypass(s.enc.Bytes(), n, err)
	} else if s.spoolRefusing.Load() && s.direct.empty() {
		s.spoolRefusing.Store(false)
	}
	return bad
}

func hasUint(p *point.Point) bool {
	for _, f := range p.Fields {
		if f.Value.Kind() == lineprotocol.Uint {
			return true
		}
	}
	return false
}

func signedFields(dst, fields []point.Field) []point.Field {
	for _, f := range fields {
		if f.Value.Kind() == lineprotocol.Uint {
			u := f.Value.UintV()
			if u <= math.MaxInt64 {
				f.Value = lineprotocol.IntValue(int64(u))
			} else {
				f.Value, _ = lineprotocol.FloatValue(float64(u))
			}
		}
		dst = append(dst, f)
	}
	return dst
}

// Check asks the server whether it is up (ping) and whether the token may
// write to the bucket (an empty write, which InfluxDB authorises and checks
// like any other), so a wrong URL, token or bucket is a clear error at
// start rather than a backlog growing in silence.
//
// An error that may pass by itself (the server unreachable, timing out or
// answering 5xx) wraps ErrUnreachable; the others (a refused token, a
// missing bucket) will not pass without someone changing something.
func (s *Sink) Check(ctx context.Context) error {
	if _, err := s.client.Ping(ctx); err != nil {
		return fmt.Errorf("influx: %s is unreachable: %w: %w", s.cfg.URL, ErrUnreachable, err)
	}
	err := s.writer.WriteRecord(ctx, "")
	if err == nil {
		return nil
	}
	var he *http2.Error
	if errors.As(err, &he) {
		if he.StatusCode >= 500 || he.StatusCode == 429 {
			return fmt.Errorf("influx: test write to %s bucket %q: %w: %w", s.cfg.URL, s.cfg.Bucket, ErrUnreachable, err)
		}
		switch he.StatusCode {
		case 400:
			// InfluxDB 2.x answers an empty body after the checks that matter.
			if strings.Contains(strings.ToLower(he.Message), "point") {
				return nil
			}
		case 401:
			return fmt.Errorf("influx: %s refused the token (401 unauthorized; for InfluxDB 1.8 the token is user:password): %w", s.cfg.URL, err)
		case 403:
			return fmt.Errorf("influx: the token may not write to bucket %q at %s (403 forbidden): %w", s.cfg.Bucket, s.cfg.URL, err)
		case 404:
			return fmt.Errorf("influx: bucket %q not found at %s (for InfluxDB 1.8: database or database/retention-policy, and the database must exist): %w", s.cfg.Bucket, s.cfg.URL, err)
		}
	}
	if he == nil {
		// No answer at all (a timeout, a reset connection).
		return fmt.Errorf("influx: test write to %s bucket %q: %w: %w", s.cfg.URL, s.cfg.Bucket, ErrUnreachable, err)
	}
	return fmt.Errorf("influx: test write to %s bucket %q: %w", s.cfg.URL, s.cfg.Bucket, err)
}

// ErrUnreachable marks a Check failure that may pass by itself: the server
// did not answer, or answered that it cannot take writes now.
var ErrUnreachable = errors.New("not answering")

// Start opens the sink and checks the server. A server that does not
// answer is no reason to stop: the sink is returned, its spool holds the
// points until the server is back, and the outage is logged loudly. What
// can never work by itself (a refused token, a missing bucket) is an error,
// unless the configuration makes the sink optional, when it too is only
// logged and the sink keeps retrying.
func Start(ctx context.Context, o Options) (*Sink, error) {
	s, err := New(o)
	if err != nil {
		return nil, err
	}
	err = s.Check(ctx)
	switch {
	case err == nil:
		return s, nil
	case errors.Is(err, ErrUnreachable):
		s.log.Error("InfluxDB is not answering at start: collecting anyway, the spool keeps every point until it does", "spool", s.spool.Dir(), "err", err)
		return s, nil
	case s.cfg.Optional:
		s.log.Error("InfluxDB refuses this sink's writes (optional: collecting anyway; the spool keeps the points, and nothing reaches InfluxDB until the configuration is fixed)", "spool", s.spool.Dir(), "err", err)
		return s, nil
	}
	s.Abort()
	return nil, err
}

// Flush makes every written point durable (fsynced in the spool) and asks
// the shipper to send what it holds without waiting for a fuller batch. It
// does not wait for the server: the collector calls it from its tick loop.
func (s *Sink) Flush() error {
	if s.closed.Load() {
		return nil
	}
	err := s.spool.Sync()
	s.nudge()
	if err != nil {
		return fmt.Errorf("influx: %w", err)
	}
	return nil
}

func (s *Sink) nudge() {
	select {
	case s.flushNow <- struct{}{}:
	default:
	}
}

// Drain waits until every point written before the call has been sent, or
// ctx ends.
func (s *Sink) Drain(ctx context.Context) error {
	if err := s.waitDirect(ctx); err != nil {
		return err
	}
	target := s.spool.End()
	s.draining.Store(true)
	defer s.draining.Store(false)
	s.nudge()
	for {
		ch := s.spool.Changed()
		if !s.spool.Committed().Before(target) {
			return nil
		}
		select {
		case <-ctx.Done():
			st := s.spool.Stats()
			return fmt.Errorf("influx: %d points not yet sent (kept in spool %s): %w", st.UnsentPoints, s.spool.Dir(), ctx.Err())
		case <-s.done:
			return errors.New("influx: sink closed")
		case <-ch:
		}
	}
}

// Close sends what it can within Options.DrainTimeout, then stops the
// shipper and closes the spool. Unsent points stay in the spool and are
// sent first by the next sink opened on it.
func (s *Sink) Close() error { return s.close(s.opts.DrainTimeout) }

// Abort closes the sink without waiting for anything to be sent; unsent
// points stay in the spool. It is for giving up at start (a failed Check).
func (s *Sink) Abort() error { return s.close(0) }

func (s *Sink) close(drain time.Duration) error {
	if s.closed.Swap(true) {
		return nil
	}
	s.wmu.Lock() // wait for a Write in progress
	s.wmu.Unlock()
	var drainErr error
	if drain > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), drain)
		drainErr = s.Drain(ctx)
		cancel()
	}
	s.abortNow()
	<-s.done
	<-s.directDone
	s.spillDirect()
	st := s.Stats()
	if st.Spool.UnsentPoints > 0 {
		s.log.Warn("influx: points not yet sent stay in the spool and go first at the next start",
			"points", st.Spool.UnsentPoints, "bytes", st.Spool.UnsentBytes, "spool", s.spool.Dir(), "err", drainErr)
	}
	err := s.spool.Close()
	s.client.Close()
	if err != nil {
		return fmt.Errorf("influx: %w", err)
	}
	return nil
}

// ship sends the spool, batch by batch, for as long as the sink is open.
func (s *Sink) ship() {
	defer close(s.done)
	batchSize := s.cfg.BatchSize
	var buf []byte
	commitFailing := false
	sendNow := false
	for {
		select {
		case <-s.abort:
			return
		default:
		}
		changed := s.spool.Changed()
		b, err := s.spool.Next(batchSize, 0, buf)
		if err != nil {
			s.log.Error("influx: read spool", "err", err)
			if !s.sleep(s.cfg.MaxRetryInterval) {
				return
			}
			continue
		}
		buf = b.Lines[:0]
		if b.Points == 0 {
			select {
			case <-s.abort:
				return
			case <-changed:
			case <-s.flushNow:
			}
			continue
		}
		if b.Points < batchSize && !sendNow && !s.draining.Load() {
			// Wait for a fuller batch, at most FlushInterval after its
			// first point was appended; then read again.
			full, ok := s.waitForBatch(b, batchSize)
			if !ok {
				return
			}
			sendNow = full
			continue
		}
		sendNow = false
		switch s.send(&b) {
		case sendTooLarge:
			batchSize = max(1, b.Points/2)
			s.log.Warn("influx: server refused the batch as too large; sending smaller batches", "batch_size", batchSize)
			continue
		case sendAborted:
			return
		}
		// A full disk fails every commit until space comes back: say so
		// once, and once when it is over, rather than once a batch. The
		// points were delivered; an uncommitted position only means they
		// may be sent again after a restart, which InfluxDB absorbs (same
		// series, same times).
		if err := s.spool.Commit(b); err != nil {
			if !commitFailing {
				s.log.Error("influx: commit spool position; delivered points may be sent again after a restart", "err", err)
			}
			commitFailing = true
		} else if commitFailing {
			s.log.Info("influx: spool position committed again")
			commitFailing = false
		}
	}
}

// waitForBatch waits, at most until FlushInterval after the batch's first
// point was appended, for a full batch or a flush. It reports whether the
// batch may go now (full, flushed or due) and false in ok on abort.
func (s *Sink) waitForBatch(b spool.Batch, batchSize int) (now, ok bool) {
	wait := s.cfg.FlushInterval
	if !b.Oldest.IsZero() {
		wait = time.Until(b.Oldest.Add(s.cfg.FlushInterval))
	}
	if wait <= 0 {
		return true, true
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		changed := s.spool.Changed()
		if s.spool.Unsent() >= int64(batchSize) {
			return true, true
		}
		select {
		case <-s.abort:
			return false, false
		case <-timer.C:
			return true, true
		case <-s.flushNow:
			return true, true
		case <-changed:
		}
	}
}

type sendResult int

const (
	sendOK sendResult = iota
	sendTooLarge
	sendAborted
)

// send writes one batch, retrying with backoff until the server takes it,
// refuses it as invalid (counted and logged, then committed), or the sink
// is aborted.
func (s *Sink) send(b *spool.Batch) sendResult {
	backoff := s.opts.MinRetryInterval
	var failingSince, lastLog time.Time
	attempts := 0
	body := string(b.Lines)
	validated := false
	for {
		err := s.writer.WriteRecord(s.abortCtx, body)
		if err == nil {
			s.sent.Add(int64(b.Points))
			s.lastOK.Store(true)
			if !failingSince.IsZero() {
				s.log.Info("influx: writes succeed again", "after", time.Since(failingSince).Round(time.Second), "retries", attempts)
			}
			return sendOK
		}
		if s.abortCtx.Err() != nil {
			return sendAborted
		}
		var he *http2.Error
		status := 0
		if errors.As(err, &he) {
			status = he.StatusCode
		}
		switch {
		case status == 413:
			return sendTooLarge
		case status == 400 || status == 422:
			if !validated {
				validated = true
				valid, n := s.dropInvalid(b, body)
				if n < b.Points && n > 0 {
					body = valid
					continue
				}
				if n == 0 {
					return sendOK
				}
			}
			// Every line is valid line protocol yet the server refuses it
			// (a field type conflict, a point outside the retention
			// policy): retrying would block the spool for ever. InfluxDB
			// writes the rest of such a batch; report the loss.
			dropped := droppedCount(he, b.Points)
			s.rejected.Add(int64(dropped))
			s.log.Error("influx: server rejected points; they are not retried",
				"points", dropped, "status", status, "err", err.Error(), "segment", b.Segment, "offset", b.Offset)
			return sendOK
		}
		// Unreachable, 5xx, 429, or 401/403/404 (a token or bucket that an
		// operator can still fix): keep the points and try again.
		attempts++
		s.retries.Add(1)
		msg := describe(err, status)
		s.lastErr.Store(&msg)
		s.lastOK.Store(false)
		now := time.Now()
		if failingSince.IsZero() {
			failingSince = now
			lastLog = now
			s.log.Warn("influx: write failed; points stay in the spool and are retried",
				"err", describe(err, status), "points", b.Points, "unsent", s.spool.Unsent())
		} else if now.Sub(lastLog) >= time.Minute {
			lastLog = now
			s.log.Warn("influx: still failing", "for", now.Sub(failingSince).Round(time.Second),
				"retries", attempts, "unsent", s.spool.Unsent(), "err", describe(err, status))
		}
		wait := backoff
		if he != nil && he.RetryAfter > 0 {
			wait = max(wait, time.Duration(he.RetryAfter)*time.Second)
		}
		// ±20% jitter keeps many nodes from retrying in lockstep.
		wait = time.Duration(float64(wait) * (0.8 + 0.4*rand.Float64()))
		if !s.sleep(wait) {
			return sendAborted
		}
		backoff = min(2*backoff, s.cfg.MaxRetryInterval)
	}
}

// dropInvalid removes lines that are not valid line protocol, logging each
// with the spool segment and byte offset, and returns the rest and their
// count.
func (s *Sink) dropInvalid(b *spool.Batch, body string) (string, int) {
	var keep strings.Builder
	n := 0
	off := b.Offset
	for line := range strings.Lines(body) {
		if _, err := point.ParseLine([]byte(line)); err != nil {
			s.rejected.Add(1)
			s.log.Error("influx: invalid line in the spool is dropped", "segment", b.Segment, "offset", off, "err", err)
		} else {
			keep.WriteString(line)
			n++
		}
		off += int64(len(line))
	}
	return keep.String(), n
}

// droppedCount reads "dropped=N" from InfluxDB's partial-write message.
func droppedCount(he *http2.Error, all int) int {
	if he == nil {
		return all
	}
	msg := he.Message
	if i := strings.LastIndex(msg, "dropped="); i >= 0 {
		f := strings.FieldsFunc(msg[i+len("dropped="):], func(r rune) bool { return r < '0' || r > '9' })
		if len(f) > 0 {
			if n, err := strconv.Atoi(f[0]); err == nil && n <= all {
				return n
			}
		}
	}
	return all
}

func describe(err error, status int) string {
	switch status {
	case 401:
		return "unauthorized (check the token): " + err.Error()
	case 403:
		return "forbidden (the token may not write to this bucket): " + err.Error()
	case 404:
		return "not found (does the bucket exist?): " + err.Error()
	}
	return err.Error()
}

// sleep waits d; false means the sink was aborted meanwhile.
func (s *Sink) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.abort:
		return false
	case <-t.C:
		return true
	case <-s.flushNow:
		// A flush during an outage does not cut the backoff short; put it back.
		s.nudge()
		select {
		case <-s.abort:
			return false
		case <-t.C:
			return true
		}
	}
}

// SelfMetrics appends, every MetricsEvery, the sink's report: an
// influx_sink point (spool depth, points sent, retries, age of the oldest
// unsent point, points sent directly and lost...) and, while the spool
// refuses points, an alert point saying how many went direct and how many
// were lost.
// It implements collectors.SelfReporter: the collector asks on every tick,
// whose loop goes on while the shipper waits out an outage, when the
// report matters most.
func (s *Sink) SelfMetrics(now time.Time, buf []point.Point) []point.Point {
	if now.Sub(s.lastReport) < s.opts.MetricsEvery {
		return buf
	}
	s.lastReport = now
	st := s.Stats()
	newBypassed, newLost := st.BypassedPoints-s.lastBypassed, st.LostPoints-s.lastLost
	s.lastBypassed, s.lastLost = st.BypassedPoints, st.LostPoints
	p := point.New(schema.InfluxSink, now)
	p.AddInt(schema.FieldSpoolBytes, st.Spool.UnsentBytes)
	p.AddInt(schema.FieldSpoolPoints, st.Spool.UnsentPoints)
	if !st.Spool.Oldest.IsZero() {
		p.AddFloat(schema.FieldOldestUnsentS, now.Sub(st.Spool.Oldest).Seconds())
	}
	p.AddUint(schema.FieldSentPointsTotal, uint64(st.SentPoints))
	p.AddUint(schema.FieldRetriesTotal, uint64(st.Retries))
	p.AddUint(schema.FieldDirectPointsTotal, uint64(st.DirectPoints))
	p.AddUint(schema.FieldDroppedPointsTotal, uint64(st.LostPoints))
	p.AddUint(schema.FieldRejectedPointsTotal, uint64(st.RejectedPoints))
	p.AddBool(schema.FieldOK, s.lastOK.Load())
	buf = append(buf, p)
	switch {
	case newBypassed > 0 || newLost > 0:
		s.alerting = true
		buf = append(buf, s.spoolAlert(now, schema.StateFiring, st, fmt.Sprintf("InfluxDB spool %s refuses points: %d in the last %v, sent to InfluxDB directly or lost; %d lost (%d in all)",
			s.spool.Dir(), newBypassed, s.opts.MetricsEvery, newLost, st.LostPoints)))
	case s.alerting:
		s.alerting = false
		buf = append(buf, s.spoolAlert(now, schema.StateCleared, st, "InfluxDB spool accepts points again"))
	}
	return buf
}

// spoolAlert is the alert point of a spool that drops points (state firing)
// or takes them again (cleared), shaped like the alert engine's.
func (s *Sink) spoolAlert(now time.Time, state string, st Stats, msg string) point.Point {
	return schema.AlertPoint{Time: now, Rule: "influx_spool_full", Severity: "critical", Measurement: schema.InfluxSink,
		State: state, HasValue: true, Value: float64(st.Spool.UnsentBytes), Threshold: float64(s.cfg.SpoolMaxBytes),
		Message: msg}.Point()
}
