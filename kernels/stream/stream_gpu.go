package stream

import (
	"errors"
	"fmt"
	"github.com/heatsink-hpc/heatsink/kernels"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
)

// streamBlock is the threads per block of every stream kernel.
const streamBlock = 256

// gpuStream runs BabelStream's kernels (stream.cu) on one GPU.
type gpuStream struct {
	ctx              *cuda.Context
	mod              *cuda.Module
	fn               map[string]*cuda.Function
	a, b, c, partial *cuda.Buffer
	events           [6]*cuda.Event
	n                int64
	// grid is the array kernels' grid: one thread per double2 by default,
	// or blocksPerSM blocks per multiprocessor in a grid-stride loop.
	grid, blocksPerSM int
	// redGrid is the grid of the reductions (dot, check): full occupancy.
	redGrid int
}

// streamFunctions are the kernels of stream.cu.
var streamFunctions = []string{"stream_init", "stream_copy", "stream_mul", "stream_add", "stream_triad", "stream_dot", "stream_check"}

// newGPUStream opens GPU gpu and allocates three arrays of n doubles; on
// failure it releases whatever it took.
func newGPUStream(gpu int, n int64) (_ *gpuStream, err error) {
	ctx, err := kernels.OpenGPU(gpu)
	if err != nil {
		return nil, err
	}
	s := &gpuStream{ctx: ctx, n: n, fn: map[string]*cuda.Function{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.close())
		}
	}()
	info := ctx.Device()
	need := 3 * 8 * n
	free, _, err := ctx.MemInfo()
	if err != nil {
		return nil, err
	}
	if need > free {
		return nil, fmt.Errorf("stream array_size=%d needs %.2f GiB on GPU %d (%s), which has %.2f GiB free",
			n, float64(need)/(1<<30), gpu, info.Name, float64(free)/(1<<30))
	}
	if s.mod, err = kernels.LoadModule(ctx, "stream"); err != nil {
		return nil, err
	}
	for _, name := range streamFunctions {
		if s.fn[name], err = s.mod.Function(name); err != nil {
			return nil, err
		}
	}
	s.redGrid = info.SMs * 2048 / streamBlock
	s.setGrid(0)
	for _, p := range []**cuda.Buffer{&s.a, &s.b, &s.c} {
		if *p, err = ctx.Alloc(8 * n); err != nil {
			return nil, err
		}
	}
	if s.partial, err = ctx.Alloc(int64(8 * 7 * s.redGrid)); err != nil {
		return nil, err
	}
	for i := range s.events {
		if s.events[i], err = ctx.NewEvent(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// setGrid sizes the array kernels' grid: blocksPerSM per multiprocessor in a
// grid-stride loop, or with 0, one thread per double2.
func (s *gpuStream) setGrid(blocksPerSM int) {
	s.blocksPerSM = blocksPerSM
	if blocksPerSM > 0 {
		s.grid = blocksPerSM * s.ctx.Device().SMs
	} else {
		s.grid = int((s.n/2 + streamBlock - 1) / streamBlock)
	}
	s.grid = max(s.grid, 1)
}

func (s *gpuStream) launch(name string, grid int, args ...any) error {
	return s.fn[name].Launch(cuda.Dim1(grid), cuda.Dim1(streamBlock), 0, args...)
}

func (s *gpuStream) init(va, vb, vc float64) error {
	return s.launch("stream_init", s.grid, s.a, s.b, s.c, s.n, va, vb, vc)
}

// kernel launches Kernels[k] (dot into the partial sums).
func (s *gpuStream) kernel(k int) error {
	switch Kernels[k] {
	case "copy":
		return s.launch("stream_copy", s.grid, s.a, s.c, s.n)
	case "mul":
		return s.launch("stream_mul", s.grid, s.b, s.c, float64(streamScalar), s.n)
	case "add":
		return s.launch("stream_add", s.grid, s.a, s.b, s.c, s.n)
	case "triad":
		return s.launch("stream_triad", s.grid, s.a, s.b, s.c, float64(streamScalar), s.n)
	default:
		return s.launch("stream_dot", s.redGrid, s.a, s.b, s.partial, s.n)
	}
}

// dotResult adds the dot kernel's partial sums.
func (s *gpuStream) dotResult() (float64, error) {
	partial := make([]float64, s.redGrid)
	if err := cuda.Download(partial, s.partial); err != nil {
		return 0, err
	}
	var sum float64
	for _, p := range partial {
		sum += p
	}
	return sum, nil
}

func (s *gpuStream) pass() (times [5]time.Duration, dot float64, err error) {
	if err := s.events[0].Record(); err != nil {
		return times, 0, err
	}
	for k := range Kernels {
		if err := s.kernel(k); err != nil {
			return times, 0, err
		}
		if err := s.events[k+1].Record(); err != nil {
			return times, 0, err
		}
	}
	if err := s.events[5].Synchronize(); err != nil {
		return times, 0, fmt.Errorf("stream pass: %w", err)
	}
	for k := range times {
		if times[k], err = s.events[k+1].Since(s.events[k]); err != nil {
			return times, 0, err
		}
	}
	dot, err = s.dotResult()
	return times, dot, err
}

func (s *gpuStream) check(ga, gb, gc float64) (streamErrors, error) {
	var e streamErrors
	if err := s.launch("stream_check", s.redGrid, s.a, s.b, s.c, s.n, ga, gb, gc, s.partial); err != nil {
		return e, err
	}
	partial := make([]float64, 7*s.redGrid)
	if err := cuda.Download(partial, s.partial); err != nil {
		return e, fmt.Errorf("stream check: %w", err)
	}
	for b := 0; b < s.redGrid; b++ {
		p := partial[7*b : 7*b+7]
		for k := 0; k < 3; k++ {
			e.sum[k] += p[k]
			// A NaN error must survive: max would drop it.
			if p[3+k] > e.max[k] || p[3+k] != p[3+k] {
				e.max[k] = p[3+k]
			}
		}
		e.nonFinite += p[6]
	}
	return e, nil
}

// close frees everything, on every path, and reports the first failures.
func (s *gpuStream) close() error {
	var errs []error
	for _, e := range s.events {
		errs = append(errs, e.Destroy())
	}
	for _, b := range []*cuda.Buffer{s.a, s.b, s.c, s.partial} {
		errs = append(errs, b.Free())
	}
	errs = append(errs, s.mod.Unload(), s.ctx.Close())
	return errors.Join(errs...)
}
