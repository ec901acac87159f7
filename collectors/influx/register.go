package influx

import (
	"context"
	"log/slog"
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
)

// SectionKey is where the sink's settings are in a configuration file.
const SectionKey = "sinks.influx"

func init() {
	registry.RegisterSink(registry.SinkKind{
		Name:     "influx",
		New:      func() any { return &Config{} },
		Validate: func(sec any, _ time.Duration) error { return sec.(*Config).Validate() },
		Enabled:  func(sec any) bool { return sec.(*Config).Enabled() },
		Build: func(_ registry.Env, sec any) (registry.Sink, error) {
			return StartConfigured(sec.(*Config))
		},
		// The spool's lock lets one sink at a time use the directory.
		Exclusive: true,
		Health:    func(s registry.Sink) registry.SinkHealth { return s.(*Sink).SinkHealth() },
	})
}

// ConfigOf returns the sinks.influx section of c; the sink is on when its
// URL is set.
func ConfigOf(c *configs.Config) *Config { return c.Section(SectionKey).(*Config) }

// StartConfigured opens the sink cfg configures (Start): a server that
// does not answer is logged loudly and the spool holds the points until it
// does, so an outage at boot loses nothing; a refused token or a missing
// bucket, which never pass by themselves, is an error unless
// sinks.influx.optional. It returns nil when no InfluxDB is configured.
func StartConfigured(cfg *Config) (*Sink, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Start(ctx, Options{Config: *cfg, Logger: slog.Default()})
}

// SinkHealth describes the sink for /healthz: whether it delivers, and
// what waits in its spool.
func (s *Sink) SinkHealth() registry.SinkHealth {
	st := s.Stats()
	ok, problem := s.Health()
	h := registry.SinkHealth{OK: ok, Problem: problem, SpoolDir: s.SpoolDir(),
		UnsentPoints: st.Spool.UnsentPoints, UnsentBytes: st.Spool.UnsentBytes,
		SentPointsTotal: st.SentPoints, RetriesTotal: st.Retries, DroppedPointsTotal: st.LostPoints, DirectPointsTotal: st.DirectPoints,
		RejectedPointsTotal: st.RejectedPoints}
	if !st.Spool.Oldest.IsZero() {
		age := time.Since(st.Spool.Oldest).Seconds()
		h.OldestUnsentAgeS = &age
	}
	return h
}
