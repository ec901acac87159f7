// Package influxhistory reads back what heatsink's InfluxDB sink wrote: a
// run, or a host's readings over a time range, into a run directory (Export)
// and the points of one measurement (QueryMeasurement, for the tuning runs'
// evaluations). It sits beside the other recordings rather than beside the
// sink because it is an importer: data flows from the server into a run
// directory, and only the connection settings are shared with the sink.
package influxhistory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/influxdata/influxdb-client-go/v2/api"
	"github.com/influxdata/influxdb-client-go/v2/api/query"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// ExportOptions select what Export reads back: a run by its ID (its time
// span and hosts come from its event points), or a host's readings between
// From and To.
type ExportOptions struct {
	RunID string
	// Hosts to read; with a run ID, default the hosts of its events.
	Hosts []string
	// From and To bound the readings (To exclusive); with a run ID they
	// default to its first and last event.
	From, To time.Time
	// Window is the span of one query; default 15 minutes. Each window is
	// sorted by time in memory before it is written.
	Window time.Duration
}

// ExportResult is what Export wrote.
type ExportResult struct {
	Meta   *rundir.Meta
	Points int
}

// Export queries InfluxDB with Flux (InfluxDB 2.x, or 1.8 with
// flux-enabled) and writes the points into the run directory dir, which
// must not hold a run yet, with a run.json whose phases, events and
// workload iterations are rebuilt from the event and iteration points. An
// analysis can then work on a run that only ever lived in the database.
func Export(ctx context.Context, c influx.Config, o ExportOptions, dir string) (*ExportResult, error) {
	client, cfg, err := influx.Connect(c)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	if err := rundir.CheckNew(dir); err != nil {
		return nil, fmt.Errorf("influx export: %w", err)
	}
	if o.Window <= 0 {
		o.Window = 15 * time.Minute
	}
	for _, v := range append([]string{o.RunID}, o.Hosts...) {
		if err := fluxSafe(v); err != nil {
			return nil, err
		}
	}
	q := client.QueryAPI(cfg.Org)
	bucket := fluxString(cfg.Bucket)

	var events []point.Point
	if o.RunID != "" {
		flux := fmt.Sprintf(`from(bucket: %s)
  |> range(start: 1970-01-01T00:00:00Z)
  |> filter(fn: (r) => r._measurement == "event" and r.run == %s)
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")`, bucket, fluxString(o.RunID))
		if err := queryPoints(ctx, q, flux, func(p point.Point) { events = append(events, p) }); err != nil {
			return nil, fmt.Errorf("influx: find run %s: %w", o.RunID, err)
		}
		if len(events) == 0 {
			return nil, fmt.Errorf("influx: run %q not found in bucket %q (no event points with run=%s; heatsink collect records none: give --host, --from and --to)", o.RunID, cfg.Bucket, o.RunID)
		}
		slices.SortStableFunc(events, func(a, b point.Point) int { return a.Time.Compare(b.Time) })
		hosts := map[string]bool{}
		for _, e := range events {
			if h := e.Tag(schema.TagHost); h != "" {
				hosts[h] = true
			}
		}
		if len(o.Hosts) == 0 {
			for h := range hosts {
				o.Hosts = append(o.Hosts, h)
			}
			slices.Sort(o.Hosts)
		}
		if o.From.IsZero() {
			o.From = events[0].Time
		}
		if o.To.IsZero() {
			o.To = events[len(events)-1].Time.Add(time.Nanosecond)
		}
	}
	if len(o.Hosts) == 0 {
		return nil, errors.New("influx export: give a run ID, or a host with a time range")
	}
	if o.From.IsZero() || o.To.IsZero() || !o.From.Before(o.To) {
		return nil, fmt.Errorf("influx export: the time range %v .. %v is empty", o.From, o.To)
	}

	w, err := rundir.Create(dir)
	if err != nil {
		return nil, err
	}
	res := &ExportResult{}
	var hostFilter []string
	for _, h := range o.Hosts {
		hostFilter = append(hostFilter, "r.host == "+fluxString(h))
	}
	var ticks []time.Time
	var window []point.Point
	var runPoints []point.Point // event and iteration points, for run.json
	for from := o.From; from.Before(o.To); from = from.Add(o.Window) {
		to := from.Add(o.Window)
		if to.After(o.To) {
			to = o.To
		}
		flux := fmt.Sprintf(`from(bucket: %s)
  |> range(start: %s, stop: %s)
  |> filter(fn: (r) => %s)
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")`,
			bucket, fluxTime(from), fluxTime(to), strings.Join(hostFilter, " or "))
		window = window[:0]
		err := queryPoints(ctx, q, flux, func(p point.Point) {
			// InfluxDB 1.8's Flux includes the stop time in a range;
			// windows must not overlap.
			if p.Time.Before(from) || !p.Time.Before(to) {
				return
			}
			window = append(window, p)
			switch p.Measurement {
			case schema.CollectorTick:
				ticks = append(ticks, p.Time)
			case schema.Event, schema.Iteration:
				if o.RunID == "" || p.Tag(schema.TagRun) == o.RunID {
					runPoints = append(runPoints, p)
				}
			}
		})
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("influx: query %s .. %s: %w", from.Format(time.RFC3339), to.Format(time.RFC3339), err)
		}
		slices.SortStableFunc(window, func(a, b point.Point) int { return a.Time.Compare(b.Time) })
		if err := w.Write(window); err != nil {
			w.Close()
			return nil, err
		}
		res.Points += len(window)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if len(events) == 0 {
		events = slices.DeleteFunc(slices.Clone(runPoints), func(p point.Point) bool { return p.Measurement != schema.Event })
	}
	m := rebuildMeta(o, events, runPoints, ticks)
	m.Sources = []rundir.SourceInfo{{Name: "influxdb", Devices: []string{cfg.URL + " bucket " + cfg.Bucket}}}
	res.Meta = m
	return res, nil
}

// queryPoints runs a pivoted Flux query and turns each row into a point:
// group-key columns are its tags, the others its fields.
func queryPoints(ctx context.Context, q api.QueryAPI, flux string, fn func(point.Point)) error {
	result, err := q.Query(ctx, flux)
	if err != nil {
		return err
	}
	defer result.Close()
	for result.Next() {
		rec := result.Record()
		p, ok := recordPoint(result.TableMetadata(), rec)
		if ok {
			fn(p)
		}
	}
	return result.Err()
}

func recordPoint(meta *query.FluxTableMetadata, rec *query.FluxRecord) (point.Point, bool) {
	p := point.New(rec.Measurement(), rec.Time())
	vals := rec.Values()
	var tags []point.Tag
	for _, col := range meta.Columns() {
		name := col.Name()
		switch name {
		case "result", "table", "_start", "_stop", "_time", "_measurement", "_field", "_value":
			continue
		}
		v := vals[name]
		if v == nil {
			continue
		}
		if col.IsGroup() {
			if s, ok := v.(string); ok && s != "" {
				tags = append(tags, point.Tag{Key: name, Value: s})
			}
			continue
		}
		switch v := v.(type) {
		case float64:
			p.AddFloat(name, v)
		case int64:
			p.AddInt(name, v)
		case uint64:
			p.AddUint(name, v)
		case bool:
			p.AddBool(name, v)
		case string:
			p.AddString(name, v)
		}
	}
	slices.SortFunc(tags, func(a, b point.Tag) int { return strings.Compare(a.Key, b.Key) })
	p.Tags = tags
	return p, p.Measurement != "" && len(p.Fields) > 0
}

// rebuildMeta describes the exported run from its event and iteration
// points, as the runner recorded them.
func rebuildMeta(o ExportOptions, events, runPoints []point.Point, ticks []time.Time) *rundir.Meta {
	m := &rundir.Meta{ID: o.RunID, Host: strings.Join(o.Hosts, ","), Start: o.From, Status: "complete"}
	end := o.To
	if o.RunID != "" {
		end = o.To.Add(-time.Nanosecond)
	}
	m.End = &end
	if m.ID == "" {
		m.ID = o.From.UTC().Format("20060102T150405Z") + "-" + strings.Join(o.Hosts, "+")
	}
	for i := range events {
		e, err := schema.DecodeEvent(&events[i])
		if err != nil {
			continue // a malformed event says nothing the run can use
		}
		phase := e.Phase
		switch e.Kind {
		case schema.KindPhaseStart:
			m.Phases = append(m.Phases, rundir.Phase{Name: phase, Start: e.Time})
		case schema.KindPhaseEnd:
			for i := len(m.Phases) - 1; i >= 0; i-- {
				if m.Phases[i].Name == phase && m.Phases[i].End == nil {
					t := e.Time
					m.Phases[i].End = &t
					break
				}
			}
		case schema.KindIterationStart, schema.KindIterationEnd:
			// Iterations are rebuilt from the iteration points below.
		default:
			ev := rundir.Event{Time: e.Time, Kind: e.Kind, Message: e.Message}
			attrs := append([]point.Tag{{Key: schema.TagPhase, Value: e.Phase}, {Key: schema.TagJob, Value: e.Job}}, e.Other...)
			for _, t := range attrs {
				if t.Value != "" {
					if ev.Attrs == nil {
						ev.Attrs = map[string]string{}
					}
					ev.Attrs[t.Key] = t.Value
				}
			}
			m.Events = append(m.Events, ev)
		}
	}
	for i := range runPoints {
		if runPoints[i].Measurement != schema.Iteration {
			continue
		}
		ip, err := schema.DecodeIteration(&runPoints[i])
		if err != nil {
			continue // an iteration without its number or runtime cannot be placed
		}
		if m.Workload == nil {
			m.Workload = &rundir.Workload{Name: ip.Workload}
		}
		it := rundir.Iteration{N: ip.N, End: ip.Time, RuntimeS: ip.RuntimeS, ExitStatus: ip.ExitStatus, Metrics: ip.Metrics}
		it.Start = it.End.Add(-time.Duration(it.RuntimeS * float64(time.Second)))
		m.Workload.Iterations = append(m.Workload.Iterations, it)
	}
	if len(ticks) > 1 {
		slices.SortFunc(ticks, func(a, b time.Time) int { return a.Compare(b) })
		var gaps []time.Duration
		for i := 1; i < len(ticks); i++ {
			if d := ticks[i].Sub(ticks[i-1]); d > 0 {
				gaps = append(gaps, d)
			}
		}
		if len(gaps) > 0 {
			slices.Sort(gaps)
			m.IntervalS = gaps[len(gaps)/2].Seconds()
		}
	}
	return m
}

// fluxString quotes s as a Flux string literal.
func fluxString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// fluxSafe refuses what fluxString cannot quote portably: control
// characters and "${", which newer Flux reads as interpolation.
func fluxSafe(s string) error {
	if strings.Contains(s, "${") || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("influx export: %q cannot be used in a query", s)
	}
	return nil
}

func fluxTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
