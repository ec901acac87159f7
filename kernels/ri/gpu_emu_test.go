//go:build riemu

package ri

import "github.com/heatsink-hpc/heatsink/kernels/ri/internal/riemu"

// With -tags riemu the GPU tests run ri.cu compiled for the CPU.
func init() {
	testOpen = func(int) (gpuDevice, error) { return riemu.Open(), nil }
}
