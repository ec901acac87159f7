package main

// The built-in workloads: each package registers itself (workloads.Register
// in its init), so adding a workload is its package and one line here.
import (
	_ "github.com/heatsink-hpc/heatsink/kernels/dgemm"
	_ "github.com/heatsink-hpc/heatsink/kernels/lda"
	_ "github.com/heatsink-hpc/heatsink/kernels/ri"
	_ "github.com/heatsink-hpc/heatsink/kernels/stream"
	_ "github.com/heatsink-hpc/heatsink/kernels/w2v"
)
