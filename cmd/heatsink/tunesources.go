package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/recordings/influxhistory"
	"github.com/heatsink-hpc/heatsink/tune"
)

// loadTuneSources reads the sources of --sources: a directory of earlier
// tuning runs, or "influx" (the configuration's sinks.influx) or
// "influx:BUCKET" (another bucket of that server) for the evaluations
// earlier tuning runs published there.
func loadTuneSources(ctx context.Context, cfg *configs.Config, s *tune.Space, spec string, sources []string) ([]tune.Observation, error) {
	var dirs []string
	var obs []tune.Observation
	for _, src := range sources {
		if src != "influx" && !strings.HasPrefix(src, "influx:") {
			dirs = append(dirs, src)
			continue
		}
		ic := *influx.ConfigOf(cfg)
		if !ic.Enabled() {
			return nil, fmt.Errorf("--sources %s: no InfluxDB configured (sinks.influx.url in --config)", src)
		}
		if b, ok := strings.CutPrefix(src, "influx:"); ok {
			ic.Bucket = b
		}
		q := func(ctx context.Context, m string, tags map[string]string, fn func(point.Point)) error {
			return influxhistory.QueryMeasurement(ctx, ic, m, tags, fn)
		}
		got, err := tune.LoadInfluxSources(ctx, q, src, s, spec)
		if err != nil {
			return nil, err
		}
		obs = append(obs, got...)
	}
	got, err := tune.LoadSources(s, spec, dirs)
	return append(obs, got...), err
}

// publishTune makes every evaluation also a tune_evaluation point in the
// configured InfluxDB, spooled under out/influx-spool (what could not be
// sent by the end stays there and is logged), so later tuning runs can take
// it as a source; without sinks.influx it returns ev as it is.
func publishTune(ctx context.Context, cfg *configs.Config, ev tune.Evaluator, out string) (tune.Evaluator, func(), error) {
	ic := *influx.ConfigOf(cfg)
	if !ic.Enabled() {
		return ev, func() {}, nil
	}
	ic.SpoolDir = filepath.Join(out, "influx-spool")
	sink, err := influx.Start(ctx, influx.Options{Config: ic, Logger: slog.Default()})
	if err != nil {
		return nil, nil, fmt.Errorf("publish evaluations: %w", err)
	}
	closer := func() {
		if err := sink.Close(); err != nil {
			slog.Error("publish evaluations: close the InfluxDB sink", "spool", ic.SpoolDir, "err", err)
		}
	}
	return tune.Publisher{Evaluator: ev, W: sink}, closer, nil
}
