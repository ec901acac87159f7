package collectors

import (
	"context"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// reportingSink is a sink with a health of its own, reporting every other tick.
type reportingSink struct {
	memSink
	asked int
}

func (r *reportingSink) SelfMetrics(now time.Time, buf []point.Point) []point.Point {
	r.asked++
	if r.asked%2 == 1 {
		return buf
	}
	p := point.New("test_sink", now)
	p.AddInt("asked", int64(r.asked))
	return append(buf, p)
}

// A sink's self-metrics and points emitted from outside the tick loop go to
// every sink with the tick, stamped with it; the outbox can be made, and
// written to, before the collector exists.
func TestSinksReportThroughTheTickAndTheOutboxPrecedesTheCollector(t *testing.T) {
	box := &Outbox{}
	early := point.New("event", time.Unix(1, 0))
	early.AddString("name", "before_the_collector")
	box.Emit(early)
	rep, other := &reportingSink{}, &memSink{}
	src := &testSource{name: "s"}
	c := New(Options{Interval: 20 * time.Millisecond, Host: "h", Ticks: 4, Logger: quietLogger(), Outbox: box},
		[]Source{src}, []Sink{rep, other})
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rep.asked != 4 {
		t.Errorf("the sink was asked %d times in 4 ticks", rep.asked)
	}
	got := other.points("test_sink", "", "")
	if len(got) != 2 {
		t.Fatalf("%d test_sink points in the other sink, want 2", len(got))
	}
	if got[0].Tag("host") != "h" || got[0].Time.UnixNano()%int64(20*time.Millisecond) != 0 {
		t.Errorf("self-metric %s: want the host tag and the tick's stamp", got[0])
	}
	if ev := other.points("event", "", ""); len(ev) != 1 || ev[0].Tag("host") != "h" {
		t.Errorf("the early event: %v", ev)
	}
}
