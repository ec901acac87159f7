package nvml

import (
	"github.com/heatsink-hpc/heatsink/registry"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
)

// Devices are GPU indexes or UUIDs, sensors are field names.
func init() {
	registry.RegisterSource(filter.Kind("nvml", 60, true, func(_ registry.Env, f filter.Filter) registry.Source {
		return New(Options{Filter: f})
	}))
}
