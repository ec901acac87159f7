package main

import (
	"fmt"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/nvml"
)

// buildSources turns the configuration into the list of sources to sample.
// The CLI composes: sensor packages know nothing of configuration files or
// of the collector.
func buildSources(cfg *configs.Config) ([]collectors.Source, error) {
	var srcs []collectors.Source
	if n := cfg.Sources.Nvml; !n.Disabled {
		// Devices are GPU indexes or UUIDs, sensors are field names.
		f, err := filter.New(filter.Spec{DeviceInclude: n.DeviceInclude, DeviceExclude: n.DeviceExclude,
			SensorInclude: n.SensorInclude, SensorExclude: n.SensorExclude})
		if err != nil {
			return nil, fmt.Errorf("sources.nvml: %w", err)
		}
		srcs = append(srcs, nvml.New(nvml.Options{Filter: f}))
	}
	return srcs, nil
}
