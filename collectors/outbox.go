package collectors

import (
	"sync"

	"github.com/heatsink-hpc/heatsink/point"
)

// Outbox holds points emitted from outside the tick loop (phase events,
// alerts, a job's start) until the next tick writes them. It is made
// before the collector and given to it in Options, so that whatever emits
// (the alert engine, the runner) can be built first and emit at any time:
// nothing has to wait for the collector to exist. The zero value is ready.
type Outbox struct {
	mu  sync.Mutex
	pts []point.Point
}

// Emit queues points for the next tick. Safe for concurrent use.
func (o *Outbox) Emit(points ...point.Point) {
	o.mu.Lock()
	o.pts = append(o.pts, points...)
	o.mu.Unlock()
}

// drain appends the queued points to buf and empties the outbox.
func (o *Outbox) drain(buf []point.Point) []point.Point {
	o.mu.Lock()
	buf = append(buf, o.pts...)
	o.pts = o.pts[:0]
	o.mu.Unlock()
	return buf
}
