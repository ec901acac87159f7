package analysis

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// Run is a recorded run loaded for analysis: its run.json and every numeric
// field of points.lp as a series of times and values.
//
// Storage is compact because a day at 1 Hz with a few hundred series is tens
// of millions of readings: the fields of one point share a single time slice
// (seconds since Start, float64) and each field is one float64 slice of the
// same length, with NaN where a point lacked that field.
type Run struct {
	Dir  string
	Meta *rundir.Meta
	// Start is the instant t = 0 of every series: run.json's start, or the
	// first point's time when run.json has none.
	Start time.Time
	// Series holds every numeric field, ordered by series key and field.
	Series []*Series
	// EventPhases are the phases rebuilt from `event` points, for runs whose
	// run.json lists none (a run read back from InfluxDB, or a crashed runner).
	EventPhases []rundir.Phase
	// Lines is the number of points read; BadLines the number skipped as
	// undecodable, the first few of them described in BadLineErrors.
	Lines         int
	BadLines      int
	BadLineErrors []string
	// Notes describe problems with the input as a whole.
	Notes []string
}

// Series is one field of one device: measurement, tags and field name, with
// its readings. T is shared with the other fields of the same points.
type Series struct {
	Measurement string
	Tags        []point.Tag
	Field       string
	// T is seconds since Run.Start in file order; V the readings, NaN where
	// a point of this device carried no value for Field.
	T, V []float64
	// Backwards counts timestamps earlier than the one before them in the
	// file; FirstBackwardsS is the first such time. A series whose clock
	// went backwards cannot be analysed as a time series.
	Backwards       int
	FirstBackwardsS float64
}

// Tag returns the value of tag key, or "".
func (s *Series) Tag(key string) string {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return ""
}

// Key returns the series' identity in line-protocol form with the field:
// "gpu,gpu=0,uuid=GPU-1 temp_c".
func (s *Series) Key() string {
	var b strings.Builder
	b.WriteString(s.Measurement)
	for _, t := range s.Tags {
		b.WriteByte(',')
		b.WriteString(t.Key)
		b.WriteByte('=')
		b.WriteString(t.Value)
	}
	b.WriteByte(' ')
	b.WriteString(s.Field)
	return b.String()
}

// CheckTimes reports why the series cannot be analysed as a time series, or
// nil: it must have at least one finite reading and its timestamps must not
// go backwards.
func (s *Series) CheckTimes() error {
	if s.Backwards > 0 {
		return fmt.Errorf("timestamps go backwards %d times (first at %.3f s)", s.Backwards, s.FirstBackwardsS)
	}
	for _, v := range s.V {
		if !math.IsNaN(v) {
			return nil
		}
	}
	return errors.New("no finite readings")
}

// Find returns the series of measurement and field whose tags satisfy match
// (nil matches all), in the Run's order.
func (r *Run) Find(measurement, field string, match func(*Series) bool) []*Series {
	var out []*Series
	for _, s := range r.Series {
		if s.Measurement == measurement && s.Field == field && (match == nil || match(s)) {
			out = append(out, s)
		}
	}
	return out
}

// maxBadLineErrors bounds how many undecodable lines are described.
const maxBadLineErrors = 10

// Load reads the run directory dir: run.json, then points.lp streamed one
// point at a time. Undecodable lines are counted and skipped, never fatal;
// string fields (mode, messages) are not series and are left out. A missing
// run.json or points.lp is an error.
func Load(dir string) (*Run, error) {
	meta, err := rundir.ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	l := loader{run: &Run{Dir: dir, Meta: meta, Start: meta.Start}, groups: map[string]*group{}}
	err = rundir.ForEachPoint(dir, l.add, func(e *point.LineError) {
		l.run.BadLines++
		if len(l.run.BadLineErrors) < maxBadLineErrors {
			l.run.BadLineErrors = append(l.run.BadLineErrors, e.Error())
		}
	})
	if errors.Is(err, fs.ErrNotExist) {
		// A runner that died before its first point leaves run.json alone:
		// that is an empty run to report on, not a failure.
		l.run.Notes = append(l.run.Notes, fmt.Sprintf("no %s in %s: the run recorded no points", rundir.PointsFile, dir))
	} else if err != nil {
		return nil, err
	}
	l.finish()
	return l.run, nil
}

// group holds the points of one device (measurement and tag set): their
// shared times and one column per numeric field.
type group struct {
	key         string
	measurement string
	tags        []point.Tag
	times       []float64
	cols        []*column
	colIdx      map[string]int
	// lastKeys caches the field order of the previous point, so the usual
	// case (every point lists the same fields in the same order) needs no
	// map lookup per field.
	lastKeys []string
	lastCols []int
	back     int
	firstBck float64
}

type column struct {
	field string
	v     []float64
}

type loader struct {
	run    *Run
	groups map[string]*group
	order  []*group
	key    []byte
	start  int64 // Run.Start in ns; 0 until known
	haveT0 bool
}

func (l *loader) add(p *point.Point) error {
	l.run.Lines++
	if !l.haveT0 {
		if l.run.Start.IsZero() {
			l.run.Start = p.Time
		}
		l.start = l.run.Start.UnixNano()
		l.haveT0 = true
	}
	t := float64(p.Time.UnixNano()-l.start) / 1e9
	if p.Measurement == "event" {
		l.event(p)
		return nil
	}
	if !slices.IsSortedFunc(p.Tags, func(a, b point.Tag) int { return strings.Compare(a.Key, b.Key) }) {
		slices.SortFunc(p.Tags, func(a, b point.Tag) int { return strings.Compare(a.Key, b.Key) })
	}
	l.key = append(l.key[:0], p.Measurement...)
	for _, tg := range p.Tags {
		l.key = append(l.key, ',')
		l.key = append(l.key, tg.Key...)
		l.key = append(l.key, '=')
		l.key = append(l.key, tg.Value...)
	}
	g, ok := l.groups[string(l.key)]
	if !ok {
		g = &group{key: string(l.key), measurement: p.Measurement, tags: p.Tags, colIdx: map[string]int{}}
		l.groups[g.key] = g
		l.order = append(l.order, g)
	}
	if n := len(g.times); n > 0 && t < g.times[n-1] {
		if g.back == 0 {
			g.firstBck = t
		}
		g.back++
	}
	g.times = append(g.times, t)
	n := len(g.times)
	for i, f := range p.Fields {
		v, ok := point.Float(f.Value)
		if !ok {
			continue // strings are not series
		}
		var ci int
		if i < len(g.lastKeys) && g.lastKeys[i] == f.Key {
			ci = g.lastCols[i]
		} else {
			ci, ok = g.colIdx[f.Key]
			if !ok {
				ci = len(g.cols)
				c := &column{field: f.Key, v: make([]float64, n-1, n)}
				for j := range c.v {
					c.v[j] = math.NaN()
				}
				g.cols = append(g.cols, c)
				g.colIdx[f.Key] = ci
			}
			for len(g.lastKeys) <= i {
				g.lastKeys = append(g.lastKeys, "")
				g.lastCols = append(g.lastCols, 0)
			}
			g.lastKeys[i], g.lastCols[i] = f.Key, ci
		}
		c := g.cols[ci]
		if len(c.v) == n {
			c.v[n-1] = v // the same field twice in one point: the last wins
			continue
		}
		c.v = append(c.v, v)
	}
	for _, c := range g.cols {
		if len(c.v) < n {
			c.v = append(c.v, math.NaN())
		}
	}
	return nil
}

// event rebuilds phase boundaries from `event` points (kind phase_start or
// phase_end, tag phase).
func (l *loader) event(p *point.Point) {
	phase := p.Tag("phase")
	if phase == "" {
		return
	}
	switch p.Tag("kind") {
	case "phase_start":
		l.run.EventPhases = append(l.run.EventPhases, rundir.Phase{Name: phase, Start: p.Time})
	case "phase_end":
		for i := len(l.run.EventPhases) - 1; i >= 0; i-- {
			ph := &l.run.EventPhases[i]
			if ph.Name == phase && ph.End == nil {
				end := p.Time
				ph.End = &end
				break
			}
		}
	}
}

func (l *loader) finish() {
	sort.Slice(l.order, func(i, j int) bool { return l.order[i].key < l.order[j].key })
	for _, g := range l.order {
		sort.Slice(g.cols, func(i, j int) bool { return g.cols[i].field < g.cols[j].field })
		for _, c := range g.cols {
			l.run.Series = append(l.run.Series, &Series{
				Measurement: g.measurement, Tags: g.tags, Field: c.field,
				T: g.times, V: c.v, Backwards: g.back, FirstBackwardsS: g.firstBck,
			})
		}
	}
	l.groups, l.order = nil, nil
}

// Finite returns the samples of t and v whose value is not NaN (nor ±Inf).
// It returns t and v themselves when every value is finite.
func Finite(t, v []float64) (ft, fv []float64) {
	bad := 0
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			bad++
		}
	}
	if bad == 0 {
		return t, v
	}
	ft = make([]float64, 0, len(v)-bad)
	fv = make([]float64, 0, len(v)-bad)
	for i, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			ft = append(ft, t[i])
			fv = append(fv, x)
		}
	}
	return ft, fv
}

// window returns the index range [i, j) of the samples of sorted t with
// from <= t < to.
func window(t []float64, from, to float64) (i, j int) {
	i = sort.SearchFloat64s(t, from)
	j = sort.SearchFloat64s(t, to)
	if j < i {
		j = i
	}
	return i, j
}
