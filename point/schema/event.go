package schema

import (
	"fmt"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// Event kinds: the kind tag of an event point.
const (
	KindPhaseStart     = "phase_start"
	KindPhaseEnd       = "phase_end"
	KindIterationStart = "iteration_start"
	KindIterationEnd   = "iteration_end"
	KindAlertFired     = "alert_fired"
	KindAlertCleared   = "alert_cleared"
	KindGuardPause     = "guard_pause"
	KindGuardResume    = "guard_resume"
	KindGuardStop      = "guard_stop"
	KindGuardHold      = "guard_hold"
	KindNote           = "note"
	KindJobStart       = "job_start"
	KindJobEnd         = "job_end"
	KindHoldStart      = "hold_start"
	KindHoldFallback   = "hold_fallback"
)

// EventKinds returns every kind an event point may have, in the order
// docs/data-model.md lists them.
func EventKinds() []string {
	return []string{KindPhaseStart, KindPhaseEnd, KindIterationStart, KindIterationEnd, KindAlertFired,
		KindAlertCleared, KindGuardPause, KindGuardResume, KindGuardStop, KindGuardHold, KindHoldStart, KindHoldFallback, KindNote, KindJobStart, KindJobEnd}
}

// EventPoint is one thing that happened to a run or a node, stamped when it
// happened rather than on the tick: a phase boundary, an iteration's start
// or end, an alert, a guard action, a note, a Slurm job's start or end.
type EventPoint struct {
	Time time.Time
	// Run is the heatsink run the event belongs to; for job_start and
	// job_end, the run that allocated the job, if any.
	Run   string
	Kind  string
	Phase string // absent outside a phase
	Job   string // the Slurm job of job_start and job_end
	Host  string // usually left to the collector, which adds it to every point
	// Other holds tags the data model does not name for events; decoding
	// keeps them and encoding writes them, so nothing is lost on the way.
	Other   []point.Tag
	Message string
	// Iteration is the iteration an iteration_start or iteration_end event
	// belongs to; iterations count from 1 and 0 leaves the field out.
	Iteration int
	// Ended marks an event that carries an iteration's outcome
	// (iteration_end): its exit status and runtime.
	Ended      bool
	ExitStatus int
	RuntimeS   float64
}

// Point encodes the event as the event measurement of docs/data-model.md.
func (e EventPoint) Point() point.Point {
	p := point.New(Event, e.Time)
	p.AddTag(TagRun, e.Run).AddTag(TagKind, e.Kind).AddTag(TagPhase, e.Phase).AddTag(TagJob, e.Job).AddTag(TagHost, e.Host)
	for _, t := range e.Other {
		p.AddTag(t.Key, t.Value)
	}
	p.AddString(FieldMessage, e.Message)
	if e.Iteration != 0 {
		p.AddInt(FieldIteration, int64(e.Iteration))
	}
	if e.Ended {
		p.AddInt(FieldExitStatus, int64(e.ExitStatus))
		p.AddFloat(FieldRuntimeS, e.RuntimeS)
	}
	return p
}

// DecodeEvent reads an event point. Fields the event does not carry are
// left at zero; a point of another measurement, or a field of the wrong
// type, is an error.
func DecodeEvent(p *point.Point) (EventPoint, error) {
	if p.Measurement != Event {
		return EventPoint{}, fmt.Errorf("decode event: point at %s is a %q point, not %q", p.Time.Format(time.RFC3339Nano), p.Measurement, Event)
	}
	e := EventPoint{Time: p.Time}
	for _, t := range p.Tags {
		switch t.Key {
		case TagRun:
			e.Run = t.Value
		case TagKind:
			e.Kind = t.Value
		case TagPhase:
			e.Phase = t.Value
		case TagJob:
			e.Job = t.Value
		case TagHost:
			e.Host = t.Value
		default:
			e.Other = append(e.Other, t)
		}
	}
	for _, f := range p.Fields {
		var err error
		switch f.Key {
		case FieldMessage:
			e.Message, err = stringField(f)
		case FieldIteration:
			e.Iteration, err = intField(f)
		case FieldExitStatus:
			e.Ended = true
			e.ExitStatus, err = intField(f)
		case FieldRuntimeS:
			e.Ended = true
			e.RuntimeS, err = floatField(f)
		}
		if err != nil {
			return EventPoint{}, fmt.Errorf("decode event %s at %s: %w", e.Kind, p.Time.Format(time.RFC3339Nano), err)
		}
	}
	return e, nil
}
