package analysis

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
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
	// Points is the number of points read; BadLines the number of lines
	// skipped as undecodable, the first few of them described in
	// BadLineErrors.
	Points        int
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
	b := point.AppendSeriesKey(make([]byte, 0, 64), s.Measurement, s.Tags)
	return string(append(append(b, ' '), s.Field...))
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

// parallelBytes is the size of points.lp from which Load decodes it in
// several stretches at once: decoding line protocol is most of the cost of a
// report, and a day of a busy node is hundreds of megabytes.
const parallelBytes = 32 << 20

// Load reads the run directory dir: run.json, then every point of
// points.lp, streamed rather than held. Undecodable lines are counted and
// skipped, never fatal; string fields (mode, messages) are not series and
// are left out. A missing run.json is an error; a missing points.lp is an
// empty run, with a note.
//
// A small points.lp is streamed in one stretch. A large one is cut at line
// boundaries into one stretch per CPU, each decoded in its own goroutine
// and the stretches joined in file order, which gives the same Run in a
// fraction of the time.
func Load(dir string) (*Run, error) { return load(dir, runtime.GOMAXPROCS(0), parallelBytes) }

func load(dir string, workers int, minParallel int64) (*Run, error) {
	meta, err := rundir.ReadMeta(dir)
	if err != nil {
		return nil, notARunDir(dir, err)
	}
	run := &Run{Dir: dir, Meta: meta, Start: meta.Start}
	path := filepath.Join(dir, rundir.PointsFile)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return loadGzip(run, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read run points: %w", err)
	}
	if run.Start.IsZero() {
		if run.Start, err = firstTime(dir); err != nil {
			return nil, err
		}
	}
	var parts []*loader
	if workers > 1 && fi.Size() >= minParallel {
		parts, err = loadStretches(path, fi.Size(), min(workers, 8), run.Start)
	} else {
		parts, err = loadStretches(path, fi.Size(), 1, run.Start)
	}
	if err != nil {
		return nil, err
	}
	join(run, parts)
	return run, nil
}

// loadGzip reads an archived run's points.lp.gz in one stretch: a gzip
// stream cannot be cut at line boundaries without decompressing it first.
func loadGzip(run *Run, dir string) (*Run, error) {
	f, path, err := rundir.OpenPoints(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// A runner that died before its first point leaves run.json alone:
		// that is an empty run to report on, not a failure.
		run.Notes = append(run.Notes, fmt.Sprintf("no %s (nor %s) in %s: the run recorded no points", rundir.PointsFile, rundir.PointsGzFile, dir))
		return run, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if run.Start.IsZero() {
		if run.Start, err = firstTime(dir); err != nil {
			return nil, err
		}
	}
	l := newLoader(run.Start)
	if err := l.read(f, path); err != nil {
		return nil, err
	}
	join(run, []*loader{l})
	return run, nil
}

var errStop = errors.New("stop")

// firstTime returns the time of the first decodable point, the start of a
// run whose run.json has none.
func firstTime(dir string) (time.Time, error) {
	var t time.Time
	err := rundir.ForEachPoint(dir, func(p *point.Point) error {
		t = p.Time
		return errStop
	}, nil)
	if err != nil && !errors.Is(err, errStop) {
		return t, err
	}
	return t, nil
}

// loadStretches decodes points.lp in parts stretches that end at line
// boundaries, concurrently.
func loadStretches(path string, size int64, parts int, start time.Time) ([]*loader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read run points: %w", err)
	}
	defer f.Close()
	bounds := []int64{0}
	for k := 1; k < parts; k++ {
		off, err := lineStart(f, size*int64(k)/int64(parts), size)
		if err != nil {
			return nil, fmt.Errorf("read run points: %w", err)
		}
		if off > bounds[len(bounds)-1] && off < size {
			bounds = append(bounds, off)
		}
	}
	bounds = append(bounds, size)
	ls := make([]*loader, len(bounds)-1)
	errs := make([]error, len(ls))
	var wg sync.WaitGroup
	for i := range ls {
		ls[i] = newLoader(start)
		ls[i].size = bounds[i+1] - bounds[i]
		if i == 0 {
			// The later stretches are appended to the first's series:
			// foreseen for the whole file, they need not be copied again.
			ls[i].size = size
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ls[i].read(io.NewSectionReader(f, bounds[i], bounds[i+1]-bounds[i]), path)
		}()
	}
	wg.Wait()
	return ls, errors.Join(errs...)
}

// lineStart returns the offset of the first line that starts at or after off.
func lineStart(f *os.File, off, size int64) (int64, error) {
	if off <= 0 {
		return 0, nil
	}
	buf := make([]byte, 64<<10)
	for pos := off - 1; pos < size; {
		n, err := f.ReadAt(buf, pos)
		if k := bytes.IndexByte(buf[:n], '\n'); k >= 0 {
			return pos + int64(k) + 1, nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return size, nil
			}
			return 0, err
		}
		pos += int64(n)
	}
	return size, nil
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

// addTime appends a point's time t, counting it if it goes backwards. When
// the group's slices are full they grow to room for want points at once,
// so a day's columns are not copied at every doubling (most of loading
// went to growing them).
func (g *group) addTime(t float64, want func(n int) int) {
	if n := len(g.times); n == cap(g.times) {
		m := want(n)
		g.times = slices.Grow(g.times, m-n)
		for _, c := range g.cols {
			c.v = slices.Grow(c.v, m-len(c.v))
		}
	}
	if n := len(g.times); n > 0 && t < g.times[n-1] {
		if g.back == 0 {
			g.firstBck = t
		}
		g.back++
	}
	g.times = append(g.times, t)
}

// fillNaN gives the columns the latest point lacked a NaN for it.
func (g *group) fillNaN() {
	n := len(g.times)
	for _, c := range g.cols {
		if len(c.v) < n {
			c.v = append(c.v, math.NaN())
		}
	}
}

type column struct {
	field string
	v     []float64
}

// column returns the column of field, creating it filled with NaN for the
// points already held.
func (g *group) column(field string) int {
	if ci, ok := g.colIdx[field]; ok {
		return ci
	}
	ci := len(g.cols)
	c := &column{field: field, v: make([]float64, len(g.times)-1, cap(g.times))}
	for j := range c.v {
		c.v[j] = math.NaN()
	}
	g.cols = append(g.cols, c)
	g.colIdx[field] = ci
	return ci
}

// phaseEvent is a phase boundary read from an `event` point.
type phaseEvent struct {
	start bool
	phase string
	t     time.Time
}

// loader accumulates the points of one stretch of points.lp.
type loader struct {
	start  int64 // t = 0 in Unix ns
	groups map[string]*group
	order  []*group
	key    []byte
	points int
	lines  int // lines read, for numbering the next stretch's lines
	// raw maps the text of a line up to its first unescaped space to the
	// group add filed that line under, for fast; pending is that text of
	// the line fast declined for want of it; fields is fast's scratch.
	raw     map[string]*group
	pending []byte
	fields  []fastField
	slow    bool // decode every line through point.Reader (the tests' reference)
	nfast   int  // lines decoded by fast
	nbad    int
	bad     []*point.LineError
	events  []phaseEvent
	// size is the stretch's length in bytes and seen the bytes of the lines
	// fast has seen, from which want foresees how many points a group
	// will hold.
	size, seen int64
}

// want returns the room for points a group that holds n (and is full)
// should grow to: what the rest of the stretch will bring at the rate so
// far, and at least a quarter more.
func (l *loader) want(n int) int {
	if n < 256 || l.seen <= 0 || l.size <= l.seen {
		return max(2*n, 16)
	}
	est := int(float64(n)*float64(l.size)/float64(l.seen)*1.01) + 16
	return max(est, n+n/4)
}

func newLoader(start time.Time) *loader {
	return &loader{start: start.UnixNano(), groups: map[string]*group{}, raw: map[string]*group{}}
}

func (l *loader) badLine(e *point.LineError) {
	l.nbad++
	if len(l.bad) < maxBadLineErrors {
		l.bad = append(l.bad, e)
	}
}

// read decodes a stretch of points.lp: the usual line by fast, the others
// through point.Reader and add.
func (l *loader) read(r io.Reader, name string) error {
	pr := point.NewReader(r, name)
	// heatsink ends every line it writes: a last line without a newline is
	// a write torn by a crash, as rundir.ForEachPoint says.
	pr.RequireNewline(true)
	if !l.slow {
		pr.Intercept(l.fast)
	}
	for {
		p, lerr, ok := pr.Next()
		if !ok {
			break
		}
		if lerr != nil {
			l.badLine(lerr)
			continue
		}
		if err := l.add(&p); err != nil {
			return err
		}
	}
	l.lines = pr.Line()
	return pr.Err()
}

func cmpTag(a, b point.Tag) int { return strings.Compare(a.Key, b.Key) }

func (l *loader) add(p *point.Point) error {
	l.points++
	t := float64(p.Time.UnixNano()-l.start) / 1e9
	if p.Measurement == schema.Event {
		l.event(p)
		return nil
	}
	if !slices.IsSortedFunc(p.Tags, cmpTag) {
		slices.SortFunc(p.Tags, cmpTag)
	}
	l.key = point.AppendSeriesKey(l.key[:0], p.Measurement, p.Tags)
	g, ok := l.groups[string(l.key)]
	if !ok {
		g = &group{key: string(l.key), measurement: p.Measurement, tags: p.Tags, colIdx: map[string]int{}}
		l.groups[g.key] = g
		l.order = append(l.order, g)
	}
	if l.pending != nil {
		l.raw[string(l.pending)] = g
		l.pending = nil
	}
	g.addTime(t, l.want)
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
			ci = g.column(f.Key)
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
	g.fillNaN()
	return nil
}

// event keeps phase boundaries from event points (kind phase_start or
// phase_end, tag phase). An event that cannot be decoded marks no phase, and
// the run has other events or run.json to go by, so it is passed over.
func (l *loader) event(p *point.Point) {
	e, err := schema.DecodeEvent(p)
	if err != nil || e.Phase == "" {
		return
	}
	switch e.Kind {
	case schema.KindPhaseStart:
		l.events = append(l.events, phaseEvent{start: true, phase: e.Phase, t: e.Time})
	case schema.KindPhaseEnd:
		l.events = append(l.events, phaseEvent{start: false, phase: e.Phase, t: e.Time})
	}
}

// absorb appends the points of o, the stretch of the file after l's, to l.
// total holds each group's points over all stretches, so its slices are
// grown once, to their final length.
func (l *loader) absorb(o *loader, total map[string]int) {
	for _, og := range o.order {
		g, ok := l.groups[og.key]
		if !ok {
			l.groups[og.key] = og
			l.order = append(l.order, og)
			continue
		}
		n, m := len(g.times), len(og.times)
		if all := total[og.key]; cap(g.times) < all {
			g.times = slices.Grow(g.times, all-n)
			for _, c := range g.cols {
				c.v = slices.Grow(c.v, all-len(c.v))
			}
		}
		if n > 0 && m > 0 && og.times[0] < g.times[n-1] {
			if g.back == 0 {
				g.firstBck = og.times[0]
			}
			g.back++
		}
		if og.back > 0 {
			if g.back == 0 {
				g.firstBck = og.firstBck
			}
			g.back += og.back
		}
		g.times = append(g.times, og.times...)
		for _, oc := range og.cols {
			ci, ok := g.colIdx[oc.field]
			if !ok {
				ci = len(g.cols)
				c := &column{field: oc.field, v: make([]float64, n, max(n+m, total[og.key]))}
				for j := range c.v {
					c.v[j] = math.NaN()
				}
				g.cols = append(g.cols, c)
				g.colIdx[oc.field] = ci
			}
			g.cols[ci].v = append(g.cols[ci].v, oc.v...)
		}
		for _, c := range g.cols {
			for len(c.v) < n+m {
				c.v = append(c.v, math.NaN())
			}
		}
	}
	l.points += o.points
	l.nbad += o.nbad
	l.events = append(l.events, o.events...)
}

// join puts the stretches together, in file order, into run.
func join(run *Run, parts []*loader) {
	l := parts[0]
	total := map[string]int{}
	for _, p := range parts {
		for _, g := range p.order {
			total[g.key] += len(g.times)
		}
	}
	lineOffset := l.lines
	bad := l.bad
	for _, o := range parts[1:] {
		for _, e := range o.bad {
			e2 := *e
			e2.Line += lineOffset
			bad = append(bad, &e2)
		}
		lineOffset += o.lines
		l.absorb(o, total)
	}
	run.Points, run.BadLines = l.points, l.nbad
	for _, e := range bad[:min(len(bad), maxBadLineErrors)] {
		run.BadLineErrors = append(run.BadLineErrors, e.Error())
	}
	for _, e := range l.events {
		if e.start {
			run.EventPhases = append(run.EventPhases, rundir.Phase{Name: e.phase, Start: e.t})
			continue
		}
		for i := len(run.EventPhases) - 1; i >= 0; i-- {
			if ph := &run.EventPhases[i]; ph.Name == e.phase && ph.End == nil {
				end := e.t
				ph.End = &end
				break
			}
		}
	}
	sort.Slice(l.order, func(i, j int) bool { return l.order[i].key < l.order[j].key })
	for _, g := range l.order {
		sort.Slice(g.cols, func(i, j int) bool { return g.cols[i].field < g.cols[j].field })
		for _, c := range g.cols {
			run.Series = append(run.Series, &Series{
				Measurement: g.measurement, Tags: g.tags, Field: c.field,
				T: g.times, V: c.v, Backwards: g.back, FirstBackwardsS: g.firstBck,
			})
		}
	}
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
