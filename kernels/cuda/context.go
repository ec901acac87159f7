package cuda

/*
#include "trampolines.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// ctxSchedBlockingSync makes the host thread sleep, not spin, while it waits
// for the GPU: a spinning core would add its own heat to a thermal study.
const ctxSchedBlockingSync = 0x04

// Context is a GPU's primary context. Its methods may be called from any
// goroutine, concurrently; each makes the context current on the calling OS
// thread for its duration (see the package comment).
type Context struct {
	drv  *Driver
	info DeviceInfo
	dev  C.CUdevice
	ctx  C.CUcontext

	mu     sync.Mutex // guards closed
	closed bool
}

// Open retains GPU ordinal's primary context (the one the CUDA runtime and
// cuBLAS also use, so they share memory and modules with it).
func (d *Driver) Open(ordinal int) (*Context, error) {
	info, err := d.Device(ordinal)
	if err != nil {
		return nil, err
	}
	dev, err := d.device(ordinal)
	if err != nil {
		return nil, err
	}
	// Best effort: the flags cannot change while another user in this
	// process holds the primary context active.
	if err := d.check("cuDevicePrimaryCtxSetFlags", C.hs_devFlags(d.cuDevicePrimaryCtxSetFlags, dev, ctxSchedBlockingSync)); err != nil {
		var ce *Error
		if !errors.As(err, &ce) || ce.Code != errorPrimaryContextActive {
			return nil, err
		}
	}
	c := &Context{drv: d, info: info, dev: dev}
	if err := d.check("cuDevicePrimaryCtxRetain", C.hs_primaryCtxRetain(d.cuDevicePrimaryCtxRetain, &c.ctx, dev)); err != nil {
		return nil, fmt.Errorf("GPU %d: %w", ordinal, err)
	}
	return c, nil
}

// Device describes the context's GPU.
func (c *Context) Device() DeviceInfo { return c.info }

// Driver is the driver the context came from.
func (c *Context) Driver() *Driver { return c.drv }

// Do runs f with the context current on a locked OS thread, so that every
// driver or library call f makes reaches this GPU.
func (c *Context) Do(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return fmt.Errorf("GPU %d: context already closed", c.info.Ordinal)
	}
	if err := c.drv.check("cuCtxSetCurrent", C.hs_ptr(c.drv.cuCtxSetCurrent, unsafe.Pointer(c.ctx))); err != nil {
		return err
	}
	return f()
}

// Close releases the primary context. Memory, modules and events must have
// been freed first. Close is idempotent.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return c.drv.check("cuDevicePrimaryCtxRelease", C.hs_dev(c.drv.cuDevicePrimaryCtxRelease, c.dev))
}

// Synchronize waits until the GPU has finished all work issued so far and
// returns any error a kernel raised.
func (c *Context) Synchronize() error {
	return c.Do(func() error {
		return c.drv.check("cuCtxSynchronize", C.hs_void(c.drv.cuCtxSynchronize))
	})
}

// MemInfo is the GPU's free and total memory in bytes.
func (c *Context) MemInfo() (free, total int64, err error) {
	var f, t C.size_t
	err = c.Do(func() error {
		return c.drv.check("cuMemGetInfo", C.hs_memGetInfo(c.drv.cuMemGetInfo, &f, &t))
	})
	return int64(f), int64(t), err
}

// DevicePtr is an address in GPU memory.
type DevicePtr uint64

// Buffer is an allocation of GPU memory.
type Buffer struct {
	ctx   *Context
	ptr   DevicePtr
	bytes int64
}

// Alloc allocates bytes of GPU memory (uninitialised).
func (c *Context) Alloc(bytes int64) (*Buffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("allocate %d bytes: size must be positive", bytes)
	}
	var p C.CUdeviceptr
	err := c.Do(func() error {
		return c.drv.check("cuMemAlloc", C.hs_memAlloc(c.drv.cuMemAlloc, &p, C.size_t(bytes)))
	})
	if err != nil {
		return nil, fmt.Errorf("GPU %d: allocate %d bytes: %w", c.info.Ordinal, bytes, err)
	}
	return &Buffer{ctx: c, ptr: DevicePtr(p), bytes: bytes}, nil
}

// Ptr is the buffer's device address, for kernel arguments.
func (b *Buffer) Ptr() DevicePtr { return b.ptr }

// Bytes is the buffer's size.
func (b *Buffer) Bytes() int64 { return b.bytes }

// Free returns the memory to the driver. It is idempotent, and safe on a nil
// Buffer, so cleanup code can call it on every path.
func (b *Buffer) Free() error {
	if b == nil || b.ptr == 0 {
		return nil
	}
	c := b.ctx
	err := c.Do(func() error {
		return c.drv.check("cuMemFree", C.hs_memFree(c.drv.cuMemFree, C.CUdeviceptr(b.ptr)))
	})
	b.ptr = 0
	return err
}

// Memset sets every byte of the buffer to v.
func (b *Buffer) Memset(v byte) error {
	c := b.ctx
	return c.Do(func() error {
		return c.drv.check("cuMemsetD8", C.hs_memsetD8(c.drv.cuMemsetD8, C.CUdeviceptr(b.ptr), C.uchar(v), C.size_t(b.bytes)))
	})
}

// CopyFrom copies the first bytes of src to the start of b, on the GPU
// (cuMemcpyDtoD: the device-to-device copy that STREAM compares against).
func (b *Buffer) CopyFrom(src *Buffer, bytes int64) error {
	if bytes > b.bytes || bytes > src.bytes || bytes < 0 {
		return fmt.Errorf("device copy of %d bytes: buffers hold %d and %d", bytes, src.bytes, b.bytes)
	}
	c := b.ctx
	return c.Do(func() error {
		return c.drv.check("cuMemcpyDtoD", C.hs_dtod(c.drv.cuMemcpyDtoD, C.CUdeviceptr(b.ptr), C.CUdeviceptr(src.ptr), C.size_t(bytes)))
	})
}

// Element is a plain numeric type: slices of it hold no Go pointers, so they
// may be handed to the driver.
type Element interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Upload copies src to the start of b.
func Upload[T Element](b *Buffer, src []T) error {
	if len(src) == 0 {
		return nil
	}
	n := int64(len(src)) * int64(unsafe.Sizeof(src[0]))
	if n > b.bytes {
		return fmt.Errorf("upload %d bytes into a buffer of %d", n, b.bytes)
	}
	c := b.ctx
	return c.Do(func() error {
		return c.drv.check("cuMemcpyHtoD", C.hs_htod(c.drv.cuMemcpyHtoD, C.CUdeviceptr(b.ptr), unsafe.Pointer(&src[0]), C.size_t(n)))
	})
}

// Download copies the start of b into dst.
func Download[T Element](dst []T, b *Buffer) error {
	if len(dst) == 0 {
		return nil
	}
	n := int64(len(dst)) * int64(unsafe.Sizeof(dst[0]))
	if n > b.bytes {
		return fmt.Errorf("download %d bytes from a buffer of %d", n, b.bytes)
	}
	c := b.ctx
	return c.Do(func() error {
		return c.drv.check("cuMemcpyDtoH", C.hs_dtoh(c.drv.cuMemcpyDtoH, unsafe.Pointer(&dst[0]), C.CUdeviceptr(b.ptr), C.size_t(n)))
	})
}

// Event marks a point in the GPU's work, for timing and waiting.
type Event struct {
	ctx *Context
	ev  C.CUevent
}

// eventBlockingSync makes Synchronize sleep rather than spin.
const eventBlockingSync = 0x1

// cudaErrorNotReady is cuEventQuery's answer for an event not yet reached
// (CUDA_ERROR_NOT_READY).
const cudaErrorNotReady = 600

// NewEvent creates a timing event.
func (c *Context) NewEvent() (*Event, error) {
	e := &Event{ctx: c}
	err := c.Do(func() error {
		return c.drv.check("cuEventCreate", C.hs_eventCreate(c.drv.cuEventCreate, &e.ev, eventBlockingSync))
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Record marks the point after all work issued so far.
func (e *Event) Record() error {
	c := e.ctx
	return c.Do(func() error {
		return c.drv.check("cuEventRecord", C.hs_eventRecord(c.drv.cuEventRecord, e.ev, nil))
	})
}

// Synchronize waits until the GPU reaches the event.
func (e *Event) Synchronize() error {
	c := e.ctx
	return c.Do(func() error {
		return c.drv.check("cuEventSynchronize", C.hs_ptr(c.drv.cuEventSynchronize, unsafe.Pointer(e.ev)))
	})
}

// Reached reports whether the GPU has reached the event, without waiting.
func (e *Event) Reached() (bool, error) {
	c := e.ctx
	var r C.CUresult
	err := c.Do(func() error {
		r = C.hs_ptr(c.drv.cuEventQuery, unsafe.Pointer(e.ev))
		return nil
	})
	if err != nil || r == cudaErrorNotReady {
		return false, err
	}
	return r == 0, c.drv.check("cuEventQuery", r)
}

// Since is the GPU time between start and e, both recorded and reached.
func (e *Event) Since(start *Event) (time.Duration, error) {
	c := e.ctx
	var ms C.float
	err := c.Do(func() error {
		return c.drv.check("cuEventElapsedTime", C.hs_eventElapsed(c.drv.cuEventElapsedTime, &ms, start.ev, e.ev))
	})
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// Destroy frees the event; it is idempotent and safe on nil.
func (e *Event) Destroy() error {
	if e == nil || e.ev == nil {
		return nil
	}
	c := e.ctx
	err := c.Do(func() error {
		return c.drv.check("cuEventDestroy", C.hs_ptr(c.drv.cuEventDestroy, unsafe.Pointer(e.ev)))
	})
	e.ev = nil
	return err
}
