package dgemm

import (
	"context"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/workloads"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// cpuDGEMM multiplies on the CPU with gonum's DGEMM (pure Go, parallel over
// goroutines). Matrices are column-major like the GPU's; gonum is row-major,
// so it computes the transposed product C^T = alpha*B^T*A^T + beta*C^T, which
// is the same memory.
type cpuDGEMM struct {
	n       int
	seeds   [3]uint64
	a, b, c []float64
}

func newCPUDGEMM(n int, seeds [3]uint64) *cpuDGEMM {
	d := &cpuDGEMM{n: n, seeds: seeds}
	d.a, d.b, d.c = make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	fillUniform(d.a, n, n, seeds[0])
	fillUniform(d.b, n, n, seeds[1])
	fillUniform(d.c, n, n, seeds[2])
	return d
}

// fillUniform sets the column-major rows x cols matrix m (leading dimension
// rows) to Uniform(seed, i + j*rows), as dgemm_fill does on the GPU.
func fillUniform(m []float64, rows, cols int, seed uint64) {
	workers := min(runtime.GOMAXPROCS(0), max(cols, 1))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := cols * w / workers; j < cols*(w+1)/workers; j++ {
				for i := 0; i < rows; i++ {
					m[i+j*rows] = Uniform(seed, uint64(i+j*rows))
				}
			}
		}()
	}
	wg.Wait()
}

// gemmColMajor computes C = alpha*A*B + beta*C for column-major A (m x k),
// B (k x n), C (m x n) with gonum.
func gemmColMajor(m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	bt := blas64.General{Rows: n, Cols: k, Stride: ldb, Data: b}
	at := blas64.General{Rows: k, Cols: m, Stride: lda, Data: a}
	ct := blas64.General{Rows: n, Cols: m, Stride: ldc, Data: c}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, alpha, bt, at, beta, ct)
}

func (d *cpuDGEMM) resetC() error {
	fillUniform(d.c, d.n, d.n, d.seeds[2])
	return nil
}

func (d *cpuDGEMM) run(ctx context.Context, reps int, alpha, beta float64) (time.Duration, error) {
	var total time.Duration
	for r := 0; r < reps; r++ {
		if err := workloads.Checkpoint(ctx); err != nil {
			return 0, err
		}
		start := time.Now() // a pause is not counted
		gemmColMajor(d.n, d.n, d.n, alpha, d.a, d.n, d.b, d.n, beta, d.c, d.n)
		total += time.Since(start)
	}
	return total, nil
}

// calibrationOrder is the largest order timeOne multiplies at; larger
// problems are estimated from it by the n^3 law, so that starting an n=8192
// job on a small machine does not take minutes.
const calibrationOrder = 384

func (d *cpuDGEMM) timeOne(ctx context.Context) (time.Duration, error) {
	m := min(d.n, calibrationOrder)
	t, err := timeCPUGEMM(ctx, m)
	if err != nil {
		return 0, err
	}
	scale := float64(d.n) / float64(m)
	return time.Duration(float64(t) * scale * scale * scale), nil
}

// timeCPUGEMM times one product of order m after a warm-up one.
func timeCPUGEMM(ctx context.Context, m int) (time.Duration, error) {
	a, b, c := make([]float64, m*m), make([]float64, m*m), make([]float64, m*m)
	fillUniform(a, m, m, 1)
	fillUniform(b, m, m, 2)
	var t time.Duration
	for rep := 0; rep < 2; rep++ { // the first warms the caches
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		start := time.Now()
		gemmColMajor(m, m, m, 1, a, m, b, m, 0, c, m)
		t = time.Since(start)
	}
	return t, nil
}

// cpuDGEMMOrder is the order whose product takes about target on this CPU,
// by the n^3 law from a calibration product: the GPU's 8192 takes about a
// minute on two cores, so a short --load would run for minutes. It is a
// multiple of 64 between 64 and 8192.
func cpuDGEMMOrder(ctx context.Context, target time.Duration) (int, error) {
	t, err := timeCPUGEMM(ctx, calibrationOrder)
	if err != nil {
		return 0, err
	}
	n := float64(calibrationOrder) * math.Cbrt(target.Seconds()/math.Max(t.Seconds(), 1e-9))
	return min(max(int(n)/64*64, 64), dgemmGPUOrder), nil
}

func (d *cpuDGEMM) gather(samples []dgemmSample) ([]float64, error) {
	out := make([]float64, len(samples))
	for i, s := range samples {
		out[i] = d.c[s.row+s.col*d.n]
	}
	return out, nil
}

func (d *cpuDGEMM) describe() (string, map[string]float64) { return "gonum", nil }

func (d *cpuDGEMM) close() error {
	d.a, d.b, d.c = nil, nil, nil
	return nil
}
