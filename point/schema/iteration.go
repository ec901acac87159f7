package schema

import (
	"fmt"
	"maps"
	"slices"
	"strings"
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

// FixedKeys are the field and tag keys every iteration point has, which no
// metric may take: a metric n beside the iteration number n makes a line
// with the field twice, which decodes as the wrong iteration and which
// InfluxDB stores as one integer and one float of the same field.
func FixedKeys() []string {
	return []string{FieldN, FieldRuntimeS, FieldExitStatus, TagRun, TagWorkload, TagHost, TagJob}
}

// Validate checks the metrics against the schema: none may shadow a fixed
// key (FixedKeys), and a metric the schema declares must be declared a
// float, since metrics are written as floats.
func (it IterationPoint) Validate() error {
	fixed := FixedKeys()
	for _, k := range slices.Sorted(maps.Keys(it.Metrics)) {
		if k == "" {
			return fmt.Errorf("iteration %d of workload %s: a metric has an empty name", it.N, it.Workload)
		}
		if slices.Contains(fixed, k) {
			return fmt.Errorf("iteration %d of workload %s: metric %q shadows the iteration point's own %q (fixed: %s); the workload must name it otherwise",
				it.N, it.Workload, k, k, strings.Join(fixed, ", "))
		}
		if f, ok := Describe(k); ok && f.Kind != Float {
			return fmt.Errorf("iteration %d of workload %s: metric %q is a float, but point/schema declares %s as %s", it.N, it.Workload, k, k, f.Kind)
		}
	}
	return nil
}

// Encode is Point after Validate: the point, or why the metrics cannot be
// written.
func (it IterationPoint) Encode() (point.Point, error) {
	if err := it.Validate(); err != nil {
		return point.Point{}, fmt.Errorf("encode iteration: %w", err)
	}
	return it.Point(), nil
}

// Point encodes the iteration as the iteration measurement of
// docs/data-model.md; the metrics follow the fixed fields in name order, so
// the same iteration always encodes to the same line. A metric that
// shadows a fixed key is left out rather than written twice (Validate
// says which); use Encode where that must be an error.
func (it IterationPoint) Point() point.Point {
	p := point.New(Iteration, it.Time)
	p.AddTag(TagRun, it.Run).AddTag(TagWorkload, it.Workload)
	p.AddInt(FieldN, int64(it.N))
	p.AddFloat(FieldRuntimeS, it.RuntimeS)
	p.AddInt(FieldExitStatus, int64(it.ExitStatus))
	fixed := FixedKeys()
	for _, k := range slices.Sorted(maps.Keys(it.Metrics)) {
		if k == "" || slices.Contains(fixed, k) {
			continue
		}
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
