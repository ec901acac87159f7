//go:build w2vemu

// Package w2vemu runs w2v.cu on the CPU: the CUDA source compiled as C++
// against a shim of the built-ins it uses (shim.h), every thread of a block
// a real thread, a warp's shuffles exchanged at a barrier. It lets the w2v
// package's GPU tests run the kernels and their host code on a machine with
// no GPU (go test -tags w2vemu ./kernels/w2v): slowly, and blind to what
// only a GPU shows (timing, the memory model), which compute-sanitizer and
// the device tests cover.
package w2vemu

/*
#cgo CXXFLAGS: -std=c++20 -O2 -pthread -Wno-unused-function
#cgo LDFLAGS: -pthread
#include <stdlib.h>
#include <string.h>

#define GRID unsigned gx, unsigned bx, unsigned long sh
#define PARAMS float *syn0, float *syn1, const int *tokens, const int *negs, const int *starts, \
	const float *alphas, const float *tab, int nsent, int d, int wf, int n
int emu_w2v_warps(void);
int emu_w2v_group(void);
int emu_w2v_exp_table(void);
void emu_w2v_sgns_warp1(GRID, PARAMS);
void emu_w2v_sgns_warp2(GRID, PARAMS);
void emu_w2v_sgns_warp4(GRID, PARAMS);
void emu_w2v_sgns_warp8(GRID, PARAMS);
void emu_w2v_sgns_block(GRID, PARAMS);
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

// Device is the emulated GPU.
type Device struct {
	start time.Time
}

// Open returns an emulated GPU.
func Open() *Device { return &Device{} }

// Buffer is emulated device memory (C memory, so kernels keep no Go pointer).
type Buffer struct {
	p     unsafe.Pointer
	bytes int64
}

// Free releases the memory; it is idempotent.
func (b *Buffer) Free() error {
	if b.p != nil {
		C.free(b.p)
		b.p = nil
	}
	return nil
}

// Info describes the emulated GPU.
func (d *Device) Info() cuda.DeviceInfo {
	return cuda.DeviceInfo{Name: "w2v.cu on the CPU (w2vemu)", Major: 9, SMs: 1, SharedPerBlockBytes: SharedPerBlock, MemoryBytes: 1 << 40}
}

// MemFree is what the host may allocate (unbounded for the tests' sizes).
func (d *Device) MemFree() (int64, error) { return 1 << 40, nil }

// Alloc allocates bytes of memory filled with 0xff (NaN as float32), so a
// kernel reading what nobody wrote shows it.
func (d *Device) Alloc(bytes int64) (*Buffer, error) {
	p := C.malloc(C.size_t(bytes))
	if p == nil {
		return nil, fmt.Errorf("allocate %d bytes: out of memory", bytes)
	}
	C.memset(p, 0xff, C.size_t(bytes))
	return &Buffer{p: p, bytes: bytes}, nil
}

func (b *Buffer) view() []byte { return unsafe.Slice((*byte)(b.p), b.bytes) }

// Upload copies src to the start of dst.
func (d *Device) Upload(dst *Buffer, src []byte) error {
	if int64(len(src)) > dst.bytes {
		return fmt.Errorf("upload %d bytes into a buffer of %d", len(src), dst.bytes)
	}
	copy(dst.view(), src)
	return nil
}

// Download copies the start of src into dst.
func (d *Device) Download(dst []byte, src *Buffer) error {
	if int64(len(dst)) > src.bytes {
		return fmt.Errorf("download %d bytes from a buffer of %d", len(dst), src.bytes)
	}
	copy(dst, src.view())
	return nil
}

// GlobalInt32 reads a module constant.
func (d *Device) GlobalInt32(name string) (int32, error) {
	switch name {
	case "w2v_warps":
		return int32(C.emu_w2v_warps()), nil
	case "w2v_group":
		return int32(C.emu_w2v_group()), nil
	case "w2v_exp_table":
		return int32(C.emu_w2v_exp_table()), nil
	}
	return 0, fmt.Errorf("module w2v: no global %s", name)
}

// SetMaxShared checks a request for shared memory against SharedPerBlock.
func (d *Device) SetMaxShared(kernel string, bytes int) error {
	if bytes > SharedPerBlock {
		return fmt.Errorf("kernel %s: %d bytes of shared memory, above %d", kernel, bytes, SharedPerBlock)
	}
	return nil
}

// Start starts the clock.
func (d *Device) Start() error { d.start = time.Now(); return nil }

// Stop returns the time since Start (launches run synchronously).
func (d *Device) Stop() (time.Duration, error) { return time.Since(d.start), nil }

// Close does nothing: buffers are freed one by one.
func (d *Device) Close() error { return nil }

// Launch runs a kernel of w2v.cu to completion. Arguments must have the
// kernels' parameter types exactly (buffers as *Buffer), as on the GPU.
func (d *Device) Launch(kernel string, grid, block cuda.Dim3, shared int, argv ...any) error {
	if grid.Y > 1 || grid.Z > 1 || block.Y > 1 || block.Z > 1 || block.X == 0 || block.X > 1024 || block.X%32 != 0 || grid.X == 0 {
		return fmt.Errorf("launch %s grid %v block %v: shape unsupported or invalid", kernel, grid, block)
	}
	if shared > SharedPerBlock {
		return fmt.Errorf("launch %s: %d bytes of shared memory, above %d", kernel, shared, SharedPerBlock)
	}
	if len(argv) != 11 {
		return fmt.Errorf("kernel %s: %d arguments, want 11", kernel, len(argv))
	}
	var ptrs [7]unsafe.Pointer
	for i := range ptrs {
		b, ok := argv[i].(*Buffer)
		if !ok || b == nil || b.p == nil {
			return fmt.Errorf("kernel %s: argument %d is %T, want a live buffer", kernel, i, argv[i])
		}
		ptrs[i] = b.p
	}
	var ints [4]C.int
	for i := range ints {
		v, ok := argv[7+i].(int32)
		if !ok {
			return fmt.Errorf("kernel %s: argument %d is %T, want int32", kernel, 7+i, argv[7+i])
		}
		ints[i] = C.int(v)
	}
	gx, bx, sh := C.uint(grid.X), C.uint(block.X), C.ulong(shared)
	syn0, syn1 := (*C.float)(ptrs[0]), (*C.float)(ptrs[1])
	tok, neg, starts := (*C.int)(ptrs[2]), (*C.int)(ptrs[3]), (*C.int)(ptrs[4])
	alphas, tab := (*C.float)(ptrs[5]), (*C.float)(ptrs[6])
	switch kernel {
	case "w2v_sgns_warp1":
		C.emu_w2v_sgns_warp1(gx, bx, sh, syn0, syn1, tok, neg, starts, alphas, tab, ints[0], ints[1], ints[2], ints[3])
	case "w2v_sgns_warp2":
		C.emu_w2v_sgns_warp2(gx, bx, sh, syn0, syn1, tok, neg, starts, alphas, tab, ints[0], ints[1], ints[2], ints[3])
	case "w2v_sgns_warp4":
		C.emu_w2v_sgns_warp4(gx, bx, sh, syn0, syn1, tok, neg, starts, alphas, tab, ints[0], ints[1], ints[2], ints[3])
	case "w2v_sgns_warp8":
		C.emu_w2v_sgns_warp8(gx, bx, sh, syn0, syn1, tok, neg, starts, alphas, tab, ints[0], ints[1], ints[2], ints[3])
	case "w2v_sgns_block":
		C.emu_w2v_sgns_block(gx, bx, sh, syn0, syn1, tok, neg, starts, alphas, tab, ints[0], ints[1], ints[2], ints[3])
	default:
		return fmt.Errorf("module w2v: no kernel %s", kernel)
	}
	return nil
}
