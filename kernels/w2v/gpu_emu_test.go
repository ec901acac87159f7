//go:build w2vemu

package w2v

import "github.com/heatsink-hpc/heatsink/kernels/w2v/internal/w2vemu"

// With -tags w2vemu the GPU tests run w2v.cu compiled for the CPU.
func init() {
	testOpen = func(int) (gpuDevice, error) { return w2vemu.Open(), nil }
	testEmulated = true
}
