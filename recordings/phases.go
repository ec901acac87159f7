package recordings

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// PhaseSpec is a phase given by hand for a recording that has none:
// NAME=START..END, each bound an RFC 3339 time, a local "2006-01-02
// 15:04:05", or a duration from the start of the recording ("0s", "30m",
// "8h30m"). END may be left out for a phase that runs to the end.
type PhaseSpec struct {
	Name       string
	start, end bound
}

type bound struct {
	at     time.Time
	offset time.Duration
	rel    bool
	set    bool
}

// ParsePhase parses NAME=START..END. NAME must be one of the protocol's
// phases (rundir.PhaseNames): a misspelt one would give a run without it.
func ParsePhase(s string, loc *time.Location) (PhaseSpec, error) {
	name, rng, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return PhaseSpec{}, fmt.Errorf("phase %q: want NAME=START..END", s)
	}
	from, to, ok := strings.Cut(rng, "..")
	if !ok {
		return PhaseSpec{}, fmt.Errorf("phase %q: want NAME=START..END (the range needs ..)", s)
	}
	if !slices.Contains(rundir.PhaseNames(), name) {
		return PhaseSpec{}, fmt.Errorf("phase %q: unknown phase %q; the phases are %s", s, name, strings.Join(rundir.PhaseNames(), ", "))
	}
	p := PhaseSpec{Name: name}
	var err error
	if p.start, err = parseBound(from, loc); err != nil || !p.start.set {
		if err == nil {
			err = fmt.Errorf("no start")
		}
		return PhaseSpec{}, fmt.Errorf("phase %q: start: %w", s, err)
	}
	if p.end, err = parseBound(to, loc); err != nil {
		return PhaseSpec{}, fmt.Errorf("phase %q: end: %w", s, err)
	}
	if p.end.set && p.start.rel == p.end.rel {
		if (p.start.rel && p.end.offset < p.start.offset) || (!p.start.rel && p.end.at.Before(p.start.at)) {
			return PhaseSpec{}, fmt.Errorf("phase %q: ends before it starts", s)
		}
	}
	return p, nil
}

func parseBound(s string, loc *time.Location) (bound, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return bound{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return bound{}, fmt.Errorf("%q: negative offset", s)
		}
		return bound{offset: d, rel: true, set: true}, nil
	}
	t, err := ParseTime(s, loc)
	if err != nil {
		return bound{}, err
	}
	return bound{at: t, set: true}, nil
}

// ParseTime reads an RFC 3339 time, or "2006-01-02 15:04:05[.000]" (or with
// a T) in loc.
func ParseTime(s string, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.Local
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006/01/02 15:04:05.999999999"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration nor a time (RFC 3339 or 2006-01-02 15:04:05)", s)
}

// Resolve places the phase on the clock; relative bounds count from origin.
func (p PhaseSpec) Resolve(origin time.Time) rundir.Phase {
	at := func(b bound) time.Time {
		if b.rel {
			return origin.Add(b.offset)
		}
		return b.at
	}
	ph := rundir.Phase{Name: p.Name, Start: at(p.start)}
	if p.end.set {
		end := at(p.end)
		ph.End = &end
	}
	return ph
}

// PhaseEvents returns the event points that mark phases, as the runner
// writes them (measurement event, kind phase_start/phase_end), so that an
// analysis working from InfluxDB alone finds them.
func PhaseEvents(runID, host string, phases []rundir.Phase, why string) []point.Point {
	var pts []point.Point
	mk := func(t time.Time, kind, phase, msg string) {
		pts = append(pts, schema.EventPoint{Time: t, Run: runID, Kind: kind, Phase: phase, Host: host, Message: msg}.Point())
	}
	for _, ph := range phases {
		mk(ph.Start, schema.KindPhaseStart, ph.Name, ph.Name+" starts ("+why+")")
		if ph.End != nil {
			mk(*ph.End, schema.KindPhaseEnd, ph.Name, ph.Name+" ends ("+why+")")
		}
	}
	return pts
}
