package hold

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Target is what --hold names: a component and the set point it is held at
// or under. With several series of the component (four GPUs' cores), the
// hottest is held.
type Target struct {
	// Component is a component kind as the report names them: gpu_core,
	// gpu_mem, cpu_package or coolant.
	Component string `json:"component"`
	// Device narrows it to one GPU index, CPU chip or tank ("" for all).
	Device string  `json:"device,omitempty"`
	SetC   float64 `json:"set_c"`
}

// components are the kinds a hold can name, with the readings behind each
// and, for a GPU, the field that says how busy the device is.
var components = map[string]struct {
	measurement, field, deviceTag string
	class                         string // hwmon class to match, "" for any
	utilField                     string // "" where none
}{
	"gpu_core":    {schema.GPU, "temp_c", schema.TagGPU, "", schema.FieldUtilPct},
	"gpu_mem":     {schema.GPU, "mem_temp_c", schema.TagGPU, "", schema.FieldUtilPct},
	"cpu_package": {schema.Hwmon, "temp_c", schema.TagChip, "cpu_package", ""},
	"coolant":     {schema.Tank, schema.FieldCoolantTempC, schema.TagTank, "", ""},
}

// ParseTarget reads "gpu_core<=65", "gpu_mem:1<=80", "cpu_package<=85",
// "coolant<=45": a component, optionally ":DEVICE", then <= and the set
// point in °C.
func ParseTarget(s string) (Target, error) {
	lhs, rhs, ok := strings.Cut(strings.ReplaceAll(s, " ", ""), "<=")
	if !ok {
		return Target{}, fmt.Errorf("--hold %q: want COMPONENT<=SET_C, as gpu_core<=65 (the component is held at or under the set point)", s)
	}
	comp, dev, _ := strings.Cut(lhs, ":")
	if _, ok := components[comp]; !ok {
		return Target{}, fmt.Errorf("--hold %q: unknown component %q (known: coolant, cpu_package, gpu_core, gpu_mem)", s, comp)
	}
	v, err := strconv.ParseFloat(rhs, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < -50 || v > 200 {
		return Target{}, fmt.Errorf("--hold %q: set point %q is not a temperature in °C from -50 to 200", s, rhs)
	}
	return Target{Component: comp, Device: dev, SetC: v}, nil
}

// String writes t as ParseTarget reads it.
func (t Target) String() string {
	c := t.Component
	if t.Device != "" {
		c += ":" + t.Device
	}
	return c + "<=" + strconv.FormatFloat(t.SetC, 'f', -1, 64)
}

// Reading returns the component's reading in p, if p carries one.
func (t Target) Reading(p *point.Point) (float64, bool) {
	c := components[t.Component]
	if p.Measurement != c.measurement {
		return 0, false
	}
	if c.class != "" && p.Tag(schema.TagClass) != c.class {
		return 0, false
	}
	if t.Device != "" && p.Tag(c.deviceTag) != t.Device {
		return 0, false
	}
	v, ok := p.Float(c.field)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// Utilisation returns the utilisation in percent of the device behind p,
// a point Reading accepted, where the component has one (a GPU's NVML
// util_pct, where the card reports it).
func (t Target) Utilisation(p *point.Point) (float64, bool) {
	f := components[t.Component].utilField
	if f == "" {
		return 0, false
	}
	v, ok := p.Float(f)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}
