package workloads

import (
	"fmt"
	"maps"
	"slices"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// MetricDeclarer is a workload that declares the metrics its iterations
// report, as fields of point/schema's iteration measurement. Every
// built-in implements it (a test runs each once and holds its metrics to
// the declaration); it is not part of Workload so that a test's fake or a
// workload outside this repository need not.
type MetricDeclarer interface {
	Metrics() []schema.Field
}

// CheckMetrics says what is wrong with one iteration's metrics against a
// workload's declaration: a declared field the schema's iteration
// measurement lacks or does not declare a float (metrics are written as
// floats), a metric that shadows the iteration point's own fields, or one
// reported but not declared.
func CheckMetrics(declared []schema.Field, metrics map[string]float64) error {
	it, _ := schema.Lookup(schema.Iteration)
	byName := map[string]schema.Field{}
	for _, f := range declared {
		want, ok := it.Field(f.Name)
		switch {
		case !ok:
			return fmt.Errorf("declared metric %q is no field of point/schema's %s measurement", f.Name, schema.Iteration)
		case f != want:
			return fmt.Errorf("declared metric %q is %+v, point/schema says %+v", f.Name, f, want)
		case want.Kind != schema.Float:
			return fmt.Errorf("declared metric %q is a %s in point/schema, but metrics are written as floats", f.Name, want.Kind)
		}
		byName[f.Name] = f
	}
	if err := (schema.IterationPoint{Metrics: metrics}).Validate(); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(metrics)) {
		if _, ok := byName[k]; !ok {
			return fmt.Errorf("metric %q is reported but not declared", k)
		}
	}
	return nil
}
