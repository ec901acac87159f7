// Package cuda is a binding to the CUDA driver API, opened at run time with
// dlopen("libcuda.so.1"): a binary built without CUDA headers or toolkit runs
// GPU work wherever the NVIDIA driver is installed, and everywhere else
// reports ErrNoDriver.
//
// Threading: a CUDA context is current per OS thread, and goroutines move
// between threads. Every method of Context therefore locks its goroutine to
// the OS thread and makes the context current (cuCtxSetCurrent, a few tens of
// nanoseconds) for the duration of the call, so a Context may be used from
// any goroutine, concurrently (the driver API is thread-safe). Context.Do
// extends that to a caller's own sequence of calls (cuBLAS uses it). The
// alternative, locking a job's goroutine to one thread for its whole life,
// would not survive the runner calling Iterate from different goroutines.
//
// Every driver call's CUresult becomes an *Error carrying the driver's own
// name and message for it (cuGetErrorName, cuGetErrorString).
package cuda

/*
#include "trampolines.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/heatsink-hpc/heatsink/kernels/internal/dl"
)

// DriverLibrary is the soname of the CUDA driver library.
const DriverLibrary = "libcuda.so.1"

// ErrNoDriver means the CUDA driver library could not be opened or is not a
// usable CUDA driver; GPU work is impossible on this machine.
var ErrNoDriver = errors.New("no CUDA driver")

// Error is a failed driver call.
type Error struct {
	Op      string // the driver function, e.g. "cuMemAlloc"
	Code    int    // the CUresult
	Name    string // e.g. "CUDA_ERROR_OUT_OF_MEMORY"
	Message string // e.g. "out of memory"
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Op, e.Message, e.Name)
}

// CUresult codes the package treats specially.
const (
	errorNoDevice             = 100
	errorPrimaryContextActive = 708
)

// Driver is an open CUDA driver: the function pointers heatsink uses.
type Driver struct {
	path    string
	version int

	cuInit, cuDriverGetVersion, cuGetErrorName, cuGetErrorString                              unsafe.Pointer
	cuDeviceGetCount, cuDeviceGet, cuDeviceGetName, cuDeviceGetAttribute                      unsafe.Pointer
	cuDeviceTotalMem, cuDeviceGetUuid                                                         unsafe.Pointer
	cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxSetFlags           unsafe.Pointer
	cuCtxSetCurrent, cuCtxSynchronize                                                         unsafe.Pointer
	cuModuleLoadDataEx, cuModuleUnload, cuModuleGetFunction, cuModuleGetGlobal                unsafe.Pointer
	cuFuncSetAttribute, cuFuncGetAttribute, cuLaunchKernel                                    unsafe.Pointer
	cuMemAlloc, cuMemFree, cuMemcpyHtoD, cuMemcpyDtoH, cuMemcpyDtoD, cuMemsetD8, cuMemGetInfo unsafe.Pointer
	cuEventCreate, cuEventDestroy, cuEventRecord, cuEventSynchronize, cuEventElapsedTime      unsafe.Pointer
	cuEventQuery                                                                              unsafe.Pointer
	cuMemcpyPeer, cuMemcpyPeerAsync, cuDeviceCanAccessPeer, cuCtxEnablePeerAccess             unsafe.Pointer
	cuStreamCreate, cuStreamDestroy, cuStreamSynchronize, cuStreamWaitEvent                   unsafe.Pointer
	cuMemAllocHost, cuMemFreeHost, cuMemcpyHtoDAsync                                          unsafe.Pointer
}

// Load opens libcuda.so.1 and initialises the driver. Without a driver the
// error wraps ErrNoDriver and reads "no CUDA driver: libcuda.so.1: <why>".
// Loading is cheap after the first time (the library stays open, cuInit is
// idempotent), so callers need not share a Driver.
func Load() (*Driver, error) { return LoadLibrary(DriverLibrary) }

// OpenGPU is Load, then Open(ordinal): the context of GPU ordinal through
// the system's driver.
func OpenGPU(ordinal int) (*Context, error) {
	drv, err := Load()
	if err != nil {
		return nil, err
	}
	return drv.Open(ordinal)
}

// LoadLibrary is Load with another library name or path.
func LoadLibrary(name string) (*Driver, error) {
	lib, err := dl.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoDriver, err)
	}
	d := &Driver{}
	syms := []struct {
		p     *unsafe.Pointer
		names []string // preferred first
	}{
		{&d.cuInit, []string{"cuInit"}},
		{&d.cuDriverGetVersion, []string{"cuDriverGetVersion"}},
		{&d.cuGetErrorName, []string{"cuGetErrorName"}},
		{&d.cuGetErrorString, []string{"cuGetErrorString"}},
		{&d.cuDeviceGetCount, []string{"cuDeviceGetCount"}},
		{&d.cuDeviceGet, []string{"cuDeviceGet"}},
		{&d.cuDeviceGetName, []string{"cuDeviceGetName"}},
		{&d.cuDeviceGetAttribute, []string{"cuDeviceGetAttribute"}},
		{&d.cuDeviceTotalMem, []string{"cuDeviceTotalMem_v2"}},
		{&d.cuDeviceGetUuid, []string{"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}},
		{&d.cuDevicePrimaryCtxRetain, []string{"cuDevicePrimaryCtxRetain"}},
		{&d.cuDevicePrimaryCtxRelease, []string{"cuDevicePrimaryCtxRelease_v2"}},
		{&d.cuDevicePrimaryCtxSetFlags, []string{"cuDevicePrimaryCtxSetFlags_v2"}},
		{&d.cuCtxSetCurrent, []string{"cuCtxSetCurrent"}},
		{&d.cuCtxSynchronize, []string{"cuCtxSynchronize"}},
		{&d.cuModuleLoadDataEx, []string{"cuModuleLoadDataEx"}},
		{&d.cuModuleUnload, []string{"cuModuleUnload"}},
		{&d.cuModuleGetFunction, []string{"cuModuleGetFunction"}},
		{&d.cuModuleGetGlobal, []string{"cuModuleGetGlobal_v2"}},
		{&d.cuFuncSetAttribute, []string{"cuFuncSetAttribute"}},
		{&d.cuFuncGetAttribute, []string{"cuFuncGetAttribute"}},
		{&d.cuLaunchKernel, []string{"cuLaunchKernel"}},
		{&d.cuMemAlloc, []string{"cuMemAlloc_v2"}},
		{&d.cuMemFree, []string{"cuMemFree_v2"}},
		{&d.cuMemcpyHtoD, []string{"cuMemcpyHtoD_v2"}},
		{&d.cuMemcpyDtoH, []string{"cuMemcpyDtoH_v2"}},
		{&d.cuMemcpyDtoD, []string{"cuMemcpyDtoD_v2"}},
		{&d.cuMemsetD8, []string{"cuMemsetD8_v2"}},
		{&d.cuMemGetInfo, []string{"cuMemGetInfo_v2"}},
		{&d.cuEventCreate, []string{"cuEventCreate"}},
		{&d.cuEventDestroy, []string{"cuEventDestroy_v2"}},
		{&d.cuEventRecord, []string{"cuEventRecord"}},
		{&d.cuEventSynchronize, []string{"cuEventSynchronize"}},
		{&d.cuEventQuery, []string{"cuEventQuery"}},
		{&d.cuEventElapsedTime, []string{"cuEventElapsedTime_v2", "cuEventElapsedTime"}},
		{&d.cuMemcpyPeer, []string{"cuMemcpyPeer"}},
		{&d.cuMemcpyPeerAsync, []string{"cuMemcpyPeerAsync"}},
		{&d.cuDeviceCanAccessPeer, []string{"cuDeviceCanAccessPeer"}},
		{&d.cuCtxEnablePeerAccess, []string{"cuCtxEnablePeerAccess"}},
		{&d.cuStreamCreate, []string{"cuStreamCreate"}},
		{&d.cuStreamDestroy, []string{"cuStreamDestroy_v2"}},
		{&d.cuStreamSynchronize, []string{"cuStreamSynchronize"}},
		{&d.cuStreamWaitEvent, []string{"cuStreamWaitEvent"}},
		{&d.cuMemAllocHost, []string{"cuMemAllocHost_v2"}},
		{&d.cuMemFreeHost, []string{"cuMemFreeHost"}},
		{&d.cuMemcpyHtoDAsync, []string{"cuMemcpyHtoDAsync_v2"}},
	}
	for _, s := range syms {
		var firstErr error
		for _, n := range s.names {
			p, err := lib.Sym(n)
			if err == nil {
				*s.p = p
				break
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		if *s.p == nil {
			return nil, fmt.Errorf("%w: %s is not a usable CUDA driver: %v", ErrNoDriver, name, firstErr)
		}
	}
	d.path = dl.Path(d.cuInit)
	if d.path == "" {
		d.path = name
	}
	if err := d.check("cuInit", C.hs_u(d.cuInit, 0)); err != nil {
		var ce *Error
		if errors.As(err, &ce) && ce.Code == errorNoDevice {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoDriver, name, err)
		}
		return nil, err
	}
	var v C.int
	if err := d.check("cuDriverGetVersion", C.hs_pint(d.cuDriverGetVersion, &v)); err != nil {
		return nil, err
	}
	d.version = int(v)
	return d, nil
}

// Path is the file the driver was loaded from.
func (d *Driver) Path() string { return d.path }

// Version is the CUDA version the driver supports, as major*1000 + minor*10
// (13000 for CUDA 13.0).
func (d *Driver) Version() int { return d.version }

// VersionString is Version as "13.0".
func (d *Driver) VersionString() string {
	return fmt.Sprintf("%d.%d", d.version/1000, d.version%1000/10)
}

// check turns a CUresult into nil or an *Error with the driver's own words.
func (d *Driver) check(op string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	e := &Error{Op: op, Code: int(r), Name: fmt.Sprintf("CUresult %d", int(r)), Message: "unknown error"}
	var s *C.char
	if d.cuGetErrorName != nil && C.hs_errorText(d.cuGetErrorName, r, &s) == 0 && s != nil {
		e.Name = C.GoString(s)
	}
	s = nil
	if d.cuGetErrorString != nil && C.hs_errorText(d.cuGetErrorString, r, &s) == 0 && s != nil {
		e.Message = C.GoString(s)
	}
	return e
}
