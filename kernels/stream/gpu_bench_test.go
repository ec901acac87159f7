package stream

import (
	"fmt"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels/internal/gputest"
)

// GPU benchmarks for bench/gpu.sh. Each reports the GPU's own time (events)
// as a rate: TB/s counting bytes read plus bytes written, or TFLOP/s.

// benchStreamN is 2^27 doubles: 1 GiB per array, far beyond any L2.
const benchStreamN = 1 << 27

func BenchmarkGPUCopyDtoD(b *testing.B) {
	gputest.NeedGPU(b)
	g, err := newGPUStream(0, benchStreamN)
	if err != nil {
		b.Fatal(err)
	}
	defer g.close()
	bytes := int64(8 * benchStreamN)
	t := gputest.GPUTime(b, g.ctx, func() error { return g.c.CopyFrom(g.a, bytes) })
	b.ReportMetric(2*float64(bytes)*float64(b.N)/t.Seconds()/1e12, "TB/s")
}

func BenchmarkGPUStream(b *testing.B) {
	gputest.NeedGPU(b)
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
		for k, name := range Kernels {
			b.Run(name+"/grid="+grid, func(b *testing.B) {
				t := gputest.GPUTime(b, g.ctx, func() error { return g.kernel(k) })
				bytes := float64(streamArrays[k]) * 8 * benchStreamN
				b.ReportMetric(bytes*float64(b.N)/t.Seconds()/1e12, "TB/s")
			})
		}
	}
}
