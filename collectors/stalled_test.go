package collectors

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// stallingSource has some reads stuck, as hwmon does with a driver stuck
// on its bus: it still answers, without those readings.
type stallingSource struct {
	testSource
	stuck atomic.Int64
}

func (s *stallingSource) Stalled() int { return int(s.stuck.Load()) }

// Sample gives its readings, and an error for the stuck ones.
func (s *stallingSource) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	n := s.samples.Add(1)
	switch n {
	case 2:
		s.stuck.Store(1)
	case 4:
		s.stuck.Store(0)
	}
	p := point.New("test", t)
	p.AddTag("src", s.name).AddInt("n", int64(n))
	if s.stuck.Load() > 0 {
		return append(buf, p), errors.New("hwmon chip temp3: stalled")
	}
	return append(buf, p), nil
}

// A source that reads on goroutines a driver can leave stuck says how many
// are stuck in its collector_source point each tick, so that an operator
// sees which source lost readings and why, and sees it go back to 0.
func TestCollectorSourceReportsStalledReads(t *testing.T) {
	src := &stallingSource{testSource: testSource{name: "hwmon"}}
	steady := &testSource{name: "host"}
	sink := &memSink{}
	c := New(Options{Interval: 50 * time.Millisecond, Ticks: 5, Host: "h", Logger: quietLogger()},
		[]Source{src, steady}, []Sink{sink})
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, p := range sink.points(schema.CollectorSource, schema.TagSource, "hwmon") {
		f, ok := p.Float(schema.FieldStalledReads)
		v := int64(f)
		if !ok {
			t.Fatalf("collector_source of a StallReporter without %s: %v", schema.FieldStalledReads, p)
		}
		got = append(got, v)
	}
	if want := []int64{0, 1, 1, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("stalled_reads per tick %v; want %v", got, want)
	}
	for _, p := range sink.points(schema.CollectorSource, schema.TagSource, "host") {
		if _, ok := p.Field(schema.FieldStalledReads); ok {
			t.Errorf("a source that cannot stall reports %s: %v", schema.FieldStalledReads, p)
		}
	}
}
