package filter

import (
	"fmt"
	"regexp"

	"github.com/heatsink-hpc/heatsink/registry"
	"github.com/heatsink-hpc/heatsink/registry/keypath"
)

// Section is the configuration section of a node source (sources.hwmon...):
// a switch, and the expressions that filter what the source reports.
type Section struct {
	Disabled      bool   `yaml:"disabled"`
	DeviceInclude string `yaml:"device_include"`
	DeviceExclude string `yaml:"device_exclude"`
	SensorInclude string `yaml:"sensor_include"`
	SensorExclude string `yaml:"sensor_exclude"`
}

// Spec returns the section's expressions.
func (s *Section) Spec() Spec {
	return Spec{DeviceInclude: s.DeviceInclude, DeviceExclude: s.DeviceExclude,
		SensorInclude: s.SensorInclude, SensorExclude: s.SensorExclude}
}

// Disable switches the source off (the launch host of a Slurm run records
// only the facility devices; the nodes' agents record the rest).
func (s *Section) Disable() { s.Disabled = true }

// validate checks every expression, then, for a source whose devices have
// no sensors of their own (cpuN, zones, mem/load), that none selects
// sensors: it would be silently ignored.
func (s *Section) validate(name string, sensors bool) error {
	exprs := []struct{ key, re string }{
		{"device_include", s.DeviceInclude}, {"device_exclude", s.DeviceExclude},
		{"sensor_include", s.SensorInclude}, {"sensor_exclude", s.SensorExclude},
	}
	for _, e := range exprs {
		if _, err := regexp.Compile(e.re); err != nil {
			return keypath.New(fmt.Sprintf("bad regular expression: %v", err), e.key)
		}
	}
	for _, e := range exprs[2:] {
		if !sensors && e.re != "" {
			return keypath.New(name+" has no sensors to filter; use device_include or device_exclude", e.key)
		}
	}
	return nil
}

// Kind is the registry entry of a node source configured by a Section:
// build makes the source from the node's roots and the compiled filter.
// sensors says whether the source's devices have sensors a sensor
// expression could select.
func Kind(name string, order int, sensors bool, build func(registry.Env, Filter) registry.Source) registry.SourceKind {
	return registry.SourceKind{
		Name:     name,
		Order:    order,
		New:      func() any { return &Section{} },
		Validate: func(sec any) error { return sec.(*Section).validate(name, sensors) },
		Build: func(env registry.Env, sec any) ([]registry.Source, error) {
			s := sec.(*Section)
			if s.Disabled {
				return nil, nil
			}
			f, err := New(s.Spec())
			if err != nil {
				return nil, fmt.Errorf("sources.%s: %w", name, err)
			}
			return []registry.Source{build(env, f)}, nil
		},
	}
}
