// Package dgemm is FP64 matrix multiplication, C = alpha*A*B + beta*C, as
// the heatsink workload "dgemm": on the GPU through cuBLAS or the built-in
// kernel of dgemm.cu, on the CPU through gonum, with the matrices drawn from
// a counter-based generator (Uniform) so that sampled entries of the result
// can be checked without a second multiplication.
package dgemm

import (
	"context"
	"fmt"
	"github.com/heatsink-hpc/heatsink/kernels"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// Uniform is element k of the pseudo-random stream for seed: a double in
// [-1, 1) from SplitMix64, every step exact. dgemm.cu's uniformAt is the same
// function, so the host can compute any entry of a matrix the GPU filled
// without keeping a copy.
func Uniform(seed, k uint64) float64 {
	z := seed + (k+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	z ^= z >> 31
	return float64(z>>11)*0x1p-52 - 1
}

// dgemmSeeds derives the seeds of A, B and C from the workload's seed.
func dgemmSeeds(seed uint64) [3]uint64 {
	return [3]uint64{seed ^ 0xA5A5A5A5A5A5A5A5, seed ^ 0x5A5A5A5A5A5A5A5A, seed ^ 0x0F0F0F0F0F0F0F0F}
}

// dgemmStride is the leading dimension for n rows: a multiple of 8 doubles,
// so every column starts 64-byte aligned (the built-in kernel needs 16).
func dgemmStride(n int) int { return (n + 7) &^ 7 }

// unitRoundoff is u = 2^-53, the relative rounding error of one FP64
// operation.
const unitRoundoff = 0x1p-53

// dgemmExpect returns what C[i,j] of the n x n problem holds after reps of
// C = alpha*A*B + beta*C from the seeded start, with A, B and the start of C
// drawn by Uniform (element (r, c) of each at index r + c*n), and the bound a
// correct result stays within. Each product is a sum of n+1 terms (the n
// a*b and beta*c, which some implementations, gonum among them, accumulate
// into) scaled by alpha; in any summation order, with or without fused
// multiply-adds, its rounding error is at most gamma_(n+2) times the sum of
// the terms' magnitudes, gamma_m = m*u/(1 - m*u). The bound takes that twice
// (the implementation's rounding and this reference's) and carries it
// through the reps, where beta scales the earlier error.
func dgemmExpect(n int, seeds [3]uint64, i, j, reps int, alpha, beta float64) (want, tol float64) {
	var d, s float64
	for k := 0; k < n; k++ {
		a := Uniform(seeds[0], uint64(i+k*n))
		b := Uniform(seeds[1], uint64(k+j*n))
		d = math.FMA(a, b, d)
		s += math.Abs(a * b)
	}
	c := Uniform(seeds[2], uint64(i+j*n))
	m := float64(n + 2)
	gamma := m * unitRoundoff / (1 - m*unitRoundoff)
	s *= 1 + gamma // s itself was rounded
	for r := 0; r < reps; r++ {
		tol = math.Abs(beta)*tol + 2*gamma*(math.Abs(alpha)*s+math.Abs(beta*c))
		c = math.FMA(beta, c, alpha*d)
	}
	return c, tol + math.SmallestNonzeroFloat64
}

// dgemmSample is one checked entry of C.
type dgemmSample struct{ row, col int }

// dgemmSamples picks count entries of an n x n matrix: the four corners
// (where tile-edge mistakes show) and random others.
func dgemmSamples(n, count int, rng *rand.Rand) []dgemmSample {
	out := []dgemmSample{{0, 0}, {n - 1, 0}, {0, n - 1}, {n - 1, n - 1}}
	for len(out) < count {
		out = append(out, dgemmSample{rng.IntN(n), rng.IntN(n)})
	}
	return out[:count]
}

// verifyDGEMM compares the sampled entries got with dgemmExpect and returns
// the largest relative error.
func verifyDGEMM(n int, seeds [3]uint64, reps int, alpha, beta float64, samples []dgemmSample, got []float64) (float64, error) {
	var maxRel float64
	var bad []string
	for k, s := range samples {
		want, tol := dgemmExpect(n, seeds, s.row, s.col, reps, alpha, beta)
		diff := math.Abs(got[k] - want)
		maxRel = math.Max(maxRel, diff/math.Max(math.Abs(want), math.SmallestNonzeroFloat64))
		if !(diff <= tol) {
			if len(bad) < 5 {
				bad = append(bad, fmt.Sprintf("C[%d,%d] = %.17g, expected %.17g within %.3g", s.row, s.col, got[k], want, tol))
			} else if len(bad) == 5 {
				bad = append(bad, "...")
			}
		}
	}
	if len(bad) > 0 {
		return maxRel, fmt.Errorf("dgemm verification failed (n=%d, %d GEMMs): %s", n, reps, strings.Join(bad, "; "))
	}
	return maxRel, nil
}

// dgemmDevice runs C = alpha*A*B + beta*C on a GPU or the CPU.
type dgemmDevice interface {
	// resetC sets C back to its seeded start.
	resetC() error
	// run performs reps GEMMs and returns the time they took.
	run(ctx context.Context, reps int, alpha, beta float64) (time.Duration, error)
	// gather reads the sampled entries of C.
	gather(samples []dgemmSample) ([]float64, error)
	// timeOne estimates one GEMM's time after warming up (cuBLAS's first
	// call, caches), without changing the job's matrices' meaning: C is reset
	// before every iteration anyway.
	timeOne(ctx context.Context) (time.Duration, error)
	// describe says which implementation runs, for logs and metrics.
	describe() (impl string, metrics map[string]float64)
	close() error
}

// Workload is FP64 C = alpha*A*B + beta*C as a heatsink workload: the
// compute-bound, hottest baseline of the reference study.
type Workload struct{}

// Name implements workloads.Workload.
func (Workload) Name() string { return "dgemm" }

// Summary implements workloads.Workload.
func (Workload) Summary() string {
	return "FP64 matrix product C = alpha*A*B + beta*C through cuBLAS, a built-in tensor-core kernel, or gonum on the CPU (compute-bound); FLOP/s"
}

// Params implements workloads.Workload.
func (Workload) Params() []workloads.ParamSpec {
	return []workloads.ParamSpec{
		{Name: "device", Type: workloads.String, Default: "0", Help: "GPU index (see heatsink gpus) or cpu"},
		{Name: "n", Type: workloads.Int, Default: "0",
			Help: "order of the square matrices (0: 8192 on a GPU; on the CPU the order whose product takes about a second, measured at start)",
			Min:  workloads.Bound(0), Max: workloads.Bound(1 << 17)},
		{Name: "impl", Type: workloads.String, Default: "auto", Choices: []string{"auto", "cublas", "builtin"},
			Help: "GPU implementation: cuBLAS when it can be opened (auto), or the built-in kernel"},
		{Name: "alpha", Type: workloads.Float, Default: "1", Help: "scale of the product A*B"},
		{Name: "beta", Type: workloads.Float, Default: "1", Help: "within [-1, 1], so repeated products stay finite",
			Min: workloads.Bound(-1), Max: workloads.Bound(1)},
		{Name: "reps", Type: workloads.Int, Default: "0",
			Help: "GEMMs per iteration (0: as many as take about a second, measured at start)",
			Min:  workloads.Bound(0), Max: workloads.Bound(1e6)},
		{Name: "samples", Type: workloads.Int, Default: "64",
			Help: "entries of C verified after each iteration against a float64 dot product",
			Min:  workloads.Bound(1), Max: workloads.Bound(1 << 16)},
		{Name: "seed", Type: workloads.Int, Default: "1", Help: "seed of the random matrices"},
	}
}

// dgemmTarget is the iteration length reps=0 aims for, and on the CPU the
// length of one product with n=0.
const dgemmTarget = time.Second

// dgemmGPUOrder is n=0 on a GPU: large enough to keep an H100's FP64 units
// busy (53 TFLOP/s in cuBLAS), 1.5 GiB of matrices.
const dgemmGPUOrder = 8192

// Start implements workloads.Workload: it fills the matrices, warms up and
// times a GEMM, and with reps=0 chooses the repetitions from that time.
func (Workload) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
	gpu, err := kernels.ParseDevice(v.String("device"))
	if err != nil {
		return nil, err
	}
	n, impl := int(v.Int("n")), v.String("impl")
	seeds := dgemmSeeds(uint64(v.Int("seed")))
	j := &dgemmJob{
		n: n, seeds: seeds, alpha: v.Float("alpha"), beta: v.Float("beta"),
		reps: int(v.Int("reps")), samples: int(v.Int("samples")),
		rng: rand.New(rand.NewPCG(uint64(v.Int("seed")), 0x68656174)),
	}
	if gpu < 0 {
		if impl != "auto" {
			return nil, fmt.Errorf("parameter impl=%s applies to GPUs; device=cpu always uses gonum", impl)
		}
		if n == 0 {
			if n, err = cpuDGEMMOrder(ctx, dgemmTarget); err != nil {
				return nil, fmt.Errorf("dgemm: sizing the product for this CPU: %w", err)
			}
			j.n = n
		}
		j.dev = newCPUDGEMM(n, seeds)
	} else {
		if n == 0 {
			n, j.n = dgemmGPUOrder, dgemmGPUOrder
		}
		if j.dev, err = newGPUDGEMM(gpu, n, seeds, impl); err != nil {
			return nil, err
		}
	}
	name, _ := j.dev.describe()
	slog.Info("dgemm", "device", v.String("device"), "impl", name, "n", n)
	t, err := j.dev.timeOne(ctx)
	if err != nil {
		return nil, fmt.Errorf("dgemm warm-up: %w", joinClose(err, j.dev.close()))
	}
	if j.reps == 0 {
		j.reps = int(math.Max(1, math.Round(dgemmTarget.Seconds()/math.Max(t.Seconds(), 1e-9))))
	}
	return j, nil
}

func joinClose(err, cerr error) error {
	if cerr != nil {
		return fmt.Errorf("%w (and releasing: %v)", err, cerr)
	}
	return err
}

type dgemmJob struct {
	n           int
	seeds       [3]uint64
	alpha, beta float64
	reps        int
	samples     int
	rng         *rand.Rand
	dev         dgemmDevice
}

// Iterate resets C, runs reps GEMMs and verifies sampled entries.
func (j *dgemmJob) Iterate(ctx context.Context) (workloads.Result, error) {
	if err := j.dev.resetC(); err != nil {
		return workloads.Result{}, err
	}
	elapsed, err := j.dev.run(ctx, j.reps, j.alpha, j.beta)
	if err != nil {
		return workloads.Result{}, err
	}
	samples := dgemmSamples(j.n, min(j.samples, j.n*j.n), j.rng)
	got, err := j.dev.gather(samples)
	if err != nil {
		return workloads.Result{}, err
	}
	maxRel, err := verifyDGEMM(j.n, j.seeds, j.reps, j.alpha, j.beta, samples, got)
	if err != nil {
		return workloads.Result{}, err
	}
	flop := 2 * math.Pow(float64(j.n), 3) * float64(j.reps)
	_, extra := j.dev.describe()
	m := map[string]float64{
		"flop_per_s":   flop / elapsed.Seconds(),
		"gemms":        float64(j.reps),
		"matrix_order": float64(j.n),
		"max_rel_err":  maxRel,
	}
	for k, v := range extra {
		m[k] = v
	}
	return workloads.Result{Work: flop, WorkUnit: "flop", Metrics: m}, nil
}

// Close frees the matrices.
func (j *dgemmJob) Close() error { return j.dev.close() }

// Devices implements workloads.DeviceLister.
func (Workload) Devices(ctx context.Context) ([]string, error) { return kernels.ListDevices(true) }
