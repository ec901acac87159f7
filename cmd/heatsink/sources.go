package main

import (
	"fmt"
	"os"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/sensors/cpufreq"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/host"
	"github.com/heatsink-hpc/heatsink/sensors/hwmon"
	"github.com/heatsink-hpc/heatsink/sensors/nvme"
	"github.com/heatsink-hpc/heatsink/sensors/nvml"
	"github.com/heatsink-hpc/heatsink/sensors/pdu"
	"github.com/heatsink-hpc/heatsink/sensors/rapl"
	"github.com/heatsink-hpc/heatsink/sensors/tank"
)

// buildSources turns the configuration into the list of sources to sample.
// The CLI composes: sensor packages know nothing of configuration files or
// of the collector.
func buildSources(cfg *configs.Config) ([]collectors.Source, error) {
	var srcs []collectors.Source
	// Node sources over procfs and sysfs: the roots are options so tests and
	// benchmarks can point them at fixture trees (sensors/testdata).
	for _, ns := range []struct {
		name string
		cfg  configs.NodeSource
		make func(filter.Filter) collectors.Source
	}{
		{"host", cfg.Sources.Host, func(f filter.Filter) collectors.Source { return host.New(cfg.ProcfsRoot, f) }},
		{"hwmon", cfg.Sources.Hwmon, func(f filter.Filter) collectors.Source { return hwmon.New(cfg.SysfsRoot, f) }},
		{"cpufreq", cfg.Sources.Cpufreq, func(f filter.Filter) collectors.Source { return cpufreq.New(cfg.SysfsRoot, f) }},
		{"rapl", cfg.Sources.Rapl, func(f filter.Filter) collectors.Source { return rapl.New(cfg.SysfsRoot, f) }},
		{"nvme", cfg.Sources.Nvme, func(f filter.Filter) collectors.Source { return nvme.New(cfg.SysfsRoot, f) }},
	} {
		if ns.cfg.Disabled {
			continue
		}
		f, err := filter.New(filter.Spec{DeviceInclude: ns.cfg.DeviceInclude, DeviceExclude: ns.cfg.DeviceExclude,
			SensorInclude: ns.cfg.SensorInclude, SensorExclude: ns.cfg.SensorExclude})
		if err != nil {
			return nil, fmt.Errorf("sources.%s: %w", ns.name, err)
		}
		srcs = append(srcs, ns.make(f))
	}
	// NVIDIA GPUs (sensors/nvml).
	if n := cfg.Sources.Nvml; !n.Disabled {
		// Devices are GPU indexes or UUIDs, sensors are field names.
		f, err := filter.New(filter.Spec{DeviceInclude: n.DeviceInclude, DeviceExclude: n.DeviceExclude,
			SensorInclude: n.SensorInclude, SensorExclude: n.SensorExclude})
		if err != nil {
			return nil, fmt.Errorf("sources.nvml: %w", err)
		}
		srcs = append(srcs, nvml.New(nvml.Options{Filter: f}))
	}
	// Facility devices shared by many nodes (rack PDUs over SNMP, immersion
	// tanks over REST) go here, after the node's own sources, polled only
	// by the hosts sources.facility_hosts names (all, when it names none).
	host := cfg.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	if !cfg.Sources.PollsFacility(host) {
		return srcs, nil
	}
	for i, c := range cfg.Sources.PDUs {
		s, err := pdu.New(c)
		if err != nil {
			closeSources(srcs)
			return nil, fmt.Errorf("sources.pdus.%d: %w", i, err)
		}
		srcs = append(srcs, s)
	}
	for i, c := range cfg.Sources.Tanks {
		s, err := tank.New(c)
		if err != nil {
			closeSources(srcs)
			return nil, fmt.Errorf("sources.tanks.%d: %w", i, err)
		}
		srcs = append(srcs, s)
	}
	return srcs, nil
}
