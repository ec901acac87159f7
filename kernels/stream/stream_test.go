package stream

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/kernels"
)

func randomStream(n int64, workers int, rng *rand.Rand) *cpuStream {
	s := newCPUStream(n, workers)
	for i := range s.a {
		s.a[i], s.b[i], s.c[i] = rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
	}
	return s
}

func TestCPUStreamKernelsComputeBabelStreamsOperations(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int64{1, 2, 3, 17, 1000, 100003} {
		for _, workers := range []int{1, 3, 8} {
			s := randomStream(n, workers, rng)
			a, b, c := append([]float64(nil), s.a...), append([]float64(nil), s.b...), append([]float64(nil), s.c...)
			s.copy()
			for i := range c {
				c[i] = a[i]
			}
			s.mul()
			for i := range b {
				b[i] = 0.4 * c[i]
			}
			s.add()
			for i := range c {
				c[i] = a[i] + b[i]
			}
			s.triad()
			for i := range a {
				a[i] = math.FMA(0.4, c[i], b[i])
			}
			var want float64
			for i := range a {
				want += a[i] * b[i]
			}
			got := s.dot()
			for i := range a {
				if s.a[i] != a[i] || s.b[i] != b[i] || s.c[i] != c[i] {
					t.Fatalf("n=%d workers=%d: element %d differs", n, workers, i)
				}
			}
			if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want))*float64(n) {
				t.Errorf("n=%d workers=%d: dot = %v, want %v", n, workers, got, want)
			}
		}
	}
}

func TestStreamGoldIsWhatThePassesProduce(t *testing.T) {
	for _, passes := range []int{1, 2, 10, 100} {
		s := newCPUStream(5, 2)
		s.init(streamStartA, streamStartB, streamStartC)
		for p := 0; p < passes; p++ {
			if _, _, err := s.pass(); err != nil {
				t.Fatal(err)
			}
		}
		ga, gb, gc := streamGold(passes)
		for i := range s.a {
			if s.a[i] != ga || s.b[i] != gb || s.c[i] != gc {
				t.Fatalf("passes=%d: element %d = (%v %v %v), gold (%v %v %v)", passes, i, s.a[i], s.b[i], s.c[i], ga, gb, gc)
			}
		}
	}
}

// runStream initialises s, runs passes and returns the check with the dot.
func runStream(t *testing.T, s *cpuStream, passes int, corrupt func()) streamErrors {
	t.Helper()
	s.init(streamStartA, streamStartB, streamStartC)
	var dot float64
	for p := 0; p < passes; p++ {
		_, d, err := s.pass()
		if err != nil {
			t.Fatal(err)
		}
		dot = d
	}
	if corrupt != nil {
		corrupt()
	}
	e, err := s.check(streamGold(passes))
	if err != nil {
		t.Fatal(err)
	}
	e.dot = dot
	return e
}

func TestVerifyStreamPassesACorrectRunAndCatchesEachKindOfError(t *testing.T) {
	const n, passes = 10001, 7
	s := newCPUStream(n, 4)
	if _, _, err := verifyStream(n, passes, runStream(t, s, passes, nil)); err != nil {
		t.Fatalf("correct run rejected: %v", err)
	}
	for name, tc := range map[string]struct {
		corrupt func(e *streamErrors)
		array   func()
		want    string
	}{
		"one element of b off by one ulp x1000": {array: func() { s.b[5000] *= 1 + 1000*0x1p-52 }, want: "array b"},
		"a NaN in c":                            {array: func() { s.c[n-1] = math.NaN() }, want: "NaN or infinite"},
		"an infinity in a":                      {array: func() { s.a[0] = math.Inf(-1) }, want: "NaN or infinite"},
		"dot off by 1e-6":                       {corrupt: func(e *streamErrors) { e.dot *= 1 + 1e-6 }, want: "dot product"},
		"dot is NaN":                            {corrupt: func(e *streamErrors) { e.dot = math.NaN() }, want: "dot product"},
	} {
		e := runStream(t, s, passes, tc.array)
		if tc.corrupt != nil {
			tc.corrupt(&e)
		}
		_, _, err := verifyStream(n, passes, e)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", name, err, tc.want)
		}
	}
}

func TestStreamParamsRejectBadValues(t *testing.T) {
	v, err := Workload{}.Decode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := (Workload{}).Of(v); p.Device != "0" || p.ArraySize != 1<<25 || p.Passes != 100 {
		t.Errorf("defaults = %+v", p)
	}
	for _, set := range []map[string]string{
		{"array_size": "0"}, {"passes": "0"}, {"array_size": "big"}, {"threads": "-1"}, {"arraysize": "10"},
	} {
		if _, err := (Workload{}).Decode(set); err == nil {
			t.Errorf("%v accepted", set)
		}
	}
	v, _ = Workload{}.Decode(map[string]string{"device": "gpu"})
	if _, err := (Workload{}).Start(context.Background(), v); err == nil || !strings.Contains(err.Error(), "device=") {
		t.Errorf("device=gpu: err = %v", err)
	}
}

func TestStreamWorkloadOnTheCPU(t *testing.T) {
	v, err := Workload{}.Decode(map[string]string{"device": "cpu", "array_size": "100001", "passes": "5"})
	if err != nil {
		t.Fatal(err)
	}
	job, err := Workload{}.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	for it := 0; it < 2; it++ {
		res, err := job.Iterate(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if want := float64(12 * 8 * 100001 * 5); res.Work != want || res.WorkUnit != "bytes" {
			t.Errorf("work = %v %s, want %v bytes", res.Work, res.WorkUnit, want)
		}
		for _, k := range []string{"copy_bytes_per_s", "mul_bytes_per_s", "add_bytes_per_s", "triad_bytes_per_s", "dot_bytes_per_s", "bytes_per_s"} {
			if !(res.Metrics[k] > 0) {
				t.Errorf("metric %s = %v", k, res.Metrics[k])
			}
		}
		if res.Metrics["max_rel_err"] != 0 {
			t.Errorf("max_rel_err = %v, want exactly 0 (same operations as the gold values)", res.Metrics["max_rel_err"])
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := job.Iterate(ctx); err != context.Canceled {
		t.Errorf("cancelled Iterate: err = %v", err)
	}
}

// TestModuleDefinesTheKernelsLookedUp fails in CI, not on a GPU, when a
// kernel of stream.cu is renamed but not here.
func TestModuleDefinesTheKernelsLookedUp(t *testing.T) {
	_, ptx, err := kernels.Image("stream")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range streamFunctions {
		if !bytes.Contains(ptx, []byte(".entry "+k+"(")) {
			t.Errorf("stream.ptx: no kernel %s", k)
		}
	}
}
