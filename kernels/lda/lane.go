package lda

import (
	"errors"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// lane is how multiGPU queues one GPU's part of an iteration: marks in
// the GPU's queue, timed against each other, and copies from the other
// GPUs that run beside the GPU's kernels.
type lane interface {
	// mark records mark i after the work queued so far.
	mark(i int) error
	// since is the time from mark i to mark j, once both are reached
	// (after the device's Stop).
	since(i, j int) (time.Duration, error)
	// copyAfter queues the copy of n bytes at byte off of src's buffer
	// from to the same bytes of this GPU's buffer to, to start once src
	// has reached its mark i.
	copyAfter(to gpuBuffer, src lane, from gpuBuffer, i int, off, n int64) error
	// waitOwn makes the copies queued later wait until this GPU has
	// reached its own mark i.
	waitOwn(i int) error
	// join makes the GPU's work queued later wait for the copies queued
	// so far.
	join() error
	close() error
}

// contextDevice is a GPU through the CUDA driver (kernels.ModuleDevice),
// whose context gives a lane its events and copy stream.
type contextDevice interface{ Context() *cuda.Context }

// newLane is a driverLane for a GPU through the driver, else a hostLane.
func newLane(d gpuDevice) (lane, error) {
	if cd, ok := d.(contextDevice); ok {
		return newDriverLane(cd.Context())
	}
	return &hostLane{dev: d}, nil
}

// driverLane marks with events on the default stream, where the engine's
// kernels run, and copies on a stream of its own that does not wait for
// them: a copy waits only for the source's mark, so it runs while both
// GPUs sample their next lists.
type driverLane struct {
	ctx    *cuda.Context
	marks  [numMarks]*cuda.Event
	copies *cuda.Stream
	copied *cuda.Event
}

func newDriverLane(ctx *cuda.Context) (_ *driverLane, err error) {
	ln := &driverLane{ctx: ctx}
	defer func() {
		if err != nil {
			err = errors.Join(err, ln.close())
		}
	}()
	for i := range ln.marks {
		if ln.marks[i], err = ctx.NewEvent(); err != nil {
			return nil, err
		}
	}
	if ln.copied, err = ctx.NewEvent(); err != nil {
		return nil, err
	}
	if ln.copies, err = ctx.NewStream(); err != nil {
		return nil, err
	}
	return ln, nil
}

func (ln *driverLane) mark(i int) error { return ln.marks[i].Record() }

func (ln *driverLane) since(i, j int) (time.Duration, error) { return ln.marks[j].Since(ln.marks[i]) }

func (ln *driverLane) copyAfter(to gpuBuffer, src lane, from gpuBuffer, i int, off, n int64) error {
	s := src.(*driverLane)
	if err := ln.ctx.WaitEvent(ln.copies, s.marks[i]); err != nil {
		return err
	}
	return cuda.CopyPeerAsync(to.(*cuda.Buffer), off, from.(*cuda.Buffer), off, n, ln.copies)
}

func (ln *driverLane) waitOwn(i int) error { return ln.ctx.WaitEvent(ln.copies, ln.marks[i]) }

func (ln *driverLane) join() error {
	if err := ln.copied.RecordOn(ln.copies); err != nil {
		return err
	}
	return ln.ctx.WaitEvent(nil, ln.copied)
}

func (ln *driverLane) close() error {
	err := ln.copies.Destroy()
	for _, e := range ln.marks {
		err = errors.Join(err, e.Destroy())
	}
	return errors.Join(err, ln.copied.Destroy())
}

// hostLane is a lane for a device without a driver context (the emulator,
// which runs a launch before it returns): marks are host times, and a copy
// is the device's CopyPeer, ordered with both devices' work.
type hostLane struct {
	dev gpuDevice
	at  [numMarks]time.Time
}

func (ln *hostLane) mark(i int) error { ln.at[i] = time.Now(); return nil }

func (ln *hostLane) since(i, j int) (time.Duration, error) { return ln.at[j].Sub(ln.at[i]), nil }

func (ln *hostLane) copyAfter(to gpuBuffer, _ lane, from gpuBuffer, _ int, off, n int64) error {
	return ln.dev.CopyPeer(to, off, from, off, n)
}

func (ln *hostLane) waitOwn(int) error { return nil }

func (ln *hostLane) join() error { return nil }

func (ln *hostLane) close() error { return nil }
