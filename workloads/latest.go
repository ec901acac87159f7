package workloads

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Latest is a collector sink that keeps the most recent value of every series
// its selectors pick, plus the mean of each since the last ResetStats. The
// runner reads it to gate and end phases on temperatures without knowing
// anything of the sensors that produce them.
type Latest struct {
	matchers []matcher

	mu     sync.Mutex
	series map[string]*seriesState
	tick   time.Time     // stamp of the latest collector_tick point
	ticked chan struct{} // closed and replaced on every tick
}

// Reading is the latest value of one series field.
type Reading struct {
	// Series names it: the series key without the host tag, a space, and the field
	// ("hwmon,chip=platform_coretemp_0,class=cpu_package,... temp_c").
	Series      string
	Measurement string
	Field       string
	Tags        []point.Tag
	Value       float64
	Time        time.Time
}

type seriesState struct {
	r      Reading
	sum    float64
	n      int
	lastAt time.Time // time of the last reading counted in sum, to count each once
}

// NewLatest returns a store of the series the selectors pick. Selectors must
// have been validated (RunnerConfig.Validate).
func NewLatest(sels ...Selector) (*Latest, error) {
	ms, err := compileSelectors(sels)
	if err != nil {
		return nil, err
	}
	return &Latest{matchers: ms, series: map[string]*seriesState{}, ticked: make(chan struct{})}, nil
}

// Write implements collectors.Sink: it copies what it keeps.
func (l *Latest) Write(points []point.Point) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range points {
		p := &points[i]
		if p.Measurement == schema.CollectorTick && p.Time.After(l.tick) {
			l.tick = p.Time
			close(l.ticked)
			l.ticked = make(chan struct{})
		}
		for _, m := range l.matchers {
			if m.measurement != p.Measurement || !m.matchTags(p.Tags) {
				continue
			}
			v, ok := p.Float(m.field)
			if !ok {
				continue
			}
			l.update(p, m.field, v)
		}
	}
	return nil
}

func (l *Latest) update(p *point.Point, field string, v float64) {
	key := seriesName(p, field)
	s := l.series[key]
	if s == nil {
		s = &seriesState{r: Reading{Series: key, Measurement: p.Measurement, Field: field, Tags: slices.Clone(p.Tags)}}
		l.series[key] = s
	}
	s.r.Value, s.r.Time = v, p.Time
	if !p.Time.Equal(s.lastAt) {
		s.sum += v
		s.n++
		s.lastAt = p.Time
	}
}

// seriesName is the series key without the host tag (every point of a run
// has the same one) followed by the field.
func seriesName(p *point.Point, field string) string {
	tags := make([]point.Tag, 0, len(p.Tags))
	for _, t := range p.Tags {
		if t.Key != "host" {
			tags = append(tags, t)
		}
	}
	slices.SortFunc(tags, func(a, b point.Tag) int { return strings.Compare(a.Key, b.Key) })
	b := point.AppendSeriesKey(make([]byte, 0, 128), p.Measurement, tags)
	return string(append(append(b, ' '), field...))
}

// waitTick waits until the collector has recorded a tick stamped at or after
// t, for at most timeout or until ctx is done.
func (l *Latest) waitTick(ctx context.Context, t time.Time, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		done, ch := !l.tick.Before(t), l.ticked
		l.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		}
	}
}

// Flush implements collectors.Sink; there is nothing to make durable.
func (l *Latest) Flush() error { return nil }

// Close implements collectors.Sink.
func (l *Latest) Close() error { return nil }

// Readings returns the latest value of every series seen, sorted by name.
func (l *Latest) Readings() []Reading {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Reading, 0, len(l.series))
	for _, s := range l.series {
		out = append(out, s.r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Series < out[j].Series })
	return out
}

// ResetStats starts a new averaging window (the baseline phase).
func (l *Latest) ResetStats() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.series {
		s.sum, s.n = 0, 0
	}
}

// Means returns each series' mean since the last ResetStats; series with no
// reading in that window are absent.
func (l *Latest) Means() map[string]float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]float64{}
	for k, s := range l.series {
		if s.n > 0 {
			out[k] = s.sum / float64(s.n)
		}
	}
	return out
}

func (m *matcher) matchTags(tags []point.Tag) bool {
	for _, tm := range m.tags {
		v := ""
		for _, t := range tags {
			if t.Key == tm.key {
				v = t.Value
				break
			}
		}
		if !tm.re.MatchString(v) {
			return false
		}
	}
	return true
}

// matches reports whether a reading falls under the selector.
func (m *matcher) matches(r *Reading) bool {
	return m.measurement == r.Measurement && m.field == r.Field && m.matchTags(r.Tags)
}
