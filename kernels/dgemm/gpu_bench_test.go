package dgemm

import (
	"fmt"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels/internal/gputest"
)

// GPU benchmarks for bench/gpu.sh. Each reports the GPU's own time (events)
// as a rate: TB/s counting bytes read plus bytes written, or TFLOP/s.

func benchmarkDGEMM(b *testing.B, impl string, n int) {
	gputest.NeedGPU(b)
	g, err := newGPUDGEMM(0, n, dgemmSeeds(1), impl)
	if err != nil && impl == "cublas" {
		b.Skipf("skipping: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer g.close()
	name, _ := g.describe()
	b.Logf("n=%d: %s", n, name)
	t := gputest.GPUTime(b, g.ctx, func() error { return g.gemm(1, 1) })
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/t.Seconds()/1e12, "TFLOP/s")
}

func BenchmarkGPUDGEMM(b *testing.B) {
	for _, n := range []int{4096, 8192} {
		for _, impl := range []string{"cublas", "builtin"} {
			b.Run(fmt.Sprintf("%s/n=%d", impl, n), func(b *testing.B) { benchmarkDGEMM(b, impl, n) })
		}
	}
}
