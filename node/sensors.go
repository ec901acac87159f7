package node

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
)

// SourceSnapshot is what `heatsink sensors` says of one source.
type SourceSnapshot struct {
	Name      string        `json:"source"`
	Available bool          `json:"available"`
	Error     string        `json:"error,omitempty"`
	Devices   []string      `json:"devices,omitempty"`
	LatencyS  float64       `json:"latency_s"`
	Points    []point.Point `json:"-"`
}

// Sensors discovers every source cfg configures and samples it with the
// collector that `collect` uses, until each has given two samples one
// interval apart (or failed to discover its devices), keeping the second:
// a rate (CPU utilisation, RAPL power) needs a reading before it. A source
// gets four deadlines, up to the interval, for each step, and the whole
// snapshot two steps and two intervals (and a second), so one hung source
// holds up nothing else for long.
func Sensors(ctx context.Context, cfg *configs.Config) ([]SourceSnapshot, error) {
	srcs, err := BuildSources(cfg)
	if err != nil {
		return nil, err
	}
	defer CloseSources(srcs)
	return sensorsOf(ctx, min(4*cfg.Deadline, cfg.Interval), cfg.Interval, srcs...), nil
}

// sensorsOf snapshots srcs with a collector of the interval, each step
// under deadline.
func sensorsOf(ctx context.Context, deadline, interval time.Duration, srcs ...collectors.Source) []SourceSnapshot {
	taps := make([]*tap, len(srcs))
	wrapped := make([]collectors.Source, len(srcs))
	for i, s := range srcs {
		taps[i] = &tap{Source: s}
		wrapped[i] = taps[i]
	}
	ctx, cancel := context.WithTimeout(ctx, 2*deadline+2*interval+time.Second)
	defer cancel()
	col := collectors.New(collectors.Options{
		Interval: interval, Deadline: deadline, Logger: slog.New(slog.DiscardHandler),
	}, wrapped, []collectors.Sink{untilDone{taps: taps, done: cancel}})
	// Run's error is a sink's flush; the snapshot's sink has none.
	col.Run(ctx)
	out := make([]SourceSnapshot, len(taps))
	for i, t := range taps {
		out[i] = t.snapshot(deadline)
	}
	return out
}

// tap is a source as the collector samples it, keeping what `sensors`
// reports: the discovery's outcome and the latest sample.
type tap struct {
	collectors.Source
	mu      sync.Mutex
	tried   bool // a Discover returned
	discErr error
	devices []string
	samples int
	points  []point.Point
	err     error
	latency time.Duration
}

func (t *tap) Discover(ctx context.Context) error {
	err := t.Source.Discover(ctx)
	var devices []string
	if d, ok := t.Source.(collectors.Describer); ok && err == nil {
		devices = d.Describe()
	}
	t.mu.Lock()
	t.tried, t.discErr, t.devices = true, err, devices
	t.mu.Unlock()
	return err
}

func (t *tap) Sample(ctx context.Context, ts time.Time, buf []point.Point) ([]point.Point, error) {
	t0 := time.Now()
	pts, err := t.Source.Sample(ctx, ts, buf)
	lat := time.Since(t0)
	// The collector reuses the slice; the snapshot keeps copies.
	kept := make([]point.Point, len(pts))
	for i, p := range pts {
		p.Tags = append([]point.Tag(nil), p.Tags...)
		p.Fields = append([]point.Field(nil), p.Fields...)
		kept[i] = p
	}
	t.mu.Lock()
	// The second sample is the one shown; a third, cut short when the
	// snapshot ends, would hide it.
	if t.samples < 2 {
		t.samples++
		t.points, t.err, t.latency = kept, err, lat
	}
	t.mu.Unlock()
	return pts, err
}

// done reports whether the source has nothing more to show.
func (t *tap) done() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return (t.tried && t.discErr != nil) || t.samples >= 2
}

func (t *tap) snapshot(timeout time.Duration) SourceSnapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := SourceSnapshot{Name: t.Name()}
	switch {
	case !t.tried:
		s.Error = "no answer within " + timeout.String()
	case t.discErr != nil:
		s.Error = absentReason(t.discErr)
	default:
		s.Available, s.Devices, s.Points, s.LatencyS = true, t.devices, t.points, t.latency.Seconds()
		if t.err != nil {
			s.Error = t.err.Error()
		}
	}
	return s
}

// absentReason is the text of a discovery error. A source whose hardware is
// absent wraps errors.ErrUnsupported, for the collector to tell absent from
// broken; its "unsupported operation" suffix says nothing to a reader.
func absentReason(err error) string {
	if errors.Is(err, errors.ErrUnsupported) {
		return strings.TrimSuffix(err.Error(), ": "+errors.ErrUnsupported.Error())
	}
	return err.Error()
}

// untilDone is the snapshot's sink: it ends the collection once every
// source is done.
type untilDone struct {
	taps []*tap
	done context.CancelFunc
}

func (u untilDone) Write([]point.Point) error {
	for _, t := range u.taps {
		if !t.done() {
			return nil
		}
	}
	u.done()
	return nil
}

func (untilDone) Flush() error { return nil }
func (untilDone) Close() error { return nil }
