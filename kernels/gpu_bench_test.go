package kernels

import (
	"fmt"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// GPU benchmarks for bench/gpu.sh. Each reports the GPU's own time (events)
// as a rate: TB/s counting bytes read plus bytes written, or TFLOP/s.

// benchStreamN is 2^27 doubles: 1 GiB per array, far beyond any L2.
const benchStreamN = 1 << 27

// gpuTime runs op b.N times between two events and returns the GPU time.
func gpuTime(b *testing.B, ctx *cuda.Context, op func() error) time.Duration {
	b.Helper()
	start, err := ctx.NewEvent()
	if err != nil {
		b.Fatal(err)
	}
	defer start.Destroy()
	stop, err := ctx.NewEvent()
	if err != nil {
		b.Fatal(err)
	}
	defer stop.Destroy()
	if err := op(); err != nil { // warm-up
		b.Fatal(err)
	}
	if err := ctx.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := start.Record(); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	if err := stop.Record(); err != nil {
		b.Fatal(err)
	}
	if err := stop.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	t, err := stop.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	return t
}

func BenchmarkGPUCopyDtoD(b *testing.B) {
	needGPU(b)
	g, err := newGPUStream(0, benchStreamN)
	if err != nil {
		b.Fatal(err)
	}
	defer g.close()
	bytes := int64(8 * benchStreamN)
	t := gpuTime(b, g.ctx, func() error { return g.c.CopyFrom(g.a, bytes) })
	b.ReportMetric(2*float64(bytes)*float64(b.N)/t.Seconds()/1e12, "TB/s")
}

func BenchmarkGPUStream(b *testing.B) {
	needGPU(b)
	g, err := newGPUStream(0, benchStreamN)
	if err != nil {
		b.Fatal(err)
	}
	defer g.close()
	if err := g.init(streamStartA, streamStartB, streamStartC); err != nil {
		b.Fatal(err)
	}
	for _, perSM := range []int{0, 4, 16} {
		g.setGrid(perSM)
		grid := "full"
		if perSM > 0 {
			grid = fmt.Sprintf("%dperSM", perSM)
		}
		for k, name := range StreamKernels {
			b.Run(name+"/grid="+grid, func(b *testing.B) {
				t := gpuTime(b, g.ctx, func() error { return g.kernel(k) })
				bytes := float64(streamArrays[k]) * 8 * benchStreamN
				b.ReportMetric(bytes*float64(b.N)/t.Seconds()/1e12, "TB/s")
			})
		}
	}
}

func benchmarkDGEMM(b *testing.B, impl string, n int) {
	needGPU(b)
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
	t := gpuTime(b, g.ctx, func() error { return g.gemm(1, 1) })
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/t.Seconds()/1e12, "TFLOP/s")
}

func BenchmarkGPUDGEMM(b *testing.B) {
	for _, n := range []int{4096, 8192} {
		for _, impl := range []string{"cublas", "builtin"} {
			b.Run(fmt.Sprintf("%s/n=%d", impl, n), func(b *testing.B) { benchmarkDGEMM(b, impl, n) })
		}
	}
}
