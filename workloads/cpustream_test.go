package workloads

import (
	"context"
	"strings"
	"testing"
)

func startStream(t testing.TB, set map[string]string) *streamJob {
	t.Helper()
	v, err := CPUStream{}.Decode(set)
	if err != nil {
		t.Fatal(err)
	}
	j, err := CPUStream{}.Start(context.Background(), v)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j.(*streamJob)
}

func TestCPUStreamReportsEveryKernelAndItsWork(t *testing.T) {
	// 8193 elements over 3 goroutines: parts of unequal length, the last ragged.
	s := startStream(t, map[string]string{"size": "65544", "threads": "3", "ntimes": "4"})
	res, err := s.Iterate(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"copy", "scale", "add", "triad"} {
		if v := res.Metrics[k+"_bytes_per_s"]; !(v > 0) {
			t.Errorf("%s rate %v", k, v)
		}
	}
	// Per pass STREAM moves 2+2+3+3 words per element.
	if want := 4.0 * 10 * 8 * 8193; res.Work != want || res.WorkUnit != "bytes" {
		t.Errorf("work %v %s, want %v bytes", res.Work, res.WorkUnit, want)
	}
	// Iterations restart from STREAM's initial values, so they never overflow.
	for range 30 {
		if _, err := s.Iterate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCPUStreamVerificationCatchesAWrongElement(t *testing.T) {
	s := startStream(t, map[string]string{"size": "64KiB", "threads": "2", "ntimes": "2"})
	if _, err := s.Iterate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.verify(); err != nil {
		t.Fatalf("correct arrays fail verification: %v", err)
	}
	s.c[len(s.c)-1] += 1 // the last element of the last part, as a split bug would leave it
	if err := s.verify(); err == nil || !strings.Contains(err.Error(), "array c") {
		t.Errorf("verify after corrupting c: %v", err)
	}
}

func TestCPUStreamStopsWhenCancelled(t *testing.T) {
	s := startStream(t, map[string]string{"size": "64KiB"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Iterate(ctx); err == nil {
		t.Error("a cancelled iteration succeeded")
	}
}

func TestCPUStreamRefusesWhatMemoryCannotHold(t *testing.T) {
	v, err := CPUStream{}.Decode(map[string]string{"size": "1TiB"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := memAvailable("/proc/meminfo"); !ok {
		t.Skip("no MemAvailable in /proc/meminfo")
	}
	_, err = CPUStream{}.Start(context.Background(), v)
	if err == nil || !strings.Contains(err.Error(), "available") {
		t.Errorf("Start with 3 TiB of arrays: %v", err)
	}
}

func TestMemAvailable(t *testing.T) {
	got, ok := memAvailable("testdata/meminfo")
	if !ok || got != 6094848<<10 {
		t.Errorf("memAvailable = %d, %v", got, ok)
	}
	if _, ok := memAvailable("testdata/no-such-file"); ok {
		t.Error("a missing file gave a value")
	}
}

// BenchmarkCPUStreamIteration reports the triad bandwidth of one iteration
// at the default size, as `go test -bench CPUStream` prints it.
func BenchmarkCPUStreamIteration(b *testing.B) {
	s := startStream(b, map[string]string{"ntimes": "2"})
	var triad float64
	for b.Loop() {
		res, err := s.Iterate(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		triad = res.Metrics["triad_bytes_per_s"]
	}
	b.ReportMetric(triad/1e9, "triad_GB/s")
}
