// Package emu is what the CPU emulators of the CUDA kernels (ldaemu, riemu,
// w2vemu) share: device memory as C memory, so that kernels compiled for
// the CPU hold no Go pointer, the stage clock, an H100's limits, and
// Device, the part of kernels.Device that does not depend on the module.
package emu

/*
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// SharedPerBlock is the shared memory a block may have, as on an H100.
const SharedPerBlock = 227 << 10

// Buffer is emulated device memory.
type Buffer struct {
	p     unsafe.Pointer
	bytes int64
	freed func(bytes int64)
}

// Alloc allocates bytes of memory with every byte set to fill, so that an
// emulator can make a read of what no kernel wrote show (0xff reads as
// NaN in float32). freed, when set, is told the size when it is freed.
func Alloc(bytes int64, fill byte, freed func(bytes int64)) (*Buffer, error) {
	p := C.malloc(C.size_t(max(bytes, 1)))
	if p == nil {
		return nil, fmt.Errorf("allocate %d bytes: out of memory", bytes)
	}
	C.memset(p, C.int(fill), C.size_t(max(bytes, 1)))
	return &Buffer{p: p, bytes: bytes, freed: freed}, nil
}

// Free releases the memory; it is idempotent.
func (b *Buffer) Free() error {
	if b.p != nil {
		C.free(b.p)
		b.p = nil
		if b.freed != nil {
			b.freed(b.bytes)
		}
	}
	return nil
}

// Ptr is the memory's address, for a kernel argument; nil once freed.
func (b *Buffer) Ptr() unsafe.Pointer {
	if b == nil {
		return nil
	}
	return b.p
}

func (b *Buffer) view() []byte { return unsafe.Slice((*byte)(b.p), b.bytes) }

// Upload copies src to the start of b.
func (b *Buffer) Upload(src []byte) error {
	if int64(len(src)) > b.bytes {
		return fmt.Errorf("upload %d bytes into a buffer of %d", len(src), b.bytes)
	}
	copy(b.view(), src)
	return nil
}

// Download copies the start of b into dst.
func (b *Buffer) Download(dst []byte) error {
	if int64(len(dst)) > b.bytes {
		return fmt.Errorf("download %d bytes from a buffer of %d", len(dst), b.bytes)
	}
	copy(dst, b.view())
	return nil
}

// Memset sets every byte of b to v.
func (b *Buffer) Memset(v byte) error {
	C.memset(b.p, C.int(v), C.size_t(b.bytes))
	return nil
}

// CopyPeer copies bytes from src at srcOff to dst at dstOff, as between
// two GPUs (the buffers may belong to two emulated devices).
func CopyPeer(dst *Buffer, dstOff int64, src *Buffer, srcOff int64, bytes int64) error {
	if bytes < 0 || dstOff < 0 || srcOff < 0 || dstOff+bytes > dst.bytes || srcOff+bytes > src.bytes {
		return fmt.Errorf("peer copy of %d bytes from offset %d of %d to offset %d of %d: out of range",
			bytes, srcOff, src.bytes, dstOff, dst.bytes)
	}
	copy(dst.view()[dstOff:dstOff+bytes], src.view()[srcOff:srcOff+bytes])
	return nil
}

// Info describes an emulated GPU named name with sms multiprocessors.
func Info(name string, sms int) cuda.DeviceInfo {
	return cuda.DeviceInfo{Name: name, Major: 9, SMs: sms, SharedPerBlockBytes: SharedPerBlock, MemoryBytes: 1 << 40}
}

// CheckShared checks a kernel's request for dynamic shared memory against
// SharedPerBlock.
func CheckShared(kernel string, bytes int) error {
	if bytes > SharedPerBlock {
		return fmt.Errorf("kernel %s: %d bytes of shared memory, above %d", kernel, bytes, SharedPerBlock)
	}
	return nil
}

// Clock times a stage: launches run synchronously, so the time since
// Start is the stage's.
type Clock struct{ start time.Time }

// Start starts the stage clock.
func (c *Clock) Start() error { c.start = time.Now(); return nil }

// Stop returns the time since Start.
func (c *Clock) Stop() (time.Duration, error) { return time.Since(c.start), nil }

// Device is an emulated GPU but for its module: an emulator embeds it and
// adds GlobalInt32 and Launch to make a kernels.Device.
type Device struct {
	Clock
	name string
	sms  int
	fill byte
	live int64 // bytes allocated and not freed
}

// NewDevice returns an emulated GPU called name with sms multiprocessors
// (how many blocks the emulator runs at once), whose fresh memory reads as
// fill: each emulator picks a fill its kernels' types make conspicuous.
func NewDevice(name string, sms int, fill byte) Device {
	return Device{name: name, sms: sms, fill: fill}
}

// Info describes the emulated GPU.
func (d *Device) Info() cuda.DeviceInfo { return Info(d.name, d.sms) }

// MemFree is what the host may allocate: unbounded for the tests' sizes,
// less what is allocated, so that a leak shows as on a GPU.
func (d *Device) MemFree() (int64, error) { return 1<<40 - d.live, nil }

// Alloc allocates bytes of memory filled with the device's fill.
func (d *Device) Alloc(bytes int64) (kernels.Buffer, error) {
	b, err := Alloc(bytes, d.fill, func(n int64) { d.live -= n })
	if err != nil {
		return nil, err
	}
	d.live += bytes
	return b, nil
}

// Upload copies src to the start of dst.
func (d *Device) Upload(dst kernels.Buffer, src []byte) error { return dst.(*Buffer).Upload(src) }

// Download copies the start of src into dst.
func (d *Device) Download(dst []byte, src kernels.Buffer) error {
	return src.(*Buffer).Download(dst)
}

// Memset sets every byte of b to v.
func (d *Device) Memset(b kernels.Buffer, v byte) error { return b.(*Buffer).Memset(v) }

// SetMaxShared checks a request for shared memory against SharedPerBlock.
func (d *Device) SetMaxShared(kernel string, bytes int) error { return CheckShared(kernel, bytes) }

// EnablePeer does nothing: every emulated device reaches every other's
// memory.
func (d *Device) EnablePeer(kernels.Device) error { return nil }

// CopyPeer copies bytes from src at srcOff to dst at dstOff.
func (d *Device) CopyPeer(dst kernels.Buffer, dstOff int64, src kernels.Buffer, srcOff int64, bytes int64) error {
	return CopyPeer(dst.(*Buffer), dstOff, src.(*Buffer), srcOff, bytes)
}

// Close does nothing: buffers are freed one by one.
func (d *Device) Close() error { return nil }
