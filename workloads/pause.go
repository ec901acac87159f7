package workloads

import (
	"context"
	"sync"
)

// gate holds built-in workloads while the guard has paused the job. It is
// open unless closed by pause; wait blocks while it is shut.
type gate struct {
	mu     sync.Mutex
	opened chan struct{} // closed while the gate is open
	// parked is closed once a workload waits at the shut gate: from then
	// on the job has nothing running that it started (see Checkpoint).
	parked chan struct{}
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

// wait blocks until the gate is open or ctx is done. Waiting at a shut
// gate parks the job (parkedAt).
func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	ch := g.opened
	select {
	case <-ch:
	default:
		select {
		case <-g.parked:
		default:
			close(g.parked)
		}
	}
	g.mu.Unlock()
	select {
	case <-ch:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
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

func withGate(ctx context.Context, g *gate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}
