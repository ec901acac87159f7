package kernels_test

import (
	"context"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/kernels/dgemm"
	"github.com/heatsink-hpc/heatsink/kernels/stream"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Without the driver, a GPU workload's error says how to run it on the CPU.
func TestGPUWorkloadWithoutADriverSuggestsTheCPU(t *testing.T) {
	if _, err := cuda.Load(); err == nil {
		t.Skip("this machine has a CUDA driver")
	}
	for _, w := range []workloads.Workload{dgemm.Workload{}, stream.Workload{}} {
		v, err := w.Decode(map[string]string{"device": "0"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.Start(context.Background(), v)
		if err == nil || !strings.Contains(err.Error(), "--set device=cpu") || !strings.Contains(err.Error(), "no CUDA driver") {
			t.Errorf("%s: err %v", w.Name(), err)
		}
	}
}
