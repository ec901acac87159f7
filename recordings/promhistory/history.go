// Package promhistory reads the Prometheus history a site already keeps into a
// heatsink run directory, so that `heatsink report`, `compare` and the Slurm
// job summaries work on readings no heatsink agent recorded. It reads three
// vocabularies through the Prometheus HTTP API's range queries: heatsink's
// own /metrics names (back to the data model they were made from), NVIDIA's
// DCGM exporter (DCGM_FI_DEV_*) and node_exporter (node_hwmon_*,
// node_rapl_*, node_cpu_*, node_memory_*, node_load*). docs/prometheus.md
// lists every mapping.
//
// Counters stay counters (energy in joules, CPU seconds only as the
// percentages heatsink's host source derives from the same /proc/stat
// counters); no rate is invented where Prometheus stored none: RAPL energy
// is not turned into power.
package promhistory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// maxPointsPerSeries is how many steps one range query may span: Prometheus
// refuses a query that would return more than 11,000 points per series.
const maxPointsPerSeries = 10000

// Options select what Export reads.
type Options struct {
	// URL is the Prometheus server, e.g. http://localhost:9090.
	URL string
	// From and To bound the readings (both inclusive, on the Step grid
	// from From).
	From, To time.Time
	// Step is the run's interval; default 1 s.
	Step time.Duration
	// Hosts whose readings to read: matched against heatsink's host label,
	// the DCGM exporter's Hostname, and node_exporter's instance (with any
	// port) or node_uname_info's nodename.
	Hosts []string
	// Job is a Slurm job id: its hosts are those whose series carry it
	// (heatsink's slurm_job label, the DCGM exporter's hpc_job), and, when
	// Phases is empty, its span becomes the load phase with a baseline
	// before it and a cooldown after it.
	Job string
	// Phases are written to run.json and as event points.
	Phases []rundir.Phase
	// Window is the span of one range query; default and most the span of
	// 10,000 steps.
	Window time.Duration
	// Vocabularies to read, of "heatsink", "dcgm" and "node_exporter";
	// default all. Where two give the same field of the same series,
	// heatsink's own reading wins.
	Vocabularies []string
	// RoundTripper for the HTTP client; default http.DefaultTransport.
	RoundTripper http.RoundTripper
}

// Result is what Export wrote.
type Result struct {
	Meta   *rundir.Meta
	Points int
	// Series counts the Prometheus series read, by vocabulary.
	Series map[string]int
}

// selector is one vocabulary's query.
type selector struct {
	name  string
	query func(hosts []string, instances []string) string
}

var nodeMetrics = `node_(hwmon_(temp_celsius|temp_max_celsius|temp_crit_celsius|fan_rpm|power_watt|power_input_watt|chip_names|sensor_label)|rapl_.+_joules_total|cpu_scaling_frequency_(min_|max_)?hertz|cpu_seconds_total|memory_(MemTotal|MemAvailable|SwapTotal|SwapFree)_bytes|load1|load5|load15|procs_running)`

var selectors = []selector{
	{"heatsink", func(hosts, _ []string) string {
		return fmt.Sprintf(`{__name__=~"heatsink_.+",host=~%q}`, alternatives(hosts))
	}},
	{"dcgm", func(hosts, _ []string) string {
		return fmt.Sprintf(`{__name__=~"DCGM_FI_DEV_.+",Hostname=~%q}`, alternatives(hosts))
	}},
	{"node_exporter", func(hosts, instances []string) string {
		re := alternatives(hosts) + `(:[0-9]+)?`
		if len(instances) > 0 {
			re = "(" + re + ")|" + alternatives(instances)
		}
		return fmt.Sprintf(`{__name__=~%q,instance=~%q}`, nodeMetrics, re)
	}},
}

// alternatives is a PromQL regular expression (anchored by Prometheus)
// matching any of the values literally.
func alternatives(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = regexp.QuoteMeta(v)
	}
	return "(" + strings.Join(q, "|") + ")"
}

// Export reads the history of o.Hosts (or of o.Job's hosts) between o.From
// and o.To into the run directory dir, which must not hold a run yet, and
// returns its run.json description (the caller adds command and versions
// and writes it).
func Export(ctx context.Context, o Options, dir string) (*Result, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	if err := rundir.CheckNew(dir); err != nil {
		return nil, fmt.Errorf("prometheus export: %w", err)
	}
	client, err := api.NewClient(api.Config{Address: o.URL, RoundTripper: o.RoundTripper})
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %w", o.URL, err)
	}
	q := v1.NewAPI(client)
	if o.Job != "" {
		if err := o.findJob(ctx, q); err != nil {
			return nil, err
		}
	}
	if len(o.Hosts) == 0 {
		return nil, errors.New("prometheus export: give --host, or --job")
	}
	nodenames, err := unameInstances(ctx, q, o.Hosts, o.To)
	if err != nil {
		return nil, err
	}
	w, err := rundir.Create(dir)
	if err != nil {
		return nil, err
	}
	ex := &exporter{o: o, q: q, w: w, nodenames: nodenames, res: &Result{Series: map[string]int{}},
		mapper: newMapper(fieldsByMeasurement(), hostOf(o.Hosts, nodenames)), cpu: newCPUDeriver()}
	if err := ex.run(ctx); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return ex.res, nil
}

func (o *Options) fill() error {
	if o.URL == "" {
		return errors.New("prometheus export: no server URL")
	}
	if o.Step <= 0 {
		o.Step = time.Second
	}
	if o.From.IsZero() || o.To.IsZero() || !o.From.Before(o.To) {
		return fmt.Errorf("prometheus export: the time range %s .. %s is empty", o.From.Format(time.RFC3339), o.To.Format(time.RFC3339))
	}
	if max := o.Step * maxPointsPerSeries; o.Window <= 0 || o.Window > max {
		o.Window = max
	}
	if o.Window < o.Step {
		o.Window = o.Step
	}
	for _, v := range o.Vocabularies {
		if !slices.ContainsFunc(selectors, func(s selector) bool { return s.name == v }) {
			return fmt.Errorf("prometheus export: unknown vocabulary %q (known: heatsink, dcgm, node_exporter)", v)
		}
	}
	for _, h := range o.Hosts {
		if h == "" || strings.ContainsFunc(h, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("prometheus export: host %q is not a host name", h)
		}
	}
	return nil
}

// fieldsByMeasurement is the data model's fields by measurement.
func fieldsByMeasurement() map[string][]string {
	out := map[string][]string{}
	for name, m := range schema.Measurements() {
		out[name] = m.Fields
	}
	return out
}

// hostOf names the host a series belongs to: heatsink's host label, the
// DCGM exporter's Hostname, node_exporter's nodename for its instance, or
// the instance without its port; a requested host it matches wins.
func hostOf(hosts []string, nodenames map[string]string) func(model.Metric) string {
	return func(m model.Metric) string {
		if h := m["host"]; h != "" {
			return string(h)
		}
		if h := m["Hostname"]; h != "" {
			return string(h)
		}
		inst := string(m["instance"])
		if n, ok := nodenames[inst]; ok {
			return n
		}
		return hostPart(inst)
	}
}

// unameInstances maps node_exporter instances to their nodenames, for the
// hosts asked for: a target scraped by address is found by its name.
func unameInstances(ctx context.Context, q v1.API, hosts []string, at time.Time) (map[string]string, error) {
	v, _, _, err := q.Query(ctx, fmt.Sprintf(`last_over_time(node_uname_info{nodename=~%q}[1d])`, alternatives(hosts)), at)
	if err != nil {
		return nil, fmt.Errorf("prometheus: query node_uname_info: %w", err)
	}
	out := map[string]string{}
	if vec, ok := v.(model.Vector); ok {
		for _, s := range vec {
			out[string(s.Metric["instance"])] = string(s.Metric["nodename"])
		}
	}
	return out, nil
}

// findJob finds the hosts and the span of a Slurm job from the series that
// carry its id, and makes its phases when none were given.
func (o *Options) findJob(ctx context.Context, q v1.API) error {
	re := fmt.Sprintf(`(.*,)?%s(,.*)?`, regexp.QuoteMeta(o.Job))
	queries := []struct{ q, hostLabel string }{
		{fmt.Sprintf(`group by (host) ({__name__=~"heatsink_collector_tick_.+",slurm_job=~%q})`, re), "host"},
		{fmt.Sprintf(`group by (Hostname) ({__name__=~"DCGM_FI_DEV_GPU_TEMP",hpc_job=~%q})`, re), "Hostname"},
	}
	var first, last time.Time
	hosts := map[string]bool{}
	for _, qq := range queries {
		v, _, _, err := q.QueryRange(ctx, qq.q, v1.Range{Start: o.From, End: o.To, Step: o.Step})
		if err != nil {
			return fmt.Errorf("prometheus: find job %s: %w", o.Job, err)
		}
		for _, s := range v.(model.Matrix) {
			if h := s.Metric[model.LabelName(qq.hostLabel)]; h != "" {
				hosts[string(h)] = true
			}
			for _, sp := range s.Values {
				t := sp.Timestamp.Time()
				if first.IsZero() || t.Before(first) {
					first = t
				}
				if t.After(last) {
					last = t
				}
			}
		}
	}
	if first.IsZero() {
		return fmt.Errorf("prometheus export: no series carries Slurm job %s between %s and %s (heatsink's slurm_job label, or the DCGM exporter's hpc_job)",
			o.Job, o.From.Format(time.RFC3339), o.To.Format(time.RFC3339))
	}
	if len(o.Hosts) == 0 {
		for h := range hosts {
			o.Hosts = append(o.Hosts, h)
		}
		slices.Sort(o.Hosts)
	}
	if len(o.Phases) == 0 {
		if first.After(o.From) {
			end := first
			o.Phases = append(o.Phases, rundir.Phase{Name: "baseline", Start: o.From, End: &end})
		}
		end := last
		o.Phases = append(o.Phases, rundir.Phase{Name: "load", Start: first, End: &end})
		if last.Before(o.To) {
			end := o.To
			o.Phases = append(o.Phases, rundir.Phase{Name: "cooldown", Start: last, End: &end})
		}
	}
	return nil
}

type exporter struct {
	o         Options
	q         v1.API
	w         *rundir.Writer
	nodenames map[string]string
	mapper    *mapper
	cpu       *cpuDeriver
	res       *Result
}

func (ex *exporter) run(ctx context.Context) error {
	var instances []string
	for inst := range ex.nodenames {
		instances = append(instances, inst)
	}
	slices.Sort(instances)
	var used []selector
	for _, s := range selectors {
		if len(ex.o.Vocabularies) == 0 || slices.Contains(ex.o.Vocabularies, s.name) {
			used = append(used, s)
		}
	}
	queries := make([]string, len(used))
	for i, s := range used {
		queries[i] = s.query(ex.o.Hosts, instances)
	}
	for from := ex.o.From; !from.After(ex.o.To); from = from.Add(ex.o.Window) {
		to := from.Add(ex.o.Window - ex.o.Step)
		if to.After(ex.o.To) {
			to = ex.o.To
		}
		results := make([]model.Matrix, len(queries))
		errs := make([]error, len(queries))
		var wg sync.WaitGroup
		for i, qs := range queries {
			wg.Go(func() {
				v, _, _, err := ex.q.QueryRange(ctx, qs, v1.Range{Start: from, End: to, Step: ex.o.Step})
				if err != nil {
					errs[i] = fmt.Errorf("prometheus: query %s %s .. %s: %w", used[i].name,
						from.Format(time.RFC3339), to.Format(time.RFC3339), err)
					return
				}
				results[i], _ = v.(model.Matrix)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for i, m := range results {
			ex.res.Series[used[i].name] = max(ex.res.Series[used[i].name], len(m))
		}
		pts := ex.assemble(from, to, results)
		// In batches, so the writer's buffer stays small and is reused
		// rather than grown to a whole window's line protocol.
		for b := range slices.Chunk(pts, 8192) {
			if err := ex.w.Write(b); err != nil {
				return err
			}
		}
		ex.res.Points += len(pts)
	}
	ex.res.Meta = ex.meta()
	ev := phaseEvents(ex.res.Meta.ID, ex.o.Hosts, ex.o.Phases)
	if len(ev) > 0 {
		if err := ex.w.Write(ev); err != nil {
			return err
		}
		ex.res.Points += len(ev)
	}
	return nil
}

// assemble makes one window's series into points, one per measurement, tag
// set and step, sorted by time.
func (ex *exporter) assemble(from, to time.Time, results []model.Matrix) []point.Point {
	step := ex.o.Step.Milliseconds()
	slots := int((to.Sub(from).Milliseconds())/step) + 1
	fromMs := from.UnixMilli()
	for _, m := range results {
		for _, s := range m {
			ex.mapper.learn(s.Metric)
		}
	}
	asm := newAssembler(slots)
	// Two passes: the first finds each point's fields, so that every
	// series' fields for the whole window are one allocation.
	type pending struct {
		s      *assembled
		t      target
		values []model.SamplePair
	}
	var todo []pending
	for _, m := range results {
		for _, s := range m {
			name := string(s.Metric[model.MetricNameLabel])
			var t target
			switch name {
			case hwmonChipNames, hwmonSensorLabel:
				continue
			case cpuSeconds:
				ex.cpu.add(ex.mapper.hostOf(s.Metric), string(s.Metric["cpu"]), string(s.Metric["mode"]), s.Values, fromMs, step, slots)
				continue
			case memSwapTotal, memSwapFree:
				t = target{measurement: "mem", field: swapField[name], scale: 1, kind: kindUint, tags: tags("host", ex.mapper.hostOf(s.Metric))}
			default:
				var ok bool
				if t, ok = ex.mapper.target(s.Metric); !ok {
					continue
				}
			}
			as := asm.of(t.measurement, t.tags)
			as.width++
			if t.reasons {
				as.width += 2
			}
			todo = append(todo, pending{as, t, s.Values})
		}
	}
	for _, as := range asm.order {
		if as.measurement == "mem" {
			as.width += 2 // used_bytes and swap_used_bytes, derived below
		}
		asm.alloc(as)
	}
	for _, p := range todo {
		asm.add(p.s, p.t, p.values, fromMs, step)
	}
	ex.cpu.emit(asm, slots)
	pts := asm.points(fromMs, step)
	finishMem(pts)
	return pts
}

var swapField = map[string]string{memSwapTotal: "swap_total_bytes", memSwapFree: "swap_free_bytes"}

// finishMem derives used_bytes and swap_used_bytes as heatsink's host
// source does (total - available; swap total - swap free) and drops the
// swap inputs, which are not data-model fields.
func finishMem(pts []point.Point) {
	for i := range pts {
		p := &pts[i]
		if p.Measurement != "mem" {
			continue
		}
		total, okT := p.Float("total_bytes")
		avail, okA := p.Float("available_bytes")
		if okT && okA && total >= avail {
			p.AddUint("used_bytes", uint64(total-avail))
		}
		st, okST := p.Float("swap_total_bytes")
		sf, okSF := p.Float("swap_free_bytes")
		p.Fields = slices.DeleteFunc(p.Fields, func(f point.Field) bool {
			return f.Key == "swap_total_bytes" || f.Key == "swap_free_bytes"
		})
		if okST && okSF && st >= sf {
			p.AddUint("swap_used_bytes", uint64(st-sf))
		}
	}
}

// assembler gathers fields into points by series and step.
type assembler struct {
	slots  int
	series map[string]*assembled
	order  []*assembled
	key    []byte
}

type assembled struct {
	measurement string
	tags        []point.Tag
	width       int             // the most fields a point may have
	fields      [][]point.Field // by slot, each with capacity width
}

func newAssembler(slots int) *assembler {
	return &assembler{slots: slots, series: map[string]*assembled{}}
}

// of finds or makes the series of a measurement and sorted tags.
func (a *assembler) of(measurement string, tags []point.Tag) *assembled {
	a.key = point.AppendSeriesKey(a.key[:0], measurement, tags)
	s := a.series[string(a.key)]
	if s == nil {
		s = &assembled{measurement: measurement, tags: tags}
		a.series[string(a.key)] = s
		a.order = append(a.order, s)
	}
	return s
}

// alloc gives every slot of s room for s.width fields, in one slab.
func (a *assembler) alloc(s *assembled) {
	slab := make([]point.Field, a.slots*s.width)
	s.fields = make([][]point.Field, a.slots)
	for i := range s.fields {
		s.fields[i] = slab[i*s.width : i*s.width : (i+1)*s.width]
	}
}

func (a *assembler) add(s *assembled, t target, values []model.SamplePair, fromMs, step int64) {
	for _, sp := range values {
		slot := (int64(sp.Timestamp) - fromMs) / step
		if slot < 0 || slot >= int64(a.slots) {
			continue
		}
		v := float64(sp.Value) * t.scale
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if t.dcgm && float64(sp.Value) >= dcgmBlank {
			continue
		}
		if t.plausibleC && !schema.PlausibleTempC(v) {
			continue
		}
		f, ok := fieldValue(t.field, v, t.kind)
		if !ok {
			continue
		}
		fs := s.fields[slot]
		if slices.ContainsFunc(fs, func(x point.Field) bool { return x.Key == t.field }) {
			continue // one value a field: the first series mapped wins
		}
		fs = append(fs, f)
		if t.reasons {
			thermal, power := schema.DecodeClockEvents(uint64(f.Value.IntV()))
			fs = append(fs, point.Field{Key: "throttle_thermal", Value: lineprotocol.BoolValue(thermal)},
				point.Field{Key: "throttle_power", Value: lineprotocol.BoolValue(power)})
		}
		s.fields[slot] = fs
	}
}

// points returns the window's points in time order: slot by slot, each
// slot's series in the order they were first seen.
func (a *assembler) points(fromMs, step int64) []point.Point {
	n := 0
	for _, s := range a.order {
		for _, fs := range s.fields {
			if len(fs) > 0 {
				n++
			}
		}
	}
	out := make([]point.Point, 0, n)
	for slot := 0; slot < a.slots; slot++ {
		t := time.UnixMilli(fromMs + int64(slot)*step).UTC()
		for _, s := range a.order {
			if fs := s.fields[slot]; len(fs) > 0 {
				out = append(out, point.Point{Measurement: s.measurement, Tags: s.tags, Fields: fs, Time: t})
			}
		}
	}
	return out
}

// fieldValue makes a field of the given kind; ok is false for a value the
// kind cannot hold (a negative or overflowing integer).
func fieldValue(key string, v float64, k kind) (point.Field, bool) {
	switch k {
	case kindInt:
		r := math.Round(v)
		if r < math.MinInt64 || r >= math.MaxInt64 {
			return point.Field{}, false
		}
		return point.Field{Key: key, Value: lineprotocol.IntValue(int64(r))}, true
	case kindUint:
		r := math.Round(v)
		if r < 0 || r >= math.MaxUint64 {
			return point.Field{}, false
		}
		return point.Field{Key: key, Value: lineprotocol.UintValue(uint64(r))}, true
	case kindBool:
		return point.Field{Key: key, Value: lineprotocol.BoolValue(v != 0)}, true
	}
	fv, ok := lineprotocol.FloatValue(v)
	return point.Field{Key: key, Value: fv}, ok
}

func (ex *exporter) meta() *rundir.Meta {
	end := ex.o.To
	host := strings.Join(ex.o.Hosts, ",")
	m := &rundir.Meta{
		ID:        ex.o.From.UTC().Format("20060102T150405Z") + "-" + strings.Join(ex.o.Hosts, "+"),
		Host:      host,
		Start:     ex.o.From,
		End:       &end,
		Status:    "complete",
		IntervalS: ex.o.Step.Seconds(),
		Phases:    ex.o.Phases,
		Sources:   []rundir.SourceInfo{{Name: "prometheus", Devices: []string{ex.o.URL}}},
	}
	if ex.o.Job != "" {
		m.ID = "slurm-" + ex.o.Job + "-" + strings.Join(ex.o.Hosts, "+")
		m.Labels = map[string]string{"slurm_job": ex.o.Job}
	}
	return m
}

// phaseEvents are the phases as event points, so an analysis working from
// the points alone (InfluxDB) finds them as in a recorded run.
func phaseEvents(runID string, hosts []string, phases []rundir.Phase) []point.Point {
	var pts []point.Point
	mk := func(t time.Time, kind, phase string) {
		p := point.New("event", t)
		p.AddTag("run", runID).AddTag("kind", kind).AddTag("phase", phase).AddTag("host", strings.Join(hosts, ","))
		p.AddString("message", phase+" (from the Prometheus export's phases)")
		pts = append(pts, p)
	}
	for _, ph := range phases {
		mk(ph.Start, "phase_start", ph.Name)
		if ph.End != nil {
			mk(*ph.End, "phase_end", ph.Name)
		}
	}
	return pts
}
