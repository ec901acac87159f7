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
}

func newGate() *gate {
	g := &gate{opened: make(chan struct{})}
	close(g.opened)
	return g
}

// shut closes the gate; it reports whether it was open.
func (g *gate) shut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.opened:
		g.opened = make(chan struct{})
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

// wait blocks until the gate is open or ctx is done.
func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	ch := g.opened
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

func withGate(ctx context.Context, g *gate) context.Context {
	return context.WithValue(ctx, gateKey{}, g)
}
