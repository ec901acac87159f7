package schema

import (
	"fmt"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// Alert states: the state field of an alert point.
const (
	StateFiring  = "firing"
	StateCleared = "cleared"
)

// AlertPoint is an alert rule firing on a series, or clearing.
type AlertPoint struct {
	Time     time.Time
	Rule     string
	Severity string
	// Measurement is that of the series that fired; Tags are the series'
	// own, written beside rule, severity and measurement (which win when a
	// series has a tag of the same key).
	Measurement string
	Tags        []point.Tag
	State       string
	// HasValue says Value and Threshold are set: a string condition has
	// neither.
	HasValue         bool
	Value, Threshold float64
	Message          string
}

// Point encodes the alert as the alert measurement of docs/data-model.md.
func (a AlertPoint) Point() point.Point {
	p := point.New(Alert, a.Time)
	p.AddTag(TagRule, a.Rule).AddTag(TagSeverity, a.Severity).AddTag(TagMeasurement, a.Measurement)
	for _, t := range a.Tags {
		if t.Key != TagRule && t.Key != TagSeverity && t.Key != TagMeasurement {
			p.AddTag(t.Key, t.Value)
		}
	}
	p.AddString(FieldState, a.State)
	if a.HasValue {
		p.AddFloat(FieldValue, a.Value)
		p.AddFloat(FieldThreshold, a.Threshold)
	}
	p.AddString(FieldMessage, a.Message)
	return p
}

// DecodeAlert reads an alert point. A point of another measurement, a
// field of the wrong type, or a value without a threshold (or the reverse)
// is an error.
func DecodeAlert(p *point.Point) (AlertPoint, error) {
	at := p.Time.Format(time.RFC3339Nano)
	if p.Measurement != Alert {
		return AlertPoint{}, fmt.Errorf("decode alert: point at %s is a %q point, not %q", at, p.Measurement, Alert)
	}
	a := AlertPoint{Time: p.Time}
	for _, t := range p.Tags {
		switch t.Key {
		case TagRule:
			a.Rule = t.Value
		case TagSeverity:
			a.Severity = t.Value
		case TagMeasurement:
			a.Measurement = t.Value
		default:
			a.Tags = append(a.Tags, t)
		}
	}
	var hasValue, hasThreshold bool
	for _, f := range p.Fields {
		var err error
		switch f.Key {
		case FieldState:
			a.State, err = stringField(f)
		case FieldMessage:
			a.Message, err = stringField(f)
		case FieldValue:
			hasValue = true
			a.Value, err = floatField(f)
		case FieldThreshold:
			hasThreshold = true
			a.Threshold, err = floatField(f)
		}
		if err != nil {
			return AlertPoint{}, fmt.Errorf("decode alert %s at %s: %w", a.Rule, at, err)
		}
	}
	if hasValue != hasThreshold {
		return AlertPoint{}, fmt.Errorf("decode alert %s at %s: value and threshold come together, this point has only one", a.Rule, at)
	}
	a.HasValue = hasValue
	return a, nil
}
