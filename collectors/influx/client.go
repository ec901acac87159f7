package influx

import (
	"errors"
	"fmt"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
)

// Connect makes a client for the server a sink configuration names, for
// the readers of what the sink wrote (recordings/influxhistory): they must
// reach the same server, with the same defaults, TLS and token, without a
// second copy of the configuration. It returns the configuration with its
// defaults applied (the bucket and organisation to query). The caller
// closes the client.
func Connect(c Config) (influxdb2.Client, Config, error) {
	cfg := c.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, cfg, fmt.Errorf("influx: %w", err)
	}
	if !cfg.Enabled() {
		return nil, cfg, errors.New("influx: no url configured (sinks.influx.url)")
	}
	if err := cfg.Token.Resolve(); err != nil {
		return nil, cfg, fmt.Errorf("influx token: %w", err)
	}
	client, err := newClient(cfg)
	if err != nil {
		return nil, cfg, fmt.Errorf("influx client for %s: %w", cfg.URL, err)
	}
	return client, cfg, nil
}
