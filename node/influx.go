package node

import (
	"context"
	"log/slog"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
)

// StartInflux opens the InfluxDB sink cfg configures (influx.Start): a
// server that does not answer is logged loudly and the spool holds the
// points until it does, so an outage at boot loses nothing; a refused token
// or a missing bucket, which never pass by themselves, is an error unless
// sinks.influx.optional. It returns nil when no InfluxDB is configured.
func StartInflux(cfg *influx.Config) (*influx.Sink, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return influx.Start(ctx, influx.Options{Config: *cfg, Logger: slog.Default()})
}
