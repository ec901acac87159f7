package cuda

/*
#include "trampolines.h"
*/
import "C"

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unsafe"
)

// jitLogBytes is the room for a PTX compilation's error log.
const jitLogBytes = 16 << 10

// Function attributes (CUfunction_attribute).
const (
	FuncMaxThreadsPerBlock        = 0
	FuncSharedSizeBytes           = 1
	FuncLocalSizeBytes            = 3
	FuncNumRegs                   = 4
	FuncMaxDynamicSharedSizeBytes = 8
)

// Module is code loaded into a context: a fatbin, cubin or PTX image.
type Module struct {
	ctx  *Context
	name string
	mod  C.CUmodule
}

// LoadModule loads image (fatbin, cubin, or PTX text, which the driver
// compiles for this GPU). name labels errors. A PTX compilation error
// carries the compiler's log.
func (c *Context) LoadModule(name string, image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("load module %s: empty image", name)
	}
	// The image goes to C memory, NUL-terminated as PTX text must be.
	img := C.malloc(C.size_t(len(image) + 1))
	defer C.free(img)
	buf := unsafe.Slice((*byte)(img), len(image)+1)
	copy(buf, image)
	buf[len(image)] = 0

	logBuf := C.calloc(jitLogBytes, 1)
	defer C.free(logBuf)
	opts := (*[2]C.int)(C.malloc(C.size_t(2 * unsafe.Sizeof(C.int(0)))))
	defer C.free(unsafe.Pointer(opts))
	vals := (*[2]unsafe.Pointer)(C.malloc(C.size_t(2 * unsafe.Sizeof(unsafe.Pointer(nil)))))
	defer C.free(unsafe.Pointer(vals))
	C.hs_jitLogOptions(&opts[0], &vals[0], logBuf, jitLogBytes)

	m := &Module{ctx: c, name: name}
	err := c.Do(func() error {
		return c.drv.check("cuModuleLoadDataEx", C.hs_moduleLoadDataEx(c.drv.cuModuleLoadDataEx, &m.mod, img, 2, &opts[0], &vals[0]))
	})
	if err != nil {
		if log := strings.TrimSpace(C.GoString((*C.char)(logBuf))); log != "" {
			return nil, fmt.Errorf("load module %s: %w\n%s", name, err, log)
		}
		return nil, fmt.Errorf("load module %s: %w", name, err)
	}
	return m, nil
}

// Unload frees the module; it is idempotent and safe on nil.
func (m *Module) Unload() error {
	if m == nil || m.mod == nil {
		return nil
	}
	c := m.ctx
	err := c.Do(func() error {
		return c.drv.check("cuModuleUnload", C.hs_ptr(c.drv.cuModuleUnload, unsafe.Pointer(m.mod)))
	})
	m.mod = nil
	return err
}

// Function is a kernel in a module.
type Function struct {
	mod  *Module
	name string
	fn   C.CUfunction
}

// Function finds the kernel called name (an extern "C" __global__).
func (m *Module) Function(name string) (*Function, error) {
	f := &Function{mod: m, name: name}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	c := m.ctx
	err := c.Do(func() error {
		return c.drv.check("cuModuleGetFunction", C.hs_moduleGetFunction(c.drv.cuModuleGetFunction, &f.fn, m.mod, cname))
	})
	if err != nil {
		return nil, fmt.Errorf("module %s: kernel %s: %w", m.name, name, err)
	}
	return f, nil
}

// GlobalInt32 reads the __device__ int variable called name (extern "C").
func (m *Module) GlobalInt32(name string) (int32, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var p C.CUdeviceptr
	var size C.size_t
	var v int32
	c := m.ctx
	err := c.Do(func() error {
		if err := c.drv.check("cuModuleGetGlobal", C.hs_moduleGetGlobal(c.drv.cuModuleGetGlobal, &p, &size, m.mod, cname)); err != nil {
			return err
		}
		if size != 4 {
			return fmt.Errorf("is %d bytes, not an int", size)
		}
		return c.drv.check("cuMemcpyDtoH", C.hs_dtoh(c.drv.cuMemcpyDtoH, unsafe.Pointer(&v), p, 4))
	})
	if err != nil {
		return 0, fmt.Errorf("module %s: global %s: %w", m.name, name, err)
	}
	return v, nil
}

// Name is the kernel's name.
func (f *Function) Name() string { return f.name }

// Attribute reads a Func* attribute (registers, local memory...).
func (f *Function) Attribute(attr int) (int, error) {
	var v C.int
	c := f.mod.ctx
	err := c.Do(func() error {
		return c.drv.check("cuFuncGetAttribute", C.hs_funcGetAttribute(c.drv.cuFuncGetAttribute, &v, C.int(attr), f.fn))
	})
	return int(v), err
}

// SetMaxDynamicShared allows launches with up to bytes of dynamic shared
// memory (needed above 48 KiB).
func (f *Function) SetMaxDynamicShared(bytes int) error {
	c := f.mod.ctx
	err := c.Do(func() error {
		return c.drv.check("cuFuncSetAttribute", C.hs_funcSetAttribute(c.drv.cuFuncSetAttribute, f.fn, FuncMaxDynamicSharedSizeBytes, C.int(bytes)))
	})
	if err != nil {
		return fmt.Errorf("kernel %s: allow %d bytes of shared memory: %w", f.name, bytes, err)
	}
	return nil
}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Dim1 is the one-dimensional shape x.
func Dim1(x int) Dim3 { return Dim3{uint32(x), 1, 1} }

// Launch queues the kernel on the default stream with the given arguments,
// which must match the kernel's parameters in order and type: DevicePtr (or
// *Buffer) for pointers, and int32, int64, uint32, uint64, float32, float64.
// Launch errors (a bad shape, too much shared memory) are returned here; a
// fault inside the kernel surfaces at the next synchronising call.
func (f *Function) Launch(grid, block Dim3, sharedBytes int, args ...any) error {
	blob, offsets, err := packParams(args)
	if err != nil {
		return fmt.Errorf("kernel %s: %w", f.name, err)
	}
	// cuLaunchKernel takes an array of pointers to the argument values: both
	// live in C memory, as cgo forbids passing Go memory holding pointers.
	ptrBytes := len(args) * int(unsafe.Sizeof(unsafe.Pointer(nil)))
	mem := C.malloc(C.size_t(ptrBytes + len(blob) + 1))
	defer C.free(mem)
	ptrs := unsafe.Slice((*unsafe.Pointer)(mem), len(args))
	vals := unsafe.Add(mem, ptrBytes)
	copy(unsafe.Slice((*byte)(vals), len(blob)), blob)
	for i, off := range offsets {
		ptrs[i] = unsafe.Add(vals, off)
	}
	var params *unsafe.Pointer
	if len(args) > 0 {
		params = &ptrs[0]
	}
	c := f.mod.ctx
	err = c.Do(func() error {
		return c.drv.check("cuLaunchKernel", C.hs_launch(c.drv.cuLaunchKernel, f.fn,
			C.uint(grid.X), C.uint(grid.Y), C.uint(grid.Z), C.uint(block.X), C.uint(block.Y), C.uint(block.Z),
			C.uint(sharedBytes), nil, params))
	})
	if err != nil {
		return fmt.Errorf("launch %s grid %v block %v shared %d: %w", f.name, grid, block, sharedBytes, err)
	}
	return nil
}

// packParams lays the arguments out as little-endian values, each aligned
// to its size, and returns the bytes and each argument's offset.
func packParams(args []any) ([]byte, []int, error) {
	var buf bytes.Buffer
	offsets := make([]int, len(args))
	put := func(size int, v any) {
		for buf.Len()%size != 0 {
			buf.WriteByte(0)
		}
		_ = binary.Write(&buf, binary.LittleEndian, v)
	}
	for i, a := range args {
		var size int
		var v any
		switch x := a.(type) {
		case DevicePtr:
			size, v = 8, uint64(x)
		case *Buffer:
			if x == nil || x.ptr == 0 {
				return nil, nil, fmt.Errorf("argument %d: freed or nil buffer", i)
			}
			size, v = 8, uint64(x.ptr)
		case int32:
			size, v = 4, x
		case uint32:
			size, v = 4, x
		case int64:
			size, v = 8, x
		case uint64:
			size, v = 8, x
		case float32:
			size, v = 4, math.Float32bits(x)
		case float64:
			size, v = 8, math.Float64bits(x)
		default:
			return nil, nil, fmt.Errorf("argument %d: unsupported type %T (use a sized type)", i, a)
		}
		for buf.Len()%size != 0 {
			buf.WriteByte(0)
		}
		offsets[i] = buf.Len()
		put(size, v)
	}
	return buf.Bytes(), offsets, nil
}
