// Package emu is what the CPU emulators of the CUDA kernels (ldaemu, riemu,
// w2vemu) share: device memory as C memory, so that kernels compiled for
// the CPU hold no Go pointer, the stage clock, and an H100's limits.
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
