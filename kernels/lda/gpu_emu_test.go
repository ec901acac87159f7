//go:build ldaemu

package lda

import "github.com/heatsink-hpc/heatsink/kernels/lda/internal/ldaemu"

// With -tags ldaemu the GPU tests run lda.cu compiled for the CPU, with
// small blocks (the kernels take any power of two) to keep it quick.
func init() {
	testOpen = func(int) (gpuDevice, error) { return ldaemu.Open(), nil }
	testBlock = 32
}
