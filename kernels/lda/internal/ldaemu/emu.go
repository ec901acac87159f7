//go:build ldaemu

// Package ldaemu runs lda.cu on the CPU: the CUDA source compiled as C++
// against a shim of the built-ins it uses (shim.h), every block's threads
// as real threads where a kernel synchronises. It lets the lda package's
// GPU tests run the kernels and their host code on a machine with no GPU
// (go test -tags ldaemu ./kernels/lda): slow, and blind to what only a GPU
// shows (races between blocks, timing), which compute-sanitizer and the
// device tests cover.
package ldaemu

/*
#cgo CXXFLAGS: -std=c++20 -O2 -pthread -Wno-unused-function
#cgo LDFLAGS: -pthread
#include <stdlib.h>
#include <string.h>

int emu_global(const char *name, int *value);
int emu_launch(const char *name, unsigned gx, unsigned bx, unsigned long shared, void **args,
               const unsigned long *sizes, unsigned long nargs);
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/kernels/internal/emu"
)

// Device is the emulated GPU: the shared base, with this module's
// constants and kernels.
type Device struct{ emu.Device }

// The engines take the emulator where they take a GPU.
var _ kernels.Device = (*Device)(nil)

// Open returns an emulated GPU. Fresh memory is 0xA5 bytes, so that a
// kernel that reads what nothing wrote reads garbage here too.
func Open() *Device { return &Device{emu.NewDevice("lda.cu on the CPU (ldaemu)", 2, 0xA5)} }

// GlobalInt32 reads a module constant.
func (d *Device) GlobalInt32(name string) (int32, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var v C.int
	if C.emu_global(cs, &v) != 0 {
		return 0, fmt.Errorf("module lda: no global %s", name)
	}
	return int32(v), nil
}

// Launch runs a kernel of lda.cu to completion. Arguments take the types
// cuda.Function.Launch takes (buffers as *emu.Buffer), and must match the
// kernel's parameters in number and size, as on the GPU.
func (d *Device) Launch(kernel string, grid, block cuda.Dim3, shared int, argv ...any) error {
	if grid.Y > 1 || grid.Z > 1 || block.Y > 1 || block.Z > 1 || block.X == 0 || block.X > 1024 || grid.X == 0 {
		return fmt.Errorf("launch %s grid %v block %v: shape unsupported or invalid", kernel, grid, block)
	}
	if block.X&(block.X-1) != 0 {
		return fmt.Errorf("launch %s: block of %d threads, not a power of two", kernel, block.X)
	}
	if err := emu.CheckShared(kernel, shared); err != nil {
		return err
	}
	n := len(argv)
	mem := C.malloc(C.size_t(n*8*2 + 8))
	defer C.free(mem)
	vals := unsafe.Slice((*uint64)(mem), n)
	ptrs := unsafe.Slice((*unsafe.Pointer)(unsafe.Add(mem, n*8)), n)
	sizes := make([]C.ulong, n+1)
	for i, a := range argv {
		var v uint64
		var size int
		switch x := a.(type) {
		case *emu.Buffer:
			if x.Ptr() == nil {
				return fmt.Errorf("kernel %s: argument %d is a freed or nil buffer", kernel, i)
			}
			v, size = uint64(uintptr(x.Ptr())), 8
		case int32:
			v, size = uint64(uint32(x)), 4
		case uint32:
			v, size = uint64(x), 4
		case int64:
			v, size = uint64(x), 8
		case uint64:
			v, size = x, 8
		case float64:
			v, size = math.Float64bits(x), 8
		default:
			return fmt.Errorf("kernel %s: argument %d has unsupported type %T", kernel, i, a)
		}
		// Little-endian: the value's first size bytes are the value.
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		vals[i] = binary.LittleEndian.Uint64(b[:])
		ptrs[i] = unsafe.Pointer(&vals[i])
		sizes[i] = C.ulong(size)
	}
	cs := C.CString(kernel)
	defer C.free(unsafe.Pointer(cs))
	var argp *unsafe.Pointer
	if n > 0 {
		argp = &ptrs[0]
	}
	switch r := int(C.emu_launch(cs, C.uint(grid.X), C.uint(block.X), C.ulong(shared), argp, &sizes[0], C.ulong(n))); {
	case r == -1:
		return fmt.Errorf("module lda: no kernel %s", kernel)
	case r == -2-n:
		return fmt.Errorf("kernel %s: %d arguments, not its parameter count", kernel, n)
	case r < -1:
		return fmt.Errorf("kernel %s: argument %d (%T) does not have its parameter's size", kernel, -2-r, argv[-2-r])
	}
	return nil
}
