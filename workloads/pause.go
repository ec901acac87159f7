package workloads

import (
	"context"
	"sync"
	"time"
)

// gate holds built-in workloads while the guard has paused the job. It is
// open unless closed by pause; wait blocks while it is shut.
type gate struct {
	mu     sync.Mutex
	opened chan struct{} // closed while the gate is open
	// parked is closed once a workload waits at the shut gate: from then
	// on the job has nothing running that it started (see Checkpoint).
	parked chan struct{}
	// parkTime is when parked closed.
	parkTime time.Time
	// workers counts the goroutines registered with Worker that have not
	// ended; waiting, those blocked at the shut gate. The job parks once
	// every worker waits (or the iteration's own goroutine, with none).
	workers, waiting int
	shuts            int // counts shut, so a waiter leaves the count it joined
	// paced says a duty cycle (a hold) drives the gate: workloads then
	// keep no kernel queued at a Checkpoint (Paced).
	paced bool
}

func newGate() *gate {
	g := &gate{opened: make(chan struct{}), parked: make(chan struct{})}
	close(g.opened)
	close(g.parked)
	return g
}

// shut closes the gate; it reports whether it was open.
func (g *gate) shut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.opened:
		g.opened = make(chan struct{})
		g.parked = make(chan struct{})
		// Waiters still leaving the last shut are not this one's.
		g.shuts, g.waiting = g.shuts+1, 0
		return true
	default:
		return false
	}
}

// open opens the gate; it reports whether it was shut.
func (g *gate) open() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.opened:
		return false
	default:
		close(g.opened)
		return true
	}
}

func (g *gate) isOpen() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.opened:
		return true
	default:
		return false
	}
}

// parkedAt returns the channel closed once a workload waits at the gate
// shut last; it is closed already while the gate is open.
func (g *gate) parkedAt() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.parked
}

func (g *gate) setPaced() {
	g.mu.Lock()
	g.paced = true
	g.mu.Unlock()
}

func (g *gate) isPaced() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.paced
}

// parkedSince returns when the job parked at the gate shut last, and
// false while it has not.
func (g *gate) parkedSince() (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.parked:
		return g.parkTime, true
	default:
		return time.Time{}, false
	}
}

// wait blocks until the gate is open or ctx is done. The job parks
// (parkedAt) once all its workers wait at the shut gate: with several
// (Worker), the first to arrive still has the others' work running beside
// it.
func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	ch, gen := g.opened, g.shuts
	shut := false
	select {
	case <-ch:
	default:
		shut = true
		g.waiting++
		g.parkIfAllWaitLocked()
	}
	g.mu.Unlock()
	if shut {
		defer func() {
			g.mu.Lock()
			if g.shuts == gen { // a later shut counts anew
				g.waiting--
			}
			g.mu.Unlock()
		}()
	}
	select {
	case <-ch:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parkIfAllWaitLocked closes parked when every worker waits at the shut
// gate. Called with g.mu held.
func (g *gate) parkIfAllWaitLocked() {
	select {
	case <-g.opened:
		return
	case <-g.parked:
		return
	default:
	}
	if g.waiting >= max(g.workers, 1) {
		g.parkTime = time.Now()
		close(g.parked)
	}
}

// addWorker registers (+1) or ends (-1) a worker goroutine.
func (g *gate) addWorker(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.workers += n
	if g.workers > 0 {
		g.parkIfAllWaitLocked()
	}
}

type gateKey struct{}

// Checkpoint is where a built-in workload may be paused: it blocks while the
// runner's guard holds the job (a hotspot alert fired) and returns ctx's error
// once the iteration is cancelled. Workloads call it between kernels or
// batches, so a pause takes effect within an iteration rather than after it;
// outside the runner it returns at once.
func Checkpoint(ctx context.Context) error {
	if g, ok := ctx.Value(gateKey{}).(*gate); ok {
		return g.wait(ctx)
	}
	return ctx.Err()
}

// Paced reports whether a duty cycle (heatsink run --hold, --duty) pauses
// and resumes the job many times a second. A workload that queues GPU work
// ahead of the host must then have none in flight when it calls
// Checkpoint: work queued before the gate shut runs on after it, so the
// job would run longer than the duty cycle allowed (on an H100 a DGEMM
// with three 20 ms GEMMs queued ran at an effective duty of 0.83 when 0.30
// was asked for, docs/hold.md). Outside the runner it reports false.
func Paced(ctx context.Context) bool {
	if g, ok := ctx.Value(gateKey{}).(*gate); ok {
		return g.isPaced()
	}
	return false
}

// Worker registers the calling goroutine as one of several that do an
// iteration's work side by side and each call Checkpoint (w2v's CPU
// trainer: one goroutine per thread, each pausing between its chunks of
// sentences); call the returned function when the goroutine ends. While
// workers are registered the job counts as parked (Runner.Ran stops, the
// hold's duty) only once every one of them waits at the Checkpoint, not
// when the first does: the others are still working. The goroutine that
// started them must not do work meanwhile (it waits for them). A workload
// that calls Checkpoint from one goroutine between parallel sections
// (cpu-stream) needs none. Outside the runner it does nothing.
func Worker(ctx context.Context) (done func()) {
	g, ok := ctx.Value(gateKey{}).(*gate)
	if !ok {
		return func() {}
	}
	g.addWorker(1)
	var once sync.Once
	return func() { once.Do(func() { g.addWorker(-1) }) }
}

func withGate(ctx context.Context, g *gate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}
