//go:build ldaemu

package lda

import (
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/kernels/internal/emu"
	"github.com/heatsink-hpc/heatsink/kernels/lda/internal/ldaemu"
)

// With -tags ldaemu the GPU tests run lda.cu compiled for the CPU, with
// small blocks (the kernels take any power of two) to keep it quick.
func init() {
	testOpen = func(int) (gpuDevice, error) { return emuDevice{ldaemu.Open()}, nil }
	testBlock = 32
}

// emuDevice adapts ldaemu.Device to gpuDevice.
type emuDevice struct{ d *ldaemu.Device }

func (e emuDevice) Info() cuda.DeviceInfo                { return e.d.Info() }
func (e emuDevice) MemFree() (int64, error)              { return e.d.MemFree() }
func (e emuDevice) Alloc(bytes int64) (gpuBuffer, error) { return e.d.Alloc(bytes) }
func (e emuDevice) Upload(dst gpuBuffer, src []byte) error {
	return e.d.Upload(dst.(*ldaemu.Buffer), src)
}
func (e emuDevice) Download(dst []byte, src gpuBuffer) error {
	return e.d.Download(dst, src.(*ldaemu.Buffer))
}
func (e emuDevice) Memset(b gpuBuffer, v byte) error       { return e.d.Memset(b.(*ldaemu.Buffer), v) }
func (e emuDevice) GlobalInt32(name string) (int32, error) { return e.d.GlobalInt32(name) }
func (e emuDevice) SetMaxShared(k string, bytes int) error { return e.d.SetMaxShared(k, bytes) }
func (e emuDevice) Launch(k string, grid, block cuda.Dim3, shared int, args ...any) error {
	for i, a := range args {
		if b, ok := a.(gpuBuffer); ok {
			args[i] = b.(*ldaemu.Buffer)
		}
	}
	return e.d.Launch(k, grid, block, shared, args...)
}
func (e emuDevice) EnablePeer(gpuDevice) error { return nil }
func (e emuDevice) CopyPeer(dst gpuBuffer, dstOff int64, src gpuBuffer, srcOff int64, bytes int64) error {
	return emu.CopyPeer(dst.(*ldaemu.Buffer), dstOff, src.(*ldaemu.Buffer), srcOff, bytes)
}
func (e emuDevice) Start() error                 { return e.d.Start() }
func (e emuDevice) Stop() (time.Duration, error) { return e.d.Stop() }
func (e emuDevice) Close() error                 { return e.d.Close() }
