package hold_test

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// While the guard also holds the job, the hold's on-times are no run:
// run.json's duty is the time the job really ran over the wall time. The
// guard holds a dgemm-like job (20 ms kernels, fixed duty 0.5) for the
// middle second of three, so it runs about a third of the time. Before
// the fix the hold counted its on-times as run and recorded 0.5.
func TestDutyCountsTheGuardsPauseAsHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job for seconds")
	}
	gpu := newFakeGPU(20*time.Millisecond, 3)
	defer close(gpu.queue)
	eff, sum := runAtDuty(t, queueWorkload{gpu: gpu, depth: 3}, gpu.busyTime, 0.5, false, func(r *workloads.Runner) {
		time.Sleep(time.Second)
		if err := r.Pause(); err != nil {
			t.Error(err)
		}
		time.Sleep(time.Second)
		if err := r.Resume(); err != nil {
			t.Error(err)
		}
		time.Sleep(time.Second)
	})
	recorded := sum.Duty
	t.Logf("duty 0.5, guard holding 1 s of 3: effective %.3f, run.json's %.3f", eff, recorded)
	if eff > 0.42 {
		t.Errorf("effective duty %.3f: the guard's pause did not hold the job", eff)
	}
	if math.Abs(recorded-eff) > 0.03 {
		t.Errorf("run.json's duty %.3f, but the job ran %.3f of the time", recorded, eff)
	}
}

// busyUnion is the time at least one of several workers was working.
type busyUnion struct {
	mu     sync.Mutex
	active int
	since  time.Time
	busy   time.Duration
}

func (b *busyUnion) enter() {
	b.mu.Lock()
	if b.active == 0 {
		b.since = time.Now()
	}
	b.active++
	b.mu.Unlock()
}

func (b *busyUnion) leave() {
	b.mu.Lock()
	b.active--
	if b.active == 0 {
		b.busy += time.Since(b.since)
	}
	b.mu.Unlock()
}

func (b *busyUnion) busyTime() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.active > 0 {
		return b.busy + time.Since(b.since)
	}
	return b.busy
}

// workersWorkload is w2v's CPU trainer's shape: one goroutine per worker,
// each calling Checkpoint between its chunks of work, here of different
// lengths so that one worker reaches the Checkpoint while another is
// still in a chunk.
type workersWorkload struct {
	workloads.Typed[struct{}]
	union    *busyUnion
	chunks   []time.Duration // one worker per chunk length
	register bool            // call workloads.Worker, as w2v does
}

func (workersWorkload) Name() string    { return "workers" }
func (workersWorkload) Summary() string { return "workers that pause at their own Checkpoints" }
func (w workersWorkload) Start(context.Context, workloads.Values) (workloads.Job, error) {
	return w, nil
}
func (workersWorkload) Close() error { return nil }

func (w workersWorkload) Iterate(ctx context.Context) (workloads.Result, error) {
	var wg sync.WaitGroup
	errs := make([]error, len(w.chunks))
	for i, chunk := range w.chunks {
		wg.Go(func() {
			if w.register {
				defer workloads.Worker(ctx)()
			}
			for range int(time.Second / chunk) {
				if err := workloads.Checkpoint(ctx); err != nil {
					errs[i] = err
					return
				}
				w.union.enter()
				time.Sleep(chunk)
				w.union.leave()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return workloads.Result{}, err
		}
	}
	return workloads.Result{}, nil
}

// With several workers pausing at their own Checkpoints, the job has
// stopped once all of them wait there, not when the first does: a worker
// of 5 ms chunks parks within 5 ms while one of 40 ms chunks runs on. The
// duty cycle then counts the run to the last worker's wait, so run.json's
// duty is the time some worker worked. Unregistered (the old gate: parked
// at the first wait) it under-counts the slow worker's run.
func TestDutyWaitsForEveryWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job for seconds")
	}
	for _, c := range []struct {
		name     string
		register bool
	}{{"workers registered", true}, {"workers unregistered: parked at the first wait", false}} {
		t.Run(c.name, func(t *testing.T) {
			u := &busyUnion{}
			w := workersWorkload{union: u, chunks: []time.Duration{5 * time.Millisecond, 40 * time.Millisecond}, register: c.register}
			eff, sum := runAtDuty(t, w, u.busyTime, 0.3, false, nil)
			recorded := sum.Duty
			t.Logf("duty 0.3: some worker busy %.3f of the time, run.json's %.3f", eff, recorded)
			if !c.register {
				if recorded > eff-0.05 {
					t.Errorf("run.json's %.3f against %.3f busy: the test no longer shows the first-wait parking", recorded, eff)
				}
				return
			}
			if math.Abs(recorded-eff) > 0.03 {
				t.Errorf("run.json's duty %.3f, but some worker was busy %.3f of the time", recorded, eff)
			}
			if math.Abs(eff-0.3) > 0.05 {
				t.Errorf("workers busy %.3f of the time at a duty of 0.3", eff)
			}
		})
	}
}

// A job's GPU work that runs on after its pause is invisible to the duty
// cycle (a command's kernels queued before SIGSTOP; here DGEMM's host loop
// without the drain, three 20 ms kernels queued at the gate). The held
// GPU's utilisation shows it: run.json's gpu_duty is the share the card
// worked, beside the job's duty. With the drain the two agree.
func TestGPUDutyShowsWorkThatRanOnAfterThePause(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job for seconds")
	}
	for _, c := range []struct {
		name     string
		queuedOn bool
	}{{"queued kernels run on", true}, {"drained at the gate", false}} {
		t.Run(c.name, func(t *testing.T) {
			gpu := newFakeGPU(20*time.Millisecond, 3)
			defer close(gpu.queue)
			eff, sum := runAtDuty(t, queueWorkload{gpu: gpu, depth: 3, ignorePaced: c.queuedOn}, gpu.busyTime, 0.15, false, nil, &steadySource{gpu: gpu})
			if sum.GPUDuty == nil {
				t.Fatal("run.json has no gpu_duty though the GPU reported util_pct")
			}
			t.Logf("duty 0.15: GPU busy %.3f, run.json's duty %.3f, gpu_duty %.3f", eff, sum.Duty, *sum.GPUDuty)
			if math.Abs(*sum.GPUDuty-eff) > 0.05 {
				t.Errorf("gpu_duty %.3f, but the GPU was busy %.3f of the time", *sum.GPUDuty, eff)
			}
			if c.queuedOn && *sum.GPUDuty < sum.Duty+0.15 {
				t.Errorf("gpu_duty %.3f against duty %.3f: the work that ran on does not show", *sum.GPUDuty, sum.Duty)
			}
			if !c.queuedOn && math.Abs(*sum.GPUDuty-sum.Duty) > 0.05 {
				t.Errorf("gpu_duty %.3f against duty %.3f with nothing queued at the gate", *sum.GPUDuty, sum.Duty)
			}
		})
	}
}
