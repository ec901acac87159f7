package schema

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// IterationPoint is one finished iteration of a job, stamped at its end.
type IterationPoint struct {
	Time       time.Time // the iteration's end
	Run        string
	Workload   string // a built-in's name, or a command's program base name
	N          int
	RuntimeS   float64
	ExitStatus int
	// Metrics are the workload's own fields, units in their names
	// (triad_bytes_per_s, paused_s, work_bytes...).
	Metrics map[string]float64
}

// Point encodes the iteration as the iteration measurement of
// docs/data-model.md; the metrics follow the fixed fields in name order, so
// the same iteration always encodes to the same line.
func (it IterationPoint) Point() point.Point {
	p := point.New(Iteration, it.Time)
	p.AddTag(TagRun, it.Run).AddTag(TagWorkload, it.Workload)
	p.AddInt(FieldN, int64(it.N))
	p.AddFloat(FieldRuntimeS, it.RuntimeS)
	p.AddInt(FieldExitStatus, int64(it.ExitStatus))
	for _, k := range slices.Sorted(maps.Keys(it.Metrics)) {
		p.AddFloat(k, it.Metrics[k])
	}
	return p
}

// DecodeIteration reads an iteration point: n, runtime_s and exit_status
// into their fields, every other numeric field into Metrics (nil when there
// is none); tags other than run and workload are ignored. A point of
// another measurement, or a fixed field of the wrong type, is an error.
func DecodeIteration(p *point.Point) (IterationPoint, error) {
	if p.Measurement != Iteration {
		return IterationPoint{}, fmt.Errorf("decode iteration: point at %s is a %q point, not %q", p.Time.Format(time.RFC3339Nano), p.Measurement, Iteration)
	}
	it := IterationPoint{Time: p.Time, Run: p.Tag(TagRun), Workload: p.Tag(TagWorkload)}
	for _, f := range p.Fields {
		var err error
		switch f.Key {
		case FieldN:
			it.N, err = intField(f)
		case FieldRuntimeS:
			it.RuntimeS, err = floatField(f)
		case FieldExitStatus:
			it.ExitStatus, err = intField(f)
		default:
			if v, ok := point.Float(f.Value); ok {
				if it.Metrics == nil {
					it.Metrics = map[string]float64{}
				}
				it.Metrics[f.Key] = v
			}
		}
		if err != nil {
			return IterationPoint{}, fmt.Errorf("decode iteration %d of run %s at %s: %w", it.N, it.Run, p.Time.Format(time.RFC3339Nano), err)
		}
	}
	return it, nil
}
