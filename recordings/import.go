package recordings

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// Writer receives imported points: a run directory, the InfluxDB sink.
type Writer interface {
	Write(points []point.Point) error
}

// ImportOptions add, to what reading needs, what the run is to be.
type ImportOptions struct {
	Options
	// RunID names the run; default START-HOST, as heatsink names its own.
	RunID string
	// Phases set by hand replace those of the same name found in the files.
	Phases []PhaseSpec
}

// Result is an import: run.json's content and what each file gave.
type Result struct {
	Meta   *rundir.Meta
	Files  []*FileResult
	Points int
	// Bad counts the lines skipped in all files.
	Bad int
}

// Import reads every file into w, then writes the phase events, and
// returns the run's description. A file that cannot be read at all, or
// holds no reading, stops the import with an error naming it.
func Import(paths []string, o ImportOptions, w Writer) (*Result, error) {
	if len(paths) == 0 {
		return nil, errors.New("nothing to import")
	}
	res := &Result{}
	hosts := map[string]bool{}
	batch := make([]point.Point, 0, 1000)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := w.Write(batch)
		batch = batch[:0]
		return err
	}
	for _, path := range paths {
		fr, err := ReadFile(path, o.Options, func(p *point.Point) error {
			if h := p.Tag(schema.TagHost); h != "" {
				hosts[h] = true
			}
			batch = append(batch, *p)
			if len(batch) == cap(batch) {
				return flush()
			}
			return nil
		})
		if fr != nil {
			res.Files = append(res.Files, fr)
			res.Points += fr.Points
			res.Bad += len(fr.Bad)
		}
		if err != nil {
			flush()
			return res, err
		}
	}
	if err := flush(); err != nil {
		return res, err
	}

	m := &rundir.Meta{Status: "complete", Versions: map[string]string{}}
	var first, last time.Time
	var interval time.Duration
	phases := map[string]rundir.Phase{}
	var phaseOrder []string
	for _, fr := range res.Files {
		if first.IsZero() || fr.First.Before(first) {
			first = fr.First
		}
		if fr.Last.After(last) {
			last = fr.Last
		}
		if fr.Interval > 0 && (interval == 0 || fr.Interval < interval) {
			interval = fr.Interval
		}
		for _, ph := range fr.Phases {
			if _, ok := phases[ph.Name]; !ok {
				phases[ph.Name] = ph
				phaseOrder = append(phaseOrder, ph.Name)
			}
		}
		m.Events = append(m.Events, fr.Events...)
		maps.Copy(m.Versions, fr.Versions)
		if len(fr.Command) > 0 && m.Workload == nil {
			m.Workload = &rundir.Workload{Name: "command", Command: fr.Command}
		}
		m.Sources = append(m.Sources, fr.SourceInfo())
	}
	origin := o.Start
	if origin.IsZero() {
		origin = first
	}
	for _, spec := range o.Phases {
		if _, ok := phases[spec.Name]; !ok {
			phaseOrder = append(phaseOrder, spec.Name)
		}
		phases[spec.Name] = spec.Resolve(origin)
	}
	for _, name := range phaseOrder {
		m.Phases = append(m.Phases, phases[name])
	}
	slices.SortStableFunc(m.Phases, func(a, b rundir.Phase) int { return a.Start.Compare(b.Start) })

	m.Host = o.Host
	if m.Host == "" {
		hs := sortedKeys(hosts)
		m.Host = strings.Join(hs, ",")
	}
	m.Start, m.IntervalS = first, interval.Seconds()
	end := last
	for _, ph := range m.Phases {
		if ph.Start.Before(m.Start) {
			m.Start = ph.Start
		}
		if ph.End != nil && ph.End.After(end) {
			end = *ph.End
		}
	}
	m.End = &end
	m.ID = o.RunID
	if m.ID == "" {
		h := m.Host
		if h == "" {
			h = "unknown"
		}
		m.ID = m.Start.UTC().Format("20060102T150405Z") + "-" + h
	}
	if len(m.Versions) == 0 {
		m.Versions = nil
	}
	res.Meta = m

	host := o.Host
	if host == "" && len(hosts) == 1 {
		host = sortedKeys(hosts)[0]
	}
	names := make([]string, len(res.Files))
	for i, fr := range res.Files {
		names[i] = string(fr.Format)
	}
	if ev := PhaseEvents(m.ID, host, m.Phases, "imported from "+strings.Join(slices.Compact(slices.Sorted(slices.Values(names))), ", ")); len(ev) > 0 {
		if err := w.Write(ev); err != nil {
			return res, fmt.Errorf("write phase events: %w", err)
		}
	}
	return res, nil
}
