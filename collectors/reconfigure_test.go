package collectors

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// closingSink is a memSink that records being closed.
type closingSink struct {
	memSink
	closed atomic.Bool
}

func (s *closingSink) Close() error { s.closed.Store(true); return nil }

// closingSource is a testSource that records being closed, and whether a
// sample was still running then.
type closingSource struct {
	testSource
	inSample      atomic.Bool
	closed        atomic.Bool
	closedMidTick atomic.Bool
}

func (s *closingSource) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	s.inSample.Store(true)
	defer s.inSample.Store(false)
	return s.testSource.Sample(ctx, t, buf)
}

func (s *closingSource) Close() error {
	s.closedMidTick.Store(s.inSample.Load())
	s.closed.Store(true)
	return nil
}

func tickStamps(s *memSink) []time.Time {
	var out []time.Time
	for _, p := range s.points("collector_tick", "", "") {
		out = append(out, p.Time)
	}
	return out
}

// A reload swaps sources and sinks between two ticks: every tick lands in
// exactly one of the old and new sinks, a source kept across the reload is
// neither re-discovered nor skipped, and a source removed while its sample
// is in flight is closed only once that sample has returned.
func TestReconfigureBetweenTicksLosesNoTick(t *testing.T) {
	const ticks = 14
	iv := 200 * time.Millisecond
	kept := &testSource{name: "kept"}
	release := make(chan struct{})
	removed := &closingSource{testSource: testSource{name: "removed"}}
	removed.sample = func(ctx context.Context, n int32) error {
		if n >= 3 {
			<-release // in flight when the reload comes, as a slow SNMP walk would be
		}
		return nil
	}
	added := &testSource{name: "added"}
	oldSink, newSink := &closingSink{}, &closingSink{}

	c := New(Options{Interval: iv, Deadline: 150 * time.Millisecond, Ticks: ticks, Host: "h", Logger: quietLogger()},
		[]Source{kept, removed}, []Sink{oldSink})
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()

	waitFor(t, "four ticks in the old sink", func() bool { return len(tickStamps(&oldSink.memSink)) >= 4 })
	if !removed.inSample.Load() {
		t.Fatal("the source to remove is not in flight: the test would not exercise a retired sample")
	}
	c.Reconfigure([]Source{kept, added}, []Sink{newSink})
	waitFor(t, "a tick in the new sink", func() bool { return len(tickStamps(&newSink.memSink)) >= 1 })
	if removed.closed.Load() {
		t.Fatal("removed source closed while its sample was still in flight")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	before, after := tickStamps(&oldSink.memSink), tickStamps(&newSink.memSink)
	st := c.Stats()
	if len(before)+len(after) != st.Ticks || st.Ticks != ticks {
		t.Fatalf("old sink %d ticks + new sink %d ticks, collector counted %d (want %d)", len(before), len(after), st.Ticks, ticks)
	}
	if !before[len(before)-1].Before(after[0]) {
		t.Errorf("last tick in the old sink %v is not before the first in the new %v", before[len(before)-1], after[0])
	}
	all := append(before, after...)
	for i := 1; i < len(all); i++ {
		gap := all[i].Sub(all[i-1])
		if gap <= 0 || gap%iv != 0 {
			t.Errorf("ticks %d and %d are %v apart", i-1, i, gap)
		}
	}
	if missed := st.MissedTicks; missed == 0 && all[len(all)-1].Sub(all[0]) != time.Duration(ticks-1)*iv {
		t.Errorf("no missed tick, yet the ticks span %v for %d ticks at %v", all[len(all)-1].Sub(all[0]), ticks, iv)
	}

	// The kept source went on through the reload: one discovery, and its
	// sample counter runs on from the old sink into the new one.
	if n := kept.discovers.Load(); n != 1 {
		t.Errorf("kept source discovered %d times, want 1", n)
	}
	var ns []int64
	for _, s := range []*memSink{&oldSink.memSink, &newSink.memSink} {
		for _, p := range s.points("test", "src", "kept") {
			v, _ := p.Float("n")
			ns = append(ns, int64(v))
		}
	}
	for i, n := range ns {
		if n != int64(i+1) {
			t.Fatalf("kept source samples %v: a gap or reset at position %d", ns, i)
		}
	}
	if len(ns) != ticks {
		t.Errorf("kept source delivered %d samples in %d ticks", len(ns), ticks)
	}
	if len(newSink.points("test", "src", "removed")) != 0 {
		t.Error("the removed source's late sample reached the new sink")
	}
	if len(newSink.points("test", "src", "added")) == 0 || len(oldSink.points("test", "src", "added")) != 0 {
		t.Error("the added source did not write to the new sink only")
	}
	if !removed.closed.Load() || removed.closedMidTick.Load() {
		t.Errorf("removed source closed=%v, closed during a sample=%v; want closed after its sample returned",
			removed.closed.Load(), removed.closedMidTick.Load())
	}
	if !oldSink.closed.Load() || oldSink.flushes == 0 {
		t.Errorf("old sink closed=%v flushes=%d; want flushed and closed", oldSink.closed.Load(), oldSink.flushes)
	}
	if newSink.closed.Load() {
		t.Error("the collector closed the sink in force; that is the caller's")
	}
	if got := c.Sinks(); len(got) != 1 || got[0] != Sink(newSink) {
		t.Errorf("Sinks() = %v after the reload", got)
	}
}

func TestTagsAddedToEveryPointAndReplacedBySetTags(t *testing.T) {
	sink := &memSink{}
	src := &testSource{name: "s"}
	c := New(Options{Interval: 100 * time.Millisecond, Host: "node1", Logger: quietLogger(),
		Tags: []point.Tag{{Key: "cluster", Value: "c1"}}}, []Source{src}, []Sink{sink})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	waitFor(t, "two samples", func() bool { return len(sink.points("test", "", "")) >= 2 })
	c.SetTags(point.Tag{Key: "job", Value: "42"})
	own := point.New("event", time.Now())
	own.AddTag("job", "7").AddString("message", "a point with its own job tag keeps it")
	c.Emit(own)
	mark := len(sink.points("test", "", ""))
	waitFor(t, "two more samples", func() bool { return len(sink.points("test", "", "")) >= mark+3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	pts := sink.points("test", "", "")
	if p := pts[0]; p.Tag("cluster") != "c1" || p.Tag("job") != "" || p.Tag("host") != "node1" {
		t.Errorf("first sample tags %v, want host and cluster", p.Tags)
	}
	if p := pts[len(pts)-1]; p.Tag("job") != "42" || p.Tag("cluster") != "" || p.Tag("host") != "node1" {
		t.Errorf("last sample tags %v, want host and job only", p.Tags)
	}
	for _, p := range sink.points("collector_tick", "", "") {
		if p.Tag("cluster") == "" && p.Tag("job") == "" {
			t.Errorf("self-metrics point at %v without the extra tags", p.Time)
		}
	}
	if ev := sink.points("event", "", ""); len(ev) != 1 || ev[0].Tag("job") != "7" {
		t.Errorf("emitted event %v: want its own job tag", ev)
	}
	if got := c.Tags(); len(got) != 1 || got[0].Value != "42" {
		t.Errorf("Tags() = %v", got)
	}
}

// Stats and SourceStatus are read by a health endpoint while Run runs; the
// race detector checks that they may be.
func TestStatusReadableWhileRunning(t *testing.T) {
	src := &testSource{name: "s"}
	c := New(Options{Interval: 50 * time.Millisecond, Ticks: 6, Logger: quietLogger()}, []Source{src}, []Sink{&memSink{}})
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	var sawOK bool
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if !sawOK {
				t.Error("SourceStatus never showed the source OK while running")
			}
			if st := c.SourceStatus(); len(st) != 1 || st[0].LastOK.IsZero() {
				t.Errorf("status after Run: %+v", st)
			}
			if c.LastTick().IsZero() || c.Stats().Ticks != 6 {
				t.Errorf("last tick %v, stats %+v", c.LastTick(), c.Stats())
			}
			return
		default:
		}
		for _, s := range c.SourceStatus() {
			sawOK = sawOK || s.OK
		}
		_ = c.Stats()
		time.Sleep(5 * time.Millisecond)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
