package rapl

import (
	"github.com/heatsink-hpc/heatsink/registry"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
)

func init() {
	registry.RegisterSource(filter.Kind("rapl", 40, false, func(env registry.Env, f filter.Filter) registry.Source {
		return New(env.SysfsRoot, f)
	}))
}
