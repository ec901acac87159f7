package kernels

import (
	"errors"
	"fmt"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// OpenGPU is cuda.OpenGPU for a workload's device=N: on a machine without
// the NVIDIA driver the error says how to run the same workload on the CPU,
// since that is what a user trying heatsink on a laptop or VM wants next.
func OpenGPU(gpu int) (*cuda.Context, error) {
	ctx, err := cuda.OpenGPU(gpu)
	if errors.Is(err, cuda.ErrNoDriver) {
		return nil, fmt.Errorf("%w (no GPU here? run the workload on the CPU with --set device=cpu)", err)
	}
	return ctx, err
}
