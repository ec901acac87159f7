package main

import (
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
)

// buildSources turns the configuration into the list of sources to sample.
// The CLI composes: sensor packages know nothing of configuration files or
// of the collector.
func buildSources(cfg *configs.Config) ([]collectors.Source, error) {
	var srcs []collectors.Source
	return srcs, nil
}
