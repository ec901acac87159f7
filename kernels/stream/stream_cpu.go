package stream

import (
	"math"
	"runtime"
	"sync"
	"time"
)

// cpuStream runs BabelStream's kernels in Go over goroutines, each owning a
// contiguous slice of the arrays (as BabelStream's OpenMP version does with
// a static schedule). It is the stream workload's cpu device and the GPU
// kernels' test reference: the same operations in the same order per
// element, so results match to the last bit (the dot product up to the
// order of its sum).
type cpuStream struct {
	a, b, c []float64
	workers int
}

func newCPUStream(n int64, workers int) *cpuStream {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if int64(workers) > n {
		workers = int(n)
	}
	return &cpuStream{a: make([]float64, n), b: make([]float64, n), c: make([]float64, n), workers: workers}
}

// parallel calls f on workers contiguous ranges covering the arrays, and
// gives each worker's index for per-worker results.
func (s *cpuStream) parallel(f func(w, lo, hi int)) {
	n := len(s.a)
	var wg sync.WaitGroup
	for w := 0; w < s.workers; w++ {
		lo, hi := n*w/s.workers, n*(w+1)/s.workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w, lo, hi)
		}()
	}
	wg.Wait()
}

func (s *cpuStream) init(va, vb, vc float64) error {
	s.parallel(func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			s.a[i], s.b[i], s.c[i] = va, vb, vc
		}
	})
	return nil
}

func (s *cpuStream) copy() {
	s.parallel(func(_, lo, hi int) { copy(s.c[lo:hi], s.a[lo:hi]) })
}

func (s *cpuStream) mul() {
	s.parallel(func(_, lo, hi int) {
		b, c := s.b[lo:hi], s.c[lo:hi]
		for i := range b {
			b[i] = streamScalar * c[i]
		}
	})
}

func (s *cpuStream) add() {
	s.parallel(func(_, lo, hi int) {
		a, b, c := s.a[lo:hi], s.b[lo:hi], s.c[lo:hi]
		for i := range c {
			c[i] = a[i] + b[i]
		}
	})
}

func (s *cpuStream) triad() {
	s.parallel(func(_, lo, hi int) {
		a, b, c := s.a[lo:hi], s.b[lo:hi], s.c[lo:hi]
		for i := range a {
			a[i] = math.FMA(streamScalar, c[i], b[i])
		}
	})
}

func (s *cpuStream) dot() float64 {
	partial := make([]float64, s.workers)
	s.parallel(func(w, lo, hi int) {
		a, b := s.a[lo:hi], s.b[lo:hi]
		var sum float64
		for i := range a {
			sum = math.FMA(a[i], b[i], sum)
		}
		partial[w] = sum
	})
	var sum float64
	for _, p := range partial {
		sum += p
	}
	return sum
}

func (s *cpuStream) pass() (times [5]time.Duration, dot float64, err error) {
	t := time.Now()
	lap := func(k int) {
		now := time.Now()
		times[k] = now.Sub(t)
		t = now
	}
	s.copy()
	lap(0)
	s.mul()
	lap(1)
	s.add()
	lap(2)
	s.triad()
	lap(3)
	dot = s.dot()
	lap(4)
	return times, dot, nil
}

func (s *cpuStream) check(ga, gb, gc float64) (streamErrors, error) {
	parts := make([]streamErrors, s.workers)
	s.parallel(func(w, lo, hi int) {
		var e streamErrors
		for i := lo; i < hi; i++ {
			for k, d := range [3]float64{s.a[i] - ga, s.b[i] - gb, s.c[i] - gc} {
				d = math.Abs(d)
				e.sum[k] += d
				e.max[k] = math.Max(e.max[k], d)
			}
			if !finite(s.a[i]) || !finite(s.b[i]) || !finite(s.c[i]) {
				e.nonFinite++
			}
		}
		parts[w] = e
	})
	var e streamErrors
	for _, p := range parts {
		for k := range e.sum {
			e.sum[k] += p.sum[k]
			e.max[k] = math.Max(e.max[k], p.max[k])
		}
		e.nonFinite += p.nonFinite
	}
	return e, nil
}

func (s *cpuStream) close() error {
	s.a, s.b, s.c = nil, nil, nil
	return nil
}

func finite(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }
