package kernels

import (
	"errors"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// ModuleDevice is a GPU through the CUDA driver with one of this package's
// kernel modules loaded and its functions looked up: what the ri, lda and
// w2v engines launch on. Each engine wraps it with the buffer methods of
// its own device interface, so that its CPU emulator can stand in.
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
