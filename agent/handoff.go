package agent

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/point"
)

// Handoff is a sink standing for another that a configuration reload may
// have to replace by one that cannot coexist with it: an InfluxDB sink on
// the same spool directory, which its lock lets one sink hold at a time.
// While Replace closes the old sink and opens the new one, Write keeps the
// points in memory, and hands them to the new sink once it is open, so the
// reload loses nothing.
type Handoff struct {
	mu   sync.Mutex
	cur  collectors.Sink
	held []point.Point
	// closed is closed once Close has returned: the sink it stood for has
	// drained and let go of what it held (the spool's lock), so a
	// successor of the same kind can open.
	closed chan struct{}
	done   bool
}

// maxHeld bounds the points held while no sink is open (both the new and
// the old configuration failed to open): about an hour of a large node.
const maxHeld = 1 << 20

// NewHandoff returns a Handoff writing to s; with s nil it holds what is
// written until a Replace opens a sink.
func NewHandoff(s collectors.Sink) *Handoff { return &Handoff{cur: s, closed: make(chan struct{})} }

// Closed is closed once Close has returned.
func (h *Handoff) Closed() <-chan struct{} { return h.closed }

// Sink returns the sink in use; nil during a Replace.
func (h *Handoff) Sink() collectors.Sink {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur
}

// Write passes the points on, or holds a copy of them during a Replace.
func (h *Handoff) Write(points []point.Point) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur == nil {
		if len(h.held)+len(points) > maxHeld {
			return fmt.Errorf("handoff: no sink open and %d points already held: %d points dropped", len(h.held), len(points))
		}
		for _, p := range points {
			p.Tags = append([]point.Tag(nil), p.Tags...)
			p.Fields = append([]point.Field(nil), p.Fields...)
			h.held = append(h.held, p)
		}
		return nil
	}
	return h.cur.Write(points)
}

// SelfMetrics passes the collector's question on to the sink in use, so
// an InfluxDB sink behind a handoff reports itself as it would alone.
func (h *Handoff) SelfMetrics(now time.Time, buf []point.Point) []point.Point {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r, ok := h.cur.(collectors.SelfReporter); ok {
		return r.SelfMetrics(now, buf)
	}
	return buf
}

// Flush flushes the sink in use.
func (h *Handoff) Flush() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur == nil {
		return nil
	}
	return h.cur.Flush()
}

// Close closes the sink in use; points held by a Replace that never
// completed are reported as lost in the error.
func (h *Handoff) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return nil
	}
	h.done = true
	defer close(h.closed)
	var errs []error
	if h.cur != nil {
		errs = append(errs, h.cur.Close())
		h.cur = nil
	}
	if n := len(h.held); n > 0 {
		errs = append(errs, fmt.Errorf("handoff: %d points held during a sink replacement were never written", n))
		h.held = nil
	}
	return errors.Join(errs...)
}

// Replace closes the sink in use (which drains what it can; a spool keeps
// the rest on disk) and opens its successor with open. When open fails,
// fallback reopens a sink like the old one so recording goes on, and the
// error says why the new configuration was not applied. Points written
// meanwhile go to whichever sink ends up in use.
//
// A Handoff standing for no sink (NewHandoff(nil), or both opens failed
// before) has nothing to close, and fallback may then be nil: a failed
// open leaves the points held for the next Replace.
func (h *Handoff) Replace(open, fallback func() (collectors.Sink, error)) error {
	h.mu.Lock()
	if h.done {
		h.mu.Unlock()
		return errors.New("handoff: closed (its sink was removed): nothing to replace")
	}
	old := h.cur
	h.cur = nil
	h.mu.Unlock()
	var errs []error
	if old != nil {
		if err := old.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close the old sink: %w", err))
		}
	}
	next, err := open()
	if err != nil {
		errs = append(errs, fmt.Errorf("open the new sink: %w", err))
		if fallback != nil {
			if next, err = fallback(); err != nil {
				errs = append(errs, fmt.Errorf("reopen the old sink: %w", err))
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		// Closed (its sink removed by a later reload) while this Replace
		// opened: what opened has no one to write to it.
		if next != nil {
			errs = append(errs, next.Close())
		}
		return errors.Join(errs...)
	}
	h.cur = next
	if next != nil && len(h.held) > 0 {
		if err := next.Write(h.held); err != nil {
			errs = append(errs, err)
		}
		h.held = nil
	}
	return errors.Join(errs...)
}
