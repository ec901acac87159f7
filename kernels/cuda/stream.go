package cuda

/*
#include "trampolines.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// streamNonBlocking keeps a stream's work from synchronising with the
// default (NULL) stream's, where Launch and Event.Record queue theirs: a
// copy on it can overlap a kernel there.
const streamNonBlocking = 0x1

// Stream is a queue of GPU work that runs in order, beside the default
// stream's; events order work between them.
type Stream struct {
	ctx *Context
	s   C.CUstream
}

// NewStream creates a stream that does not wait for the default stream.
func (c *Context) NewStream() (*Stream, error) {
	s := &Stream{ctx: c}
	err := c.Do(func() error {
		return c.drv.check("cuStreamCreate", C.hs_streamCreate(c.drv.cuStreamCreate, &s.s, streamNonBlocking))
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// handle is the stream for the driver: nil is the default stream.
func (s *Stream) handle() C.CUstream {
	if s == nil {
		return nil
	}
	return s.s
}

// Synchronize waits until the stream's work is done.
func (s *Stream) Synchronize() error {
	c := s.ctx
	return c.Do(func() error {
		return c.drv.check("cuStreamSynchronize", C.hs_ptr(c.drv.cuStreamSynchronize, unsafe.Pointer(s.s)))
	})
}

// Destroy releases the stream once its work is done; it is idempotent and
// safe on nil.
func (s *Stream) Destroy() error {
	if s == nil || s.s == nil {
		return nil
	}
	c := s.ctx
	err := c.Do(func() error {
		return c.drv.check("cuStreamDestroy", C.hs_ptr(c.drv.cuStreamDestroy, unsafe.Pointer(s.s)))
	})
	s.s = nil
	return err
}

// WaitEvent makes the work queued on s after this call (s nil: the
// default stream) wait until the GPU reaches e's last Record. An event
// never recorded is reached already.
func (c *Context) WaitEvent(s *Stream, e *Event) error {
	return c.Do(func() error {
		return c.drv.check("cuStreamWaitEvent", C.hs_streamWaitEvent(c.drv.cuStreamWaitEvent, s.handle(), e.ev, 0))
	})
}

// RecordOn marks the point after the work queued on s so far (s nil: the
// default stream, as Record).
func (e *Event) RecordOn(s *Stream) error {
	c := e.ctx
	return c.Do(func() error {
		return c.drv.check("cuEventRecord", C.hs_eventRecord(c.drv.cuEventRecord, e.ev, s.handle()))
	})
}

// HostBuffer is page-locked host memory: the GPU copies from it directly,
// so a copy from it can run while the host and the GPU do other work.
type HostBuffer struct {
	ctx   *Context
	p     unsafe.Pointer
	bytes int64
}

// AllocHost allocates bytes of page-locked host memory (uninitialised).
func (c *Context) AllocHost(bytes int64) (*HostBuffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("allocate %d bytes of host memory: size must be positive", bytes)
	}
	h := &HostBuffer{ctx: c, bytes: bytes}
	err := c.Do(func() error {
		return c.drv.check("cuMemAllocHost", C.hs_memAllocHost(c.drv.cuMemAllocHost, &h.p, C.size_t(bytes)))
	})
	if err != nil {
		return nil, fmt.Errorf("GPU %d: allocate %d bytes of page-locked host memory: %w", c.info.Ordinal, bytes, err)
	}
	return h, nil
}

// Bytes is the memory as a slice; it is valid until Free.
func (h *HostBuffer) Bytes() []byte { return unsafe.Slice((*byte)(h.p), h.bytes) }

// Free returns the memory to the driver. It is idempotent and safe on nil.
func (h *HostBuffer) Free() error {
	if h == nil || h.p == nil {
		return nil
	}
	c := h.ctx
	err := c.Do(func() error {
		return c.drv.check("cuMemFreeHost", C.hs_ptr(c.drv.cuMemFreeHost, h.p))
	})
	h.p = nil
	return err
}

// CopyToAsync queues on s (nil: the default stream) the copy of bytes
// from offset src of h to offset dst of b, and returns at once: h's bytes
// must stay as they are until the copy is done (an event recorded on s
// after it says when).
func (h *HostBuffer) CopyToAsync(b *Buffer, dst, src, bytes int64, s *Stream) error {
	if h == nil || h.p == nil || b == nil || b.ptr == 0 {
		return fmt.Errorf("asynchronous copy: freed or nil buffer")
	}
	if bytes < 0 || src < 0 || dst < 0 || src+bytes > h.bytes || dst+bytes > b.bytes {
		return fmt.Errorf("asynchronous copy of %d bytes from offset %d of %d host bytes to offset %d of a buffer of %d", bytes, src, h.bytes, dst, b.bytes)
	}
	if bytes == 0 {
		return nil
	}
	c := b.ctx
	return c.Do(func() error {
		return c.drv.check("cuMemcpyHtoDAsync", C.hs_htodAsync(c.drv.cuMemcpyHtoDAsync, C.CUdeviceptr(b.ptr+DevicePtr(dst)),
			unsafe.Add(h.p, src), C.size_t(bytes), s.handle()))
	})
}
