// Package stream is BabelStream on the GPU (stream.cu) and on the CPU, as
// the heatsink workload "stream": copy, mul, add, triad and dot over three
// float64 arrays, checked element by element against BabelStream's gold
// values. The Go CPU implementation is both the kernels' test reference and
// the workload's cpu device.
package stream

import (
	"context"
	"fmt"
	"github.com/heatsink-hpc/heatsink/kernels"
	"math"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// BabelStream's start values and scalar.
const (
	streamStartA = 0.1
	streamStartB = 0.2
	streamStartC = 0.0
	streamScalar = 0.4
	// streamDotTolerance is BabelStream's bound on the dot product's
	// relative error.
	streamDotTolerance = 1e-8
)

// streamElementTolerance bounds |x - gold| / |gold| for every element: 100
// ulps, BabelStream's epsilon*100 made relative and applied to each element
// rather than to the mean, so that one wrong element fails the check.
const streamElementTolerance = 100 * 0x1p-52

// Kernels names the kernels in the order one pass runs them.
var Kernels = []string{"copy", "mul", "add", "triad", "dot"}

// streamArrays is the number of arrays each kernel reads or writes: its bytes
// moved are streamArrays * 8 * n, counting reads and writes.
var streamArrays = [5]int{2, 2, 3, 3, 2}

// streamGold returns the value every element of a, b and c holds after
// passes of copy, mul, add and triad from BabelStream's start values,
// computed with the kernels' own operations (triad as one fused
// multiply-add), so a correct result matches it exactly.
func streamGold(passes int) (a, b, c float64) {
	a, b, c = streamStartA, streamStartB, streamStartC
	for i := 0; i < passes; i++ {
		c = a
		b = streamScalar * c
		c = a + b
		a = math.FMA(streamScalar, c, b)
	}
	return a, b, c
}

// streamErrors is what a verification pass measured.
type streamErrors struct {
	sum, max  [3]float64 // sum and maximum of |x - gold| over a, b, c
	nonFinite float64    // elements of a, b or c that are NaN or infinite
	dot       float64    // the last dot product
}

// verifyStream checks arrays of n elements after passes against the gold
// values: no element may be more than streamElementTolerance from its gold
// value, and the dot product must be within streamDotTolerance of
// n*gold_a*gold_b. It returns the largest relative element error and the dot
// product's relative error.
func verifyStream(n int64, passes int, e streamErrors) (maxRel, dotRel float64, err error) {
	ga, gb, gc := streamGold(passes)
	var problems []string
	if e.nonFinite > 0 {
		problems = append(problems, fmt.Sprintf("%.0f elements are NaN or infinite", e.nonFinite))
	}
	for k, gold := range []float64{ga, gb, gc} {
		rel := e.max[k] / math.Max(math.Abs(gold), math.SmallestNonzeroFloat64)
		if math.IsNaN(rel) {
			rel = math.Inf(1)
		}
		maxRel = math.Max(maxRel, rel)
		if rel > streamElementTolerance || math.IsNaN(e.sum[k]) {
			problems = append(problems, fmt.Sprintf("array %c: an element is off by %.3g (mean error %.3g) from the expected %.17g, beyond %.3g",
				"abc"[k], e.max[k], e.sum[k]/float64(n), gold, streamElementTolerance*math.Abs(gold)))
		}
	}
	goldDot := ga * gb * float64(n)
	dotRel = math.Abs((e.dot - goldDot) / goldDot)
	if !(dotRel <= streamDotTolerance) {
		problems = append(problems, fmt.Sprintf("dot product %.17g, expected %.17g (relative error %.3g, beyond %g)",
			e.dot, goldDot, dotRel, streamDotTolerance))
	}
	if len(problems) > 0 {
		return maxRel, dotRel, fmt.Errorf("stream verification failed after %d passes over %d elements: %s",
			passes, n, strings.Join(problems, "; "))
	}
	return maxRel, dotRel, nil
}

// streamDevice runs the kernels on a GPU or the CPU.
type streamDevice interface {
	// init sets every element of a, b and c.
	init(a, b, c float64) error
	// pass runs the five kernels once, in order, and returns each one's time
	// and the dot product.
	pass() (times [5]time.Duration, dot float64, err error)
	// check measures the arrays against gold values.
	check(ga, gb, gc float64) (streamErrors, error)
	close() error
}

// Workload is BabelStream as a heatsink workload: the memory-bound baseline of
// the reference study.
type Workload struct{ workloads.Typed[Params] }

func init() { workloads.Register(Workload{}) }

// Name implements workloads.Workload.
func (Workload) Name() string { return "stream" }

// Summary implements workloads.Workload.
func (Workload) Summary() string {
	return "BabelStream copy, mul, add, triad, dot over FP64 arrays on a GPU or the CPU (memory-bound); bytes/s per kernel"
}

// Params are the workload's parameters.
type Params struct {
	Device    string `param:"device" default:"0" help:"GPU index (see heatsink gpus) or cpu"`
	ArraySize int64  `param:"array_size" default:"33554432" min:"1" max:"10000000000" help:"elements in each of the three FP64 arrays (BabelStream --arraysize)"`
	Passes    int    `param:"passes" default:"100" min:"1" max:"1000000" help:"passes of the five kernels per iteration, verified at its end (BabelStream --numtimes)"`
	Threads   int    `param:"threads" default:"0" min:"0" max:"65536" help:"goroutines for device=cpu (0: one per core)"`
}

// Start implements workloads.Workload: it allocates and checks the arrays
// (on the GPU: the driver, the device, its free memory, the kernels).
func (w Workload) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
	p, err := w.Of(v)
	if err != nil {
		return nil, err
	}
	gpu, err := kernels.ParseDevice(p.Device)
	if err != nil {
		return nil, err
	}
	n := p.ArraySize
	job := &streamJob{n: n, passes: p.Passes}
	if gpu < 0 {
		job.dev = newCPUStream(n, p.Threads)
		return job, nil
	}
	if job.dev, err = newGPUStream(gpu, n); err != nil {
		return nil, err
	}
	return job, nil
}

type streamJob struct {
	n      int64
	passes int
	dev    streamDevice
}

// Iterate runs BabelStream once: initialise, passes of the five kernels,
// verify.
func (j *streamJob) Iterate(ctx context.Context) (workloads.Result, error) {
	if err := workloads.Checkpoint(ctx); err != nil {
		return workloads.Result{}, err
	}
	if err := j.dev.init(streamStartA, streamStartB, streamStartC); err != nil {
		return workloads.Result{}, err
	}
	var total [5]time.Duration
	var dot float64
	for p := 0; p < j.passes; p++ {
		// A pause by the runner's guard waits here, between passes.
		if err := workloads.Checkpoint(ctx); err != nil {
			return workloads.Result{}, err
		}
		times, d, err := j.dev.pass()
		if err != nil {
			return workloads.Result{}, err
		}
		for k := range total {
			total[k] += times[k]
		}
		dot = d
	}
	ga, gb, gc := streamGold(j.passes)
	e, err := j.dev.check(ga, gb, gc)
	if err != nil {
		return workloads.Result{}, err
	}
	e.dot = dot
	maxRel, dotRel, err := verifyStream(j.n, j.passes, e)
	if err != nil {
		return workloads.Result{}, err
	}
	res := workloads.Result{WorkUnit: "bytes", Metrics: map[string]float64{
		"max_rel_err": maxRel,
		"dot_rel_err": dotRel,
		"array_size":  float64(j.n),
		"passes":      float64(j.passes),
	}}
	var allTime time.Duration
	for k, name := range Kernels {
		bytes := float64(streamArrays[k]) * 8 * float64(j.n) * float64(j.passes)
		res.Work += bytes
		allTime += total[k]
		if total[k] > 0 {
			res.Metrics[name+"_bytes_per_s"] = bytes / total[k].Seconds()
		}
	}
	if allTime > 0 {
		res.Metrics["bytes_per_s"] = res.Work / allTime.Seconds()
	}
	return res, nil
}

// Close frees the arrays.
func (j *streamJob) Close() error { return j.dev.close() }

// Devices implements workloads.DeviceLister.
func (Workload) Devices(ctx context.Context) ([]string, error) { return kernels.ListDevices(false) }
