//go:build riemu

package ri

import (
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/kernels/ri/internal/riemu"
)

// With -tags riemu the GPU tests run ri.cu compiled for the CPU.
func init() {
	testOpen = func(int) (gpuDevice, error) { return emuDevice{riemu.Open()}, nil }
}

// emuDevice adapts riemu.Device to gpuDevice.
type emuDevice struct{ d *riemu.Device }

func (e emuDevice) Info() cuda.DeviceInfo                { return e.d.Info() }
func (e emuDevice) MemFree() (int64, error)              { return e.d.MemFree() }
func (e emuDevice) Alloc(bytes int64) (gpuBuffer, error) { return e.d.Alloc(bytes) }
func (e emuDevice) Upload(dst gpuBuffer, src []byte) error {
	return e.d.Upload(dst.(*riemu.Buffer), src)
}
func (e emuDevice) Download(dst []byte, src gpuBuffer) error {
	return e.d.Download(dst, src.(*riemu.Buffer))
}
func (e emuDevice) Memset(b gpuBuffer, v byte) error       { return e.d.Memset(b.(*riemu.Buffer), v) }
func (e emuDevice) GlobalInt32(name string) (int32, error) { return e.d.GlobalInt32(name) }
func (e emuDevice) SetMaxShared(k string, bytes int) error { return e.d.SetMaxShared(k, bytes) }
func (e emuDevice) Launch(k string, grid, block cuda.Dim3, shared int, args ...any) error {
	return e.d.Launch(k, grid, block, shared, args...)
}
func (e emuDevice) Start() error                 { return e.d.Start() }
func (e emuDevice) Stop() (time.Duration, error) { return e.d.Stop() }
func (e emuDevice) Close() error                 { return e.d.Close() }
