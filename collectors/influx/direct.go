package influx

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	http2 "github.com/influxdata/influxdb-client-go/v2/api/http"
)

// DefaultDirectMaxBytes bounds the points that wait in memory to be sent
// directly while the spool refuses them: about four minutes of a busy
// node's points, enough to ride out a short outage of the server too.
const DefaultDirectMaxBytes = 4 << 20

// directBatch is one Write's points that the spool refused.
type directBatch struct {
	lines  []byte
	points int
}

// directQueue holds, in memory, the batches the spool refused until the
// server (or the spool, once it has room again) takes them. It is bounded:
// a batch that does not fit is lost, counted and logged.
type directQueue struct {
	mu       sync.Mutex
	batches  []directBatch
	bytes    int
	points   int
	maxBytes int
	wake     chan struct{} // one pending wake-up for the sender
	changed  chan struct{} // closed when the queue shrinks
	// losing is true from a lost batch until the queue is empty again:
	// one episode, logged at its start and its end.
	losing      bool
	lostEpisode int64
}

func newDirectQueue(maxBytes int) *directQueue {
	return &directQueue{maxBytes: maxBytes, wake: make(chan struct{}, 1), changed: make(chan struct{})}
}

// offer queues a copy of lines; false means it did not fit.
func (q *directQueue) offer(lines []byte, points int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.bytes+len(lines) > q.maxBytes {
		return false
	}
	q.batches = append(q.batches, directBatch{lines: slices.Clone(lines), points: points})
	q.bytes += len(lines)
	q.points += points
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

func (q *directQueue) head() (directBatch, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.batches) == 0 {
		return directBatch{}, false
	}
	return q.batches[0], true
}

// pop removes the head; it reports whether the queue is now empty.
func (q *directQueue) pop() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.bytes -= len(q.batches[0].lines)
	q.points -= q.batches[0].points
	q.batches = q.batches[1:]
	close(q.changed)
	q.changed = make(chan struct{})
	return len(q.batches) == 0
}

// waiting returns the points in the queue.
func (q *directQueue) waiting() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return int64(q.points)
}

// state returns the batches waiting and a channel closed when one leaves.
func (q *directQueue) state() (int, <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.batches), q.changed
}

// takeAll empties the queue, for Close.
func (q *directQueue) takeAll() []directBatch {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.batches
	q.batches, q.bytes, q.points = nil, 0, 0
	return b
}

// bypass handles points the spool refused (why): they wait in memory for
// the direct sender; what does not fit is lost.
func (s *Sink) bypass(lines []byte, points int, why error) {
	s.bypassed.Add(int64(points))
	msg := why.Error()
	s.spoolErr.Store(&msg)
	if !s.spoolRefusing.Swap(true) {
		s.log.Warn("influx: the spool refuses points; sending them to InfluxDB directly while it does (they are lost if InfluxDB does not take them either)",
			"spool", s.spool.Dir(), "err", why)
	}
	if !s.direct.offer(lines, points) {
		s.lose(points, "the spool refuses them and the queue for direct sending is full (InfluxDB is not taking them fast enough)")
	}
}

// lose counts points that neither the spool nor the server took, logging
// the first loss of an episode.
func (s *Sink) lose(points int, why string) {
	s.lost.Add(int64(points))
	q := s.direct
	q.mu.Lock()
	first := !q.losing
	q.losing = true
	q.lostEpisode += int64(points)
	q.mu.Unlock()
	if first {
		var spoolErr, serverErr string
		if p := s.spoolErr.Load(); p != nil {
			spoolErr = *p
		}
		if p := s.lastErr.Load(); p != nil && !s.lastOK.Load() {
			serverErr = *p
		}
		s.log.Error("influx: points lost: "+why, "points", points, "spool", s.spool.Dir(), "spool_err", spoolErr, "influx_err", serverErr)
	}
}

// endLossEpisode logs the end of an episode of losses, once the queue has
// emptied (everything in it went somewhere).
func (s *Sink) endLossEpisode() {
	q := s.direct
	q.mu.Lock()
	was, n := q.losing, q.lostEpisode
	q.losing, q.lostEpisode = false, 0
	q.mu.Unlock()
	if was {
		s.log.Info("influx: points are delivered again", "lost_in_episode", n, "lost_total", s.lost.Load())
	}
}

// sendDirect sends the batches the spool refused, oldest first: to the
// spool again when it has room (the durable way), else straight to the
// server, retrying with backoff while they fit in memory.
func (s *Sink) sendDirect() {
	defer close(s.directDone)
	backoff := s.opts.MinRetryInterval
	for {
		b, ok := s.direct.head()
		if !ok {
			select {
			case <-s.abort:
				return
			case <-s.direct.wake:
			}
			continue
		}
		if s.spool.Append(b.lines, b.points) == nil {
			s.spoolRefusing.Store(false)
			s.popDirect()
			backoff = s.opts.MinRetryInterval
			continue
		}
		err := s.writer.WriteRecord(s.abortCtx, string(b.lines))
		if s.abortCtx.Err() != nil {
			return
		}
		if err == nil || s.rejectedDirect(b, err) {
			if err == nil {
				s.directSent.Add(int64(b.points))
				s.sent.Add(int64(b.points))
				s.lastOK.Store(true)
			}
			s.popDirect()
			backoff = s.opts.MinRetryInterval
			continue
		}
		msg := describe(err, statusOf(err))
		s.lastErr.Store(&msg)
		s.lastOK.Store(false)
		s.retries.Add(1)
		if !s.sleep(backoff) {
			return
		}
		backoff = min(2*backoff, s.cfg.MaxRetryInterval)
	}
}

func (s *Sink) popDirect() {
	if s.direct.pop() {
		s.endLossEpisode()
	}
}

// rejectedDirect reports whether err is the server refusing the batch for
// good (invalid, too large, a type conflict): retrying would not help, so
// the points are counted as rejected and logged.
func (s *Sink) rejectedDirect(b directBatch, err error) bool {
	switch statusOf(err) {
	case 400, 413, 422:
		n := b.points
		var he *http2.Error
		if errors.As(err, &he) {
			n = droppedCount(he, b.points)
		}
		s.rejected.Add(int64(n))
		s.log.Error("influx: server rejected points sent directly (the spool refused them); they are not retried", "points", n, "err", err.Error())
		return true
	}
	return false
}

func statusOf(err error) int {
	var he *http2.Error
	if errors.As(err, &he) {
		return he.StatusCode
	}
	return 0
}

// spillDirect is Close's last word on the batches still in memory: into
// the spool if it takes them now, else lost.
func (s *Sink) spillDirect() {
	for _, b := range s.direct.takeAll() {
		if err := s.spool.Append(b.lines, b.points); err != nil {
			s.lose(b.points, fmt.Sprintf("the sink closed while the spool refused them (%v) and InfluxDB had not taken them", err))
		}
	}
}

// waitDirect waits until the direct queue is empty, or ctx ends.
func (s *Sink) waitDirect(ctx context.Context) error {
	for {
		n, ch := s.direct.state()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("influx: %d batches the spool refused not yet sent: %w", n, ctx.Err())
		case <-s.directDone:
			return errors.New("influx: sink closed")
		case <-ch:
		}
	}
}

func (q *directQueue) empty() bool {
	n, _ := q.state()
	return n == 0
}
