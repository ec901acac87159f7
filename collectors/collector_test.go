package collectors

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// memSink keeps every batch it is given.
type memSink struct {
	mu      sync.Mutex
	batches [][]point.Point
	flushes int
}

func (m *memSink) Write(pts []point.Point) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cp := make([]point.Point, len(pts))
	copy(cp, pts)
	m.batches = append(m.batches, cp)
	return nil
}
func (m *memSink) Flush() error { m.mu.Lock(); m.flushes++; m.mu.Unlock(); return nil }
func (m *memSink) Close() error { return nil }

func (m *memSink) points(measurement, tag, value string) []point.Point {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []point.Point
	for _, b := range m.batches {
		for _, p := range b {
			if p.Measurement == measurement && (tag == "" || p.Tag(tag) == value) {
				out = append(out, p)
			}
		}
	}
	return out
}

// testSource's behaviour is set per test.
type testSource struct {
	name      string
	discovers atomic.Int32
	samples   atomic.Int32
	discover  func(n int32) error
	sample    func(ctx context.Context, n int32) error
}

func (s *testSource) Name() string { return s.name }
func (s *testSource) Discover(ctx context.Context) error {
	n := s.discovers.Add(1)
	if s.discover != nil {
		return s.discover(n)
	}
	return nil
}
func (s *testSource) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	n := s.samples.Add(1)
	if s.sample != nil {
		if err := s.sample(ctx, n); err != nil {
			return buf, err
		}
	}
	p := point.New("test", t)
	p.AddTag("src", s.name).AddInt("n", int64(n))
	return append(buf, p), nil
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestSlowHungAndFailingSourcesCostOnlyTheirOwnSamples(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	steady := &testSource{name: "steady"}
	hung := &testSource{name: "hung", sample: func(ctx context.Context, n int32) error {
		<-release // ignores its context, as a stuck sysfs read would
		return nil
	}}
	failing := &testSource{name: "failing", sample: func(ctx context.Context, n int32) error {
		return errors.New("device gone")
	}}
	flaky := &testSource{name: "flaky", discover: func(n int32) error {
		if n < 3 {
			return errors.New("driver not loaded yet")
		}
		return nil
	}}
	sink := &memSink{}
	// Generous interval and deadline: CI machines are loaded, and the property
	// under test (others keep their rate) must not depend on scheduling luck.
	const ticks = 12
	iv := 200 * time.Millisecond
	c := New(Options{Interval: iv, Deadline: 150 * time.Millisecond, Ticks: ticks, Host: "h", Logger: quietLogger(), MaxBackoff: 800 * time.Millisecond},
		[]Source{steady, hung, failing, flaky}, []Sink{sink})
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}

	got := sink.points("test", "src", "steady")
	if len(got) < ticks-1 {
		t.Fatalf("steady source: %d samples in %d ticks beside a hung one", len(got), ticks)
	}
	for i, p := range got {
		if p.Time.UnixNano()%int64(iv) != 0 {
			t.Errorf("sample %d at %v is not on a %v boundary", i, p.Time, iv)
		}
		if i > 0 && p.Time.Sub(got[i-1].Time)%iv != 0 {
			t.Errorf("samples %d and %d are %v apart, not a multiple of %v", i-1, i, p.Time.Sub(got[i-1].Time), iv)
		}
		if p.Tag("host") != "h" {
			t.Errorf("host tag %q", p.Tag("host"))
		}
	}
	if n := len(sink.points("test", "src", "hung")); n != 0 {
		t.Errorf("hung source delivered %d samples", n)
	}
	if n := hung.samples.Load(); n != 1 {
		t.Errorf("hung source was sampled %d times while still busy, want 1", n)
	}
	health := sink.points("collector_source", "source", "hung")
	if len(health) != ticks {
		t.Fatalf("hung source: %d health points, want one per tick", len(health))
	}
	last := health[len(health)-1]
	if v, _ := last.Float("timeouts_total"); v < ticks-2 {
		t.Errorf("hung source timeouts_total = %v, want about %d", v, ticks)
	}

	// The failing source is retried with backoff (200, 400, 800, 800... ms), so
	// it is sampled far fewer times than there were ticks, but more than once.
	if n := failing.samples.Load(); n < 3 || n > ticks/2 {
		t.Errorf("failing source sampled %d times in %d ticks; want backoff", n, ticks)
	}
	if n := failing.discovers.Load(); n != failing.samples.Load() {
		t.Errorf("failing source: %d discovers for %d samples; each failure must re-discover", n, failing.samples.Load())
	}
	if n := len(sink.points("test", "src", "flaky")); n < ticks/2 {
		t.Errorf("flaky source recovered with only %d samples", n)
	}
	if st := c.Stats(); st.Ticks != ticks {
		t.Errorf("stats %+v, want %d ticks", st, ticks)
	}
}

func TestEmittedPointsReachSinksEvenAtShutdown(t *testing.T) {
	sink := &memSink{}
	c := New(Options{Interval: 50 * time.Millisecond, Logger: quietLogger()}, nil, []Sink{sink})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	ev := point.New("event", time.Now())
	ev.AddTag("kind", "phase_start").AddString("message", "baseline")
	c.Emit(ev)
	time.Sleep(150 * time.Millisecond)
	late := point.New("event", time.Now())
	late.AddTag("kind", "phase_end").AddString("message", "baseline")
	c.Emit(late)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(sink.points("event", "kind", "phase_start")); n != 1 {
		t.Errorf("phase_start written %d times", n)
	}
	if n := len(sink.points("event", "kind", "phase_end")); n != 1 {
		t.Errorf("point emitted just before shutdown written %d times", n)
	}
	if sink.flushes == 0 {
		t.Error("sinks not flushed at shutdown")
	}
}

func TestUnsupportedSourceWaitsLongestBackoff(t *testing.T) {
	absent := &testSource{name: "nvml", discover: func(int32) error {
		return errors.Join(errors.ErrUnsupported, errors.New("libnvidia-ml.so.1 not found"))
	}}
	c := New(Options{Interval: 20 * time.Millisecond, Ticks: 20, Logger: quietLogger(), MaxBackoff: 10 * time.Second},
		[]Source{absent}, []Sink{&memSink{}})
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := absent.discovers.Load(); n != 1 {
		t.Errorf("absent library probed %d times in 20 ticks with a 10s backoff, want 1", n)
	}
}

// slowSink stalls once, making the following tick wake late.
type slowSink struct {
	memSink
	stallOn int
	stall   time.Duration
	writes  int
}

func (s *slowSink) Write(pts []point.Point) error {
	s.writes++
	if s.writes == s.stallOn {
		time.Sleep(s.stall)
	}
	return s.memSink.Write(pts)
}

func TestLateTickKeepsItsOwnTimestamp(t *testing.T) {
	iv := 200 * time.Millisecond
	sink := &slowSink{stallOn: 3, stall: iv * 16 / 10}
	c := New(Options{Interval: iv, Ticks: 7, Logger: quietLogger()}, []Source{&testSource{name: "s"}}, []Sink{sink})
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := map[time.Time]bool{}
	for _, p := range sink.points("collector_tick", "", "") {
		if seen[p.Time] {
			t.Errorf("two ticks stamped %v: a sample would be overwritten in InfluxDB", p.Time)
		}
		seen[p.Time] = true
		if p.Time.UnixNano()%int64(iv) != 0 {
			t.Errorf("tick stamped %v, off the %v grid", p.Time, iv)
		}
	}
	if len(seen) != 7 {
		t.Errorf("%d distinct tick stamps, want 7", len(seen))
	}
}
