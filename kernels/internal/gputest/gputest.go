// Package gputest holds what the GPU tests of the kernel packages share:
// skipping without a GPU, a replayable random seed, timing by GPU events and
// running a workload end to end. Only _test.go files import it.
package gputest

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/cuda"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// FreshRNG returns a generator with a new seed each run (or
// HEATSINK_TEST_SEED), logged so a failure can be replayed.
func FreshRNG(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("HEATSINK_TEST_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (set HEATSINK_TEST_SEED to replay)", seed)
	return rand.New(rand.NewPCG(seed, 0x6b65726e))
}

// NeedGPU skips the test, saying why, when no CUDA driver loads.
func NeedGPU(t testing.TB) {
	t.Helper()
	if _, err := cuda.Load(); err != nil {
		t.Skipf("skipping GPU test: %v", err)
	}
}

// GPUTime runs op b.N times between two events and returns the GPU time.
func GPUTime(b *testing.B, ctx *cuda.Context, op func() error) time.Duration {
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

// RunWorkload starts w with set, runs two iterations and closes it, and
// checks that the GPU's free memory returns to where it was.
func RunWorkload(t *testing.T, w workloads.Workload, set map[string]string) []workloads.Result {
	t.Helper()
	v, err := w.Decode(set)
	if err != nil {
		t.Fatal(err)
	}
	drv, _ := cuda.Load()
	watch, err := drv.Open(0) // holds the primary context across the job's
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	before, _, err := watch.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	job, err := w.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	var out []workloads.Result
	for i := 0; i < 2; i++ {
		res, err := job.Iterate(context.Background())
		if err != nil {
			job.Close()
			t.Fatal(err)
		}
		out = append(out, res)
	}
	if err := job.Close(); err != nil {
		t.Fatal(err)
	}
	after, _, err := watch.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	if leak := before - after; leak > 64<<20 {
		t.Errorf("%s %v: %d MiB of GPU memory not returned after Close", w.Name(), set, leak>>20)
	}
	return out
}
