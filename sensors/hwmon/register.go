package hwmon

import (
	"github.com/heatsink-hpc/heatsink/registry"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
)

func init() {
	registry.RegisterSource(filter.Kind("hwmon", 20, true, func(env registry.Env, f filter.Filter) registry.Source {
		return New(env.SysfsRoot, f)
	}))
}
