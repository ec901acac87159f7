package influxhistory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/point"
)

// QueryMeasurement reads back every point of one measurement in the
// configured bucket, of all time, whose tags equal those given (in tag
// order), and calls fn with each: what a reader of records (tuning runs'
// evaluations) needs, without knowing Flux.
func QueryMeasurement(ctx context.Context, c influx.Config, measurement string, tags map[string]string, fn func(point.Point)) error {
	filter := []string{"r._measurement == " + fluxString(measurement)}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		if err := fluxSafe(tags[k]); err != nil {
			return err
		}
		filter = append(filter, fmt.Sprintf("r[%s] == %s", fluxString(k), fluxString(tags[k])))
	}
	client, cfg, err := influx.Connect(c)
	if err != nil {
		return err
	}
	defer client.Close()
	flux := fmt.Sprintf(`from(bucket: %s)
  |> range(start: 1970-01-01T00:00:00Z)
  |> filter(fn: (r) => %s)
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")`, fluxString(cfg.Bucket), strings.Join(filter, " and "))
	if err := queryPoints(ctx, client.QueryAPI(cfg.Org), flux, fn); err != nil {
		return fmt.Errorf("influx query %s in %s at %s: %w", measurement, cfg.Bucket, cfg.URL, err)
	}
	return nil
}
