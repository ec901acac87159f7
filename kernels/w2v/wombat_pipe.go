package w2v

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// wombatPipe overlaps moving plans with training them on a GPU of the CUDA
// driver: plans are assembled in page-locked host memory, copied on a
// stream of their own into one of two device slots, and the kernels, on
// the default stream, wait for their slot's copy by an event. A slot is
// refilled once the kernels two launches back, which read it, are done:
// while the GPU trains launch i, launch i+1 is copied and queued behind it.
// The tiles are copied first and the matrix kernel waits for them only,
// so that where a plan comes late its pairs' copy runs beside its tiles'
// training instead of before it.
type wombatPipe struct {
	ctx  *cuda.Context
	copy *cuda.Stream
	// Per slot: the tiles copied, the whole plan copied, the kernels'
	// start and end.
	tcopied, copied, kstart, kdone [2]*cuda.Event
	used                           [2]bool
}

// contextDevice is a gpuDevice that exposes its CUDA context (the
// driver's device does; the emulator has none, and copies in step).
type contextDevice interface{ Context() *cuda.Context }

func newWombatPipe(ctx *cuda.Context) (_ *wombatPipe, err error) {
	p := &wombatPipe{ctx: ctx}
	defer func() {
		if err != nil {
			err = errors.Join(err, p.close())
		}
	}()
	if p.copy, err = ctx.NewStream(); err != nil {
		return nil, err
	}
	for s := range p.copied {
		for _, e := range []**cuda.Event{&p.tcopied[s], &p.copied[s], &p.kstart[s], &p.kdone[s]} {
			if *e, err = ctx.NewEvent(); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// hostPlan is a plan whose records live in page-locked memory of room c.
func (p *wombatPipe) hostPlan(c planCaps) (*wombatPlan, error) {
	n := c.ints()
	h, err := p.ctx.AllocHost(int64(4 * max(n, 1)))
	if err != nil {
		return nil, err
	}
	ints := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(h.Bytes()))), n)
	return &wombatPlan{host: h, ints: ints, cap: c}, nil
}

// retire waits for the kernels that last read slot s and returns their
// device time (0 if none did).
func (p *wombatPipe) retire(s int) (time.Duration, error) {
	if !p.used[s] {
		return 0, nil
	}
	p.used[s] = false
	if err := p.kdone[s].Synchronize(); err != nil {
		return 0, err
	}
	return p.kdone[s].Since(p.kstart[s])
}

// idle reports whether the GPU has finished every launch queued: neither
// slot holds kernels not yet reached.
func (p *wombatPipe) idle() (bool, error) {
	for s := range p.kdone {
		if !p.used[s] {
			continue
		}
		done, err := p.kdone[s].Reached()
		if err != nil || !done {
			return false, err
		}
	}
	return true, nil
}

// send queues plan pl's copy into slot s's buffers (tiles, windows,
// starts, then pairs), then makes the default stream wait for its tiles,
// windows and starts (wombat_negatives needs the starts)
// and marks where the kernels start (pairsCopied makes it wait for the
// rest). Slot s must be retired.
func (p *wombatPipe) send(pl *wombatPlan, s int, bufs [4]gpuBuffer) error {
	w0 := pl.cap.tiles * wombatTileInts
	p0 := w0 + pl.cap.windows
	s0 := p0 + pl.cap.pairs*wombatPairInts
	// A region is in place if it still starts at its offset; one with no
	// room allocated (a layout's unused records) is empty.
	in := func(r []int32, off int) bool {
		return len(r) == 0 || off < len(pl.ints) && unsafe.SliceData(r) == &pl.ints[off]
	}
	if pl.host == nil || !in(pl.tiles, 0) || !in(pl.windows, w0) || !in(pl.pairs, p0) || !in(pl.starts, s0) {
		return fmt.Errorf("a plan outside its page-locked memory (it outgrew the room allocated)")
	}
	var errs []error
	copyAsync := func(b gpuBuffer, from int, n int) {
		if n > 0 {
			errs = append(errs, pl.host.CopyToAsync(b.(*cuda.Buffer), 0, 4*int64(from), 4*int64(n), p.copy))
		}
	}
	copyAsync(bufs[0], 0, len(pl.tiles))
	copyAsync(bufs[1], w0, len(pl.windows))
	copyAsync(bufs[3], s0, len(pl.starts))
	errs = append(errs, p.tcopied[s].RecordOn(p.copy))
	copyAsync(bufs[2], p0, len(pl.pairs))
	errs = append(errs, p.copied[s].RecordOn(p.copy), p.ctx.WaitEvent(nil, p.tcopied[s]), p.kstart[s].Record())
	return errors.Join(errs...)
}

// pairsCopied makes the default stream wait for slot s's whole plan.
func (p *wombatPipe) pairsCopied(s int) error { return p.ctx.WaitEvent(nil, p.copied[s]) }

// queued marks the end of slot s's kernels; copied waits until its plan
// has reached the GPU, so that the plan's memory may be refilled.
func (p *wombatPipe) queued(s int) error {
	p.used[s] = true
	return errors.Join(p.kdone[s].Record(), p.copied[s].Synchronize())
}

func (p *wombatPipe) close() error {
	var errs []error
	if p.copy != nil {
		errs = append(errs, p.copy.Synchronize(), p.copy.Destroy())
	}
	for s := range p.copied {
		errs = append(errs, p.tcopied[s].Destroy(), p.copied[s].Destroy(), p.kstart[s].Destroy(), p.kdone[s].Destroy())
	}
	return errors.Join(errs...)
}
