// Command tickstats summarises a collector run's own health points: tick
// lag (distance of each tick from its wall-clock boundary), missed ticks and
// per-source latency. bench/collector.sh uses it.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"sort"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

func main() {
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: tickstats RUN_DIR")
	}
	var lags []float64
	var missed float64
	var pointsPerTick []float64
	lat := map[string][]float64{}
	err := rundir.ForEachPoint(flag.Arg(0), func(p *point.Point) error {
		switch p.Measurement {
		case schema.CollectorTick:
			if v, ok := p.Float(schema.FieldLagS); ok {
				lags = append(lags, v)
			}
			if v, ok := p.Float(schema.FieldMissedTicksTotal); ok {
				missed = v
			}
			if v, ok := p.Float(schema.FieldPoints); ok {
				pointsPerTick = append(pointsPerTick, v)
			}
		case schema.CollectorSource:
			if v, ok := p.Float(schema.FieldLatencyS); ok {
				lat[p.Tag(schema.TagSource)] = append(lat[p.Tag(schema.TagSource)], v)
			}
		}
		return nil
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	if len(lags) == 0 {
		log.Fatal("no collector_tick points")
	}
	w := os.Stdout
	fmt.Fprintf(w, "ticks\t%d\nmissed_ticks\t%.0f\n", len(lags), missed)
	fmt.Fprintf(w, "points_per_tick_median\t%.0f\n", quantile(pointsPerTick, 0.5))
	fmt.Fprintf(w, "tick_offset_ms\tp50 %.3f\tp99 %.3f\tmax %.3f\n",
		1e3*quantile(lags, 0.5), 1e3*quantile(lags, 0.99), 1e3*quantile(lags, 1))
	names := make([]string, 0, len(lat))
	for n := range lat {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "source_latency_ms\t%s\tp50 %.3f\tp99 %.3f\tmax %.3f\n", n,
			1e3*quantile(lat[n], 0.5), 1e3*quantile(lat[n], 0.99), 1e3*quantile(lat[n], 1))
	}
}

// quantile returns the q-quantile by the nearest-rank method.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}
