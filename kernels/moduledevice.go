package kernels

import (
	"errors"
	"time"
	"unsafe"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// Buffer is device memory: a *cuda.Buffer on a GPU, emulated memory in
// the tests built with an emulator's tag.
type Buffer interface{ Free() error }

// Device is what the ri, lda and w2v engines launch their modules on: a
// GPU through the driver (ModuleDevice), or in tests built with -tags
// ldaemu, riemu or w2vemu, the module's CUDA source compiled for the CPU
// (kernels/internal/emu). One interface for the three, so that the driver's
// side is written once and each emulator embeds one base.
type Device interface {
	Info() cuda.DeviceInfo
	MemFree() (int64, error)
	Alloc(bytes int64) (Buffer, error)
	Upload(dst Buffer, src []byte) error
	Download(dst []byte, src Buffer) error
	Memset(b Buffer, v byte) error
	// GlobalInt32 reads a module constant; SetMaxShared allows a kernel
	// more dynamic shared memory than the default 48 KiB.
	GlobalInt32(name string) (int32, error)
	SetMaxShared(kernel string, bytes int) error
	// Launch queues a kernel; buffers are passed as Buffer.
	Launch(kernel string, grid, block cuda.Dim3, shared int, args ...any) error
	// EnablePeer lets this GPU reach peer's memory directly where the
	// hardware allows (copies work either way).
	EnablePeer(peer Device) error
	// CopyPeer copies bytes from src at byte srcOff to dst at byte dstOff,
	// buffers of this GPU or another; it is ordered with both GPUs' work.
	CopyPeer(dst Buffer, dstOff int64, src Buffer, srcOff int64, bytes int64) error
	// Start marks the start of a timed stage; Stop waits for the work
	// since and returns its device time.
	Start() error
	Stop() (time.Duration, error)
	Close() error
}

// Bytes views a slice of plain numbers as its bytes, for Device.Upload and
// Download, without a copy.
func Bytes[T cuda.Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// ModuleDevice is a GPU through the CUDA driver with one of this package's
// kernel modules loaded and its functions looked up: the Device the ri,
// lda and w2v engines launch on outside the emulator tests.
type ModuleDevice struct {
	ctx         *cuda.Context
	mod         *cuda.Module
	fn          map[string]*cuda.Function
	start, stop *cuda.Event
}

// OpenModuleDevice opens GPU gpu, loads module (see LoadModule) and looks
// up functions, every one of which must exist.
func OpenModuleDevice(gpu int, module string, functions []string) (_ *ModuleDevice, err error) {
	ctx, err := OpenGPU(gpu)
	if err != nil {
		return nil, err
	}
	d := &ModuleDevice{ctx: ctx, fn: map[string]*cuda.Function{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, d.Close())
		}
	}()
	if d.mod, err = LoadModule(ctx, module); err != nil {
		return nil, err
	}
	for _, name := range functions {
		if d.fn[name], err = d.mod.Function(name); err != nil {
			return nil, err
		}
	}
	if d.start, err = ctx.NewEvent(); err != nil {
		return nil, err
	}
	if d.stop, err = ctx.NewEvent(); err != nil {
		return nil, err
	}
	return d, nil
}

// Context is the GPU's context, for allocations and copies.
func (d *ModuleDevice) Context() *cuda.Context { return d.ctx }

// Info describes the GPU.
func (d *ModuleDevice) Info() cuda.DeviceInfo { return d.ctx.Device() }

// MemFree is the GPU's free memory in bytes.
func (d *ModuleDevice) MemFree() (int64, error) {
	free, _, err := d.ctx.MemInfo()
	return free, err
}

// Alloc allocates bytes of device memory. A failed allocation returns a
// nil Buffer, not a nil *cuda.Buffer in one, which the engines would take
// for a buffer to free.
func (d *ModuleDevice) Alloc(bytes int64) (Buffer, error) {
	b, err := d.ctx.Alloc(bytes)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// The buffer methods take Buffer, not *cuda.Buffer, so that the engines
// hold one buffer type whichever Device they run on; a ModuleDevice is
// only ever handed its own buffers.

// Upload copies src to the start of dst.
func (d *ModuleDevice) Upload(dst Buffer, src []byte) error {
	return cuda.Upload(dst.(*cuda.Buffer), src)
}

// Download copies the start of src into dst.
func (d *ModuleDevice) Download(dst []byte, src Buffer) error {
	return cuda.Download(dst, src.(*cuda.Buffer))
}

// Memset sets every byte of b to v.
func (d *ModuleDevice) Memset(b Buffer, v byte) error { return b.(*cuda.Buffer).Memset(v) }

// EnablePeer lets this GPU reach peer's memory directly where the hardware
// allows.
func (d *ModuleDevice) EnablePeer(peer Device) error {
	_, err := d.ctx.EnablePeerAccess(peer.(*ModuleDevice).ctx)
	return err
}

// CopyPeer copies bytes from src at srcOff to dst at dstOff.
func (d *ModuleDevice) CopyPeer(dst Buffer, dstOff int64, src Buffer, srcOff int64, bytes int64) error {
	return cuda.CopyPeer(dst.(*cuda.Buffer), dstOff, src.(*cuda.Buffer), srcOff, bytes)
}

// GlobalInt32 reads a module constant.
func (d *ModuleDevice) GlobalInt32(name string) (int32, error) { return d.mod.GlobalInt32(name) }

// SetMaxShared lets kernel take bytes of dynamic shared memory a block.
func (d *ModuleDevice) SetMaxShared(kernel string, bytes int) error {
	return d.fn[kernel].SetMaxDynamicShared(bytes)
}

// Launch queues kernel.
func (d *ModuleDevice) Launch(kernel string, grid, block cuda.Dim3, shared int, args ...any) error {
	return d.fn[kernel].Launch(grid, block, shared, args...)
}

// Start marks the start of a timed stage.
func (d *ModuleDevice) Start() error { return d.start.Record() }

// Stop waits for the work queued since Start and returns its device time.
func (d *ModuleDevice) Stop() (time.Duration, error) {
	if err := d.stop.Record(); err != nil {
		return 0, err
	}
	if err := d.stop.Synchronize(); err != nil {
		return 0, err
	}
	return d.stop.Since(d.start)
}

// Close releases the events, the module and the context; it is
// idempotent.
func (d *ModuleDevice) Close() error {
	err := errors.Join(d.start.Destroy(), d.stop.Destroy(), d.mod.Unload())
	d.start, d.stop, d.mod = nil, nil, nil
	if d.ctx != nil {
		err = errors.Join(err, d.ctx.Close())
		d.ctx = nil
	}
	return err
}
