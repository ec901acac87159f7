package workloads

import (
	"context"
	"testing"
	"time"
)

// With two registered workers the job parks when both wait at the shut
// gate, or when the one still working ends; one waiting is not enough.
// A shut after an open counts anew, whatever the last shut's waiters do.
func TestGateParksWhenEveryWorkerWaits(t *testing.T) {
	g := newGate()
	ctx, cancel := context.WithCancel(withGate(context.Background(), g))
	defer cancel()
	parked := func() bool { _, ok := g.parkedSince(); return ok }
	settle := func() { time.Sleep(20 * time.Millisecond) }

	doneA, doneB := Worker(ctx), Worker(ctx)
	g.shut()
	go Checkpoint(ctx) // worker A waits
	settle()
	if parked() {
		t.Fatal("parked with one of two workers waiting")
	}
	doneB() // worker B ends its share
	settle()
	if !parked() {
		t.Fatal("not parked with the only worker left waiting")
	}
	g.open()
	settle()
	doneB() // a second call does nothing

	g.shut()
	go Checkpoint(ctx) // A again
	settle()
	if !parked() {
		t.Fatal("not parked on the next shut with the one worker waiting")
	}
	g.open()
	doneA()

	// No workers: the iteration's goroutine (or the runner between
	// iterations) parks it alone.
	g.shut()
	if parked() {
		t.Fatal("parked before anything waited")
	}
	go Checkpoint(ctx)
	settle()
	if !parked() {
		t.Fatal("not parked with the job's one goroutine waiting")
	}
	g.open()
}
