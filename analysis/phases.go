package analysis

import (
	"fmt"
	"sort"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
)

// Span is an interval of a run in seconds since its start. Open means its end
// was never recorded (the run stopped inside it) and End is the end of the
// recording instead.
type Span struct {
	Start float64 `json:"start_s"`
	End   float64 `json:"end_s"`
	Open  bool    `json:"open,omitempty"`
}

// Duration returns End - Start in seconds.
func (s Span) Duration() float64 { return s.End - s.Start }

// Phases are the stages of the experiment protocol that the analyses need:
// an idle baseline, the load, and the cooldown after it. A phase the run did
// not record is nil.
type Phases struct {
	Baseline *Span `json:"baseline,omitempty"`
	Load     *Span `json:"load,omitempty"`
	Cooldown *Span `json:"cooldown,omitempty"`
	// LoadRecordedEndS is the end of the load phase as recorded, set only
	// when the load was trimmed to the span its power shows the work took
	// (see PoweredEnd); Load.End is then the trimmed end.
	LoadRecordedEndS *float64 `json:"load_recorded_end_s,omitempty"`
}

// ResolvePhases converts recorded phases into spans relative to start. A phase
// without an end ends where the next recorded phase starts, or at endS (the
// end of the recording) marked Open. When a name occurs more than once, the
// first occurrence is used and a note says so.
func ResolvePhases(recorded []rundir.Phase, start time.Time, endS float64) (Phases, []string) {
	ps := append([]rundir.Phase(nil), recorded...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Start.Before(ps[j].Start) })
	rel := func(t time.Time) float64 { return t.Sub(start).Seconds() }
	var out Phases
	var notes []string
	for i, p := range ps {
		var dst **Span
		switch p.Name {
		case "baseline":
			dst = &out.Baseline
		case "load":
			dst = &out.Load
		case "cooldown":
			dst = &out.Cooldown
		default:
			continue
		}
		if *dst != nil {
			notes = append(notes, fmt.Sprintf("phase %q recorded more than once; the first is used", p.Name))
			continue
		}
		sp := Span{Start: rel(p.Start)}
		switch {
		case p.End != nil:
			sp.End = rel(*p.End)
		case i+1 < len(ps):
			sp.End = rel(ps[i+1].Start)
		default:
			sp.End, sp.Open = endS, true
		}
		if sp.End < sp.Start {
			notes = append(notes, fmt.Sprintf("phase %q ends before it starts; ignored", p.Name))
			continue
		}
		*dst = &sp
	}
	return out, notes
}

// afterLoad returns the span from the end of the load to the end of the
// cooldown, or to endS when no cooldown end is recorded.
func (p Phases) afterLoad(endS float64) Span {
	end := endS
	if p.Cooldown != nil && !p.Cooldown.Open && p.Cooldown.End > p.Load.End {
		end = p.Cooldown.End
	}
	return Span{Start: p.Load.End, End: end}
}
