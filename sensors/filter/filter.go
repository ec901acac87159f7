// Package filter selects a source's devices and sensors by regular
// expression, so a site can silence a broken sensor or a chip it does not
// care about from its configuration, without code.
package filter

import (
	"fmt"
	"regexp"
)

// Spec holds the expressions as written in the configuration. An empty
// expression selects nothing out: no include means everything is included,
// no exclude means nothing is excluded. Expressions are unanchored, as in
// Go's regexp; write ^...$ to match a whole name.
type Spec struct {
	DeviceInclude, DeviceExclude string
	SensorInclude, SensorExclude string
}

// Filter is a compiled Spec. The zero Filter keeps everything.
type Filter struct {
	deviceInclude, deviceExclude *regexp.Regexp
	sensorInclude, sensorExclude *regexp.Regexp
}

// New compiles s; the error names the expression that does not compile.
func New(s Spec) (Filter, error) {
	var f Filter
	for _, e := range []struct {
		name string
		expr string
		dst  **regexp.Regexp
	}{
		{"device_include", s.DeviceInclude, &f.deviceInclude},
		{"device_exclude", s.DeviceExclude, &f.deviceExclude},
		{"sensor_include", s.SensorInclude, &f.sensorInclude},
		{"sensor_exclude", s.SensorExclude, &f.sensorExclude},
	} {
		if e.expr == "" {
			continue
		}
		re, err := regexp.Compile(e.expr)
		if err != nil {
			return Filter{}, fmt.Errorf("%s %q: %w", e.name, e.expr, err)
		}
		*e.dst = re
	}
	return f, nil
}

// Device reports whether a device known by the given names (a chip's
// device-path id and its driver name, say) is kept: some name matches the
// include expression, if there is one, and no name matches the exclude
// expression. Empty names are ignored.
func (f Filter) Device(names ...string) bool {
	return keep(f.deviceInclude, f.deviceExclude, names)
}

// Sensor is Device for the sensors of a device (temp1, "Package id 0").
func (f Filter) Sensor(names ...string) bool {
	return keep(f.sensorInclude, f.sensorExclude, names)
}

// SelectsSensors reports whether sensor expressions were given, so a source
// whose devices have no sensors of their own can refuse them rather than
// ignore them silently.
func (f Filter) SelectsSensors() bool {
	return f.sensorInclude != nil || f.sensorExclude != nil
}

func keep(include, exclude *regexp.Regexp, names []string) bool {
	if include != nil && !anyMatch(include, names) {
		return false
	}
	return exclude == nil || !anyMatch(exclude, names)
}

func anyMatch(re *regexp.Regexp, names []string) bool {
	for _, n := range names {
		if n != "" && re.MatchString(n) {
			return true
		}
	}
	return false
}
