package main

import (
	"fmt"
	"regexp"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/sensors/nvml"
)

// buildSources turns the configuration into the list of sources to sample.
// The CLI composes: sensor packages know nothing of configuration files or
// of the collector.
func buildSources(cfg *configs.Config) ([]collectors.Source, error) {
	var srcs []collectors.Source
	if !cfg.Sources.Nvml.Disabled {
		o, err := nvmlOptions(cfg.Sources.Nvml)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, nvml.New(o))
	}
	return srcs, nil
}

// nvmlOptions maps the nvml section's filters onto the NVML source: devices
// by GPU index or UUID, sensors by field name.
func nvmlOptions(c configs.NodeSource) (nvml.Options, error) {
	var o nvml.Options
	for _, f := range []struct {
		key string
		re  string
		dst **regexp.Regexp
	}{
		{"device_include", c.DeviceInclude, &o.DeviceInclude},
		{"device_exclude", c.DeviceExclude, &o.DeviceExclude},
		{"sensor_include", c.SensorInclude, &o.SensorInclude},
		{"sensor_exclude", c.SensorExclude, &o.SensorExclude},
	} {
		if f.re == "" {
			continue
		}
		re, err := regexp.Compile(f.re)
		if err != nil {
			return o, fmt.Errorf("sources.nvml.%s: %w", f.key, err)
		}
		*f.dst = re
	}
	return o, nil
}
