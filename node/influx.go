package node

import (
	"context"
	"log/slog"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
)

// StartInflux opens the InfluxDB sink cfg configures and checks the
// server, so that an unreachable server or a token that may not write is
// a clear error before collecting starts; later outages are retried, never
// fatal. It returns nil when no InfluxDB is configured.
func StartInflux(cfg *influx.Config) (*influx.Sink, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	s, err := influx.New(influx.Options{Config: *cfg, Logger: slog.Default()})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Check(ctx); err != nil {
		s.Abort()
		return nil, err
	}
	return s, nil
}
