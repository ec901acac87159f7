package stream

import (
	"errors"
	"math"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/kernels/internal/gputest"
)

// These tests need a GPU; without one they skip, saying why.

// gpuSizes are array lengths around the block size (256 threads of two
// elements) and odd lengths that leave a tail element.
func gpuSizes(t *testing.T) []int64 {
	s := []int64{1, 2, 3, 255, 256, 257, 511, 512, 513, 1000003}
	if !testing.Short() {
		s = append(s, 1<<22+1)
	}
	return s
}

func TestGPUStreamKernelsMatchTheCPU(t *testing.T) {
	gputest.NeedGPU(t)
	rng := gputest.FreshRNG(t)
	for _, n := range gpuSizes(t) {
		for _, perSM := range []int{0, 3} {
			g, err := newGPUStream(0, n)
			if err != nil {
				t.Fatal(err)
			}
			g.setGrid(perSM)
			c := randomStream(n, 4, rng)
			if err := errors.Join(cuda.Upload(g.a, c.a), cuda.Upload(g.b, c.b), cuda.Upload(g.c, c.c)); err != nil {
				t.Fatal(err)
			}
			for k, name := range Kernels {
				if err := g.kernel(k); err != nil {
					t.Fatal(err)
				}
				var want float64
				switch name {
				case "copy":
					c.copy()
				case "mul":
					c.mul()
				case "add":
					c.add()
				case "triad":
					c.triad()
				case "dot":
					want = c.dot()
					got, err := g.dotResult()
					if err != nil {
						t.Fatal(err)
					}
					if math.Abs(got-want) > 1e-13*float64(n)*math.Max(1, math.Abs(want)) {
						t.Errorf("n=%d grid=%d: dot = %v, CPU %v", n, perSM, got, want)
					}
					continue
				}
				a, b, cc := make([]float64, n), make([]float64, n), make([]float64, n)
				if err := errors.Join(cuda.Download(a, g.a), cuda.Download(b, g.b), cuda.Download(cc, g.c)); err != nil {
					t.Fatal(err)
				}
				for i := range a {
					if a[i] != c.a[i] || b[i] != c.b[i] || cc[i] != c.c[i] {
						t.Fatalf("n=%d grid=%d: after %s, element %d = (%v %v %v), CPU (%v %v %v)", n, perSM, name, i,
							a[i], b[i], cc[i], c.a[i], c.b[i], c.c[i])
					}
				}
			}
			if err := g.close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestGPUStreamCheckCatchesOneBadElement(t *testing.T) {
	gputest.NeedGPU(t)
	const n, passes = 100003, 4
	g, err := newGPUStream(0, n)
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	run := func(corrupt int) error {
		if err := g.init(streamStartA, streamStartB, streamStartC); err != nil {
			return err
		}
		var dot float64
		for p := 0; p < passes; p++ {
			_, d, err := g.pass()
			if err != nil {
				return err
			}
			dot = d
		}
		if corrupt >= 0 {
			c := make([]float64, n)
			if err := cuda.Download(c, g.c); err != nil {
				return err
			}
			c[corrupt] = math.NaN()
			if err := cuda.Upload(g.c, c); err != nil {
				return err
			}
		}
		e, err := g.check(streamGold(passes))
		if err != nil {
			return err
		}
		e.dot = dot
		_, _, err = verifyStream(n, passes, e)
		return err
	}
	if err := run(-1); err != nil {
		t.Fatalf("correct run rejected: %v", err)
	}
	if err := run(n - 1); err == nil {
		t.Fatal("a NaN in the last element passed verification")
	}
}

func TestGPUStreamWorkload(t *testing.T) {
	gputest.NeedGPU(t)
	res := gputest.RunWorkload(t, Workload{}, map[string]string{"array_size": "10000001", "passes": "20"})
	for _, r := range res {
		t.Logf("stream: triad %.3g B/s, copy %.3g B/s", r.Metrics["triad_bytes_per_s"], r.Metrics["copy_bytes_per_s"])
		if r.Metrics["max_rel_err"] != 0 || !(r.Metrics["triad_bytes_per_s"] > 0) {
			t.Errorf("metrics = %v", r.Metrics)
		}
	}
}
