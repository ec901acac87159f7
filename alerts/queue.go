package alerts

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// maxBatch caps how many alerts one Alertmanager post carries, so a long
// backlog goes out in several bodies of reasonable size.
const maxBatch = 256

// queue holds the alerts bound for one destination (a webhook or a
// command) and delivers them with a fixed number of workers. The tick only
// appends, so it never waits on the network, and a slow receiver holds at
// most its workers and its bounded queue, never an unbounded number of
// goroutines. When the bound is reached the oldest alert is dropped: the
// newest state of a series matters more than its history, and the drop is
// logged and counted (Engine.Deliveries), never silent.
type queue struct {
	action string // "webhook NAME" or "command NAME", for logs and status
	batch  int    // alerts per delivery: 1, or maxBatch where the format takes a list
	limit  int
	send   func(ctx context.Context, batch []*alert) error
	log    *slog.Logger

	mu        sync.Mutex
	cond      *sync.Cond
	items     []*alert // oldest first
	closed    bool     // no more alerts come; workers leave once it is empty
	inFlight  int
	sent      uint64
	failed    uint64
	dropped   uint64
	coalesced uint64
	// When an alert was last dropped, or given up on: a status page
	// degrades for a while after a loss, not for ever.
	lastDropped, lastFailed time.Time
}

func newQueue(action string, batch, limit int, log *slog.Logger, send func(context.Context, []*alert) error) *queue {
	q := &queue{action: action, batch: batch, limit: limit, send: send, log: log}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// start runs n workers until the queue is closed and empty, or ctx ends
// (then what is left stays queued, for Close to report).
func (q *queue) start(ctx context.Context, n int, wg *sync.WaitGroup) {
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.work(ctx)
		}()
	}
}

// push queues an alert; it never blocks.
func (q *queue) push(a *alert) {
	q.mu.Lock()
	var old *alert
	if q.closed {
		q.mu.Unlock()
		q.log.Error("alert action dropped: engine closed", "action", q.action, "rule", a.Rule, "series", a.Series, "state", a.State)
		return
	}
	if len(q.items) >= q.limit {
		old = q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		q.dropped++
		q.lastDropped = time.Now()
	}
	q.items = append(q.items, a)
	dropped := q.dropped
	q.mu.Unlock()
	q.cond.Signal()
	if old != nil {
		q.log.Error("alert action dropped: queue full, the oldest alert gives way", "action", q.action,
			"rule", old.Rule, "series", old.Series, "state", old.State, "queue_size", q.limit, "dropped_total", dropped)
	}
}

// pushReminder queues a "still firing" reminder unless an alert of the same
// rule and series still waits: it would say nothing new, and while a
// receiver is down, reminders must not push real firings and clearings out
// of the bounded queue.
func (q *queue) pushReminder(a *alert) {
	q.mu.Lock()
	for _, x := range q.items {
		if x.Rule == a.Rule && x.Series == a.Series {
			q.coalesced++
			q.mu.Unlock()
			return
		}
	}
	q.mu.Unlock()
	q.push(a)
}

func (q *queue) work(ctx context.Context) {
	for {
		q.mu.Lock()
		for len(q.items) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.items) == 0 || ctx.Err() != nil {
			q.mu.Unlock()
			return
		}
		n := min(len(q.items), q.batch)
		b := append([]*alert(nil), q.items[:n]...)
		clear(q.items[:n])
		q.items = q.items[n:]
		q.inFlight += n
		q.mu.Unlock()

		err := q.send(ctx, b)

		q.mu.Lock()
		q.inFlight -= n
		if err != nil {
			q.failed += uint64(n)
			q.lastFailed = time.Now()
		} else {
			q.sent += uint64(n)
		}
		q.mu.Unlock()
		if err != nil {
			q.log.Error("alert action failed", "action", q.action, "alerts", n, "err", err)
		}
	}
}

// close lets the workers leave once what is queued has been delivered.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// pending is what is queued or being delivered.
func (q *queue) pending() (queued, inFlight int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items), q.inFlight
}

// DeliveryStatus is what one action (a webhook or a command) has done with
// the alerts given to it, for a status page or a metrics endpoint.
type DeliveryStatus struct {
	// Action is "webhook NAME" or "command NAME".
	Action string
	// Queued waits for a worker; InFlight is being delivered now.
	Queued, InFlight int
	// Sent were delivered; Failed were given up on after retries (or the
	// command failed); Dropped gave way, oldest first, to newer alerts
	// while the queue was full; Coalesced were "still firing" reminders
	// not queued because an alert of the same series still waited.
	Sent, Failed, Dropped, Coalesced uint64
	// LastDropped and LastFailed are when an alert was last dropped or
	// failed; zero if none was.
	LastDropped, LastFailed time.Time
}

// Deliveries returns every action's counters, sorted by action. Safe for
// concurrent use with Write.
func (e *Engine) Deliveries() []DeliveryStatus {
	out := make([]DeliveryStatus, 0, len(e.queues))
	for _, q := range e.queues {
		q.mu.Lock()
		out = append(out, DeliveryStatus{Action: q.action, Queued: len(q.items), InFlight: q.inFlight,
			Sent: q.sent, Failed: q.failed, Dropped: q.dropped, Coalesced: q.coalesced,
			LastDropped: q.lastDropped, LastFailed: q.lastFailed})
		q.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Action < out[j].Action })
	return out
}
