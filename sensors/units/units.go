// Package units converts a reading from the unit a device reports it in to
// the unit a heatsink field name carries in its suffix (current_a, power_w,
// coolant_flow_lpm), so sources configured in YAML for arbitrary PDUs, tanks
// and CDUs write fields that mean what their names say.
package units

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// unit is a linear map into its dimension's base unit: base = v*factor + offset.
type unit struct {
	dim            string
	factor, offset float64
}

// byName holds the units a configuration may name, as device manuals write them.
var byName = map[string]unit{
	"A": {"current", 1, 0}, "mA": {"current", 1e-3, 0},
	"W": {"power", 1, 0}, "kW": {"power", 1e3, 0}, "MW": {"power", 1e6, 0},
	"J": {"energy", 1, 0}, "kJ": {"energy", 1e3, 0}, "MJ": {"energy", 1e6, 0},
	"Wh": {"energy", 3600, 0}, "kWh": {"energy", 3.6e6, 0}, "MWh": {"energy", 3.6e9, 0},
	"V": {"voltage", 1, 0}, "mV": {"voltage", 1e-3, 0},
	"C": {"temperature", 1, 0}, "K": {"temperature", 1, -273.15},
	"F":     {"temperature", 5.0 / 9, -32 * 5.0 / 9},
	"L/min": {"flow", 1, 0}, "m3/h": {"flow", 1000.0 / 60, 0}, "L/h": {"flow", 1.0 / 60, 0},
	"gpm": {"flow", 3.785411784, 0}, // US gallons per minute
	"rpm": {"rotation", 1, 0},
	"%":   {"ratio", 1, 0}, "ratio": {"ratio", 100, 0},
	"s": {"time", 1, 0}, "ms": {"time", 1e-3, 0}, "min": {"time", 60, 0}, "h": {"time", 3600, 0},
	"Pa": {"pressure", 1, 0}, "kPa": {"pressure", 1e3, 0}, "bar": {"pressure", 1e5, 0},
	"Hz": {"frequency", 1, 0}, "MHz": {"frequency", 1e6, 0},
	"bytes": {"bytes", 1, 0},
}

// aliases spell the same units the way YAML files often do.
var aliases = map[string]string{
	"amp": "A", "amps": "A", "watt": "W", "watts": "W", "°C": "C", "degC": "C",
	"°F": "F", "degF": "F", "lpm": "L/min", "l/min": "L/min", "m³/h": "m3/h", "m3h": "m3/h",
	"pct": "%", "percent": "%", "kwh": "kWh", "wh": "Wh", "kw": "kW",
}

// suffixes maps a field-name suffix to the unit it stands for (docs/data-model.md).
var suffixes = map[string]string{
	"_a": "A", "_w": "W", "_kw": "kW", "_j": "J", "_v": "V", "_c": "C",
	"_lpm": "L/min", "_m3h": "m3/h", "_rpm": "rpm", "_pct": "%", "_s": "s",
	"_mhz": "MHz", "_hz": "Hz", "_kpa": "kPa", "_bar": "bar", "_bytes": "bytes",
}

func lookup(name string) (unit, bool) {
	if a, ok := aliases[name]; ok {
		name = a
	}
	u, ok := byName[name]
	return u, ok
}

// FieldUnit returns the unit a field name's suffix declares, e.g. "W" for
// "power_w"; ok is false when the name carries no known unit suffix.
func FieldUnit(field string) (string, bool) {
	best := ""
	for s := range suffixes {
		if strings.HasSuffix(field, s) && len(s) > len(best) && len(field) > len(s) {
			best = s
		}
	}
	if best == "" {
		return "", false
	}
	return suffixes[best], true
}

// Known lists the unit names a configuration may use, for error messages.
func Known() string {
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Converter returns a function taking a raw reading, multiplied by scale and
// expressed in unit from, to the unit of field's suffix. An empty from means
// the scaled reading is already in the field's unit (and the field may then
// be dimensionless, like mpue). It fails when from is unknown or measures a
// different quantity than the field.
func Converter(from, field string, scale float64) (func(float64) float64, error) {
	if scale == 0 {
		scale = 1
	}
	if from == "" {
		return func(v float64) float64 { return v * scale }, nil
	}
	src, ok := lookup(from)
	if !ok {
		return nil, fmt.Errorf("unknown unit %q (known: %s)", from, Known())
	}
	toName, ok := FieldUnit(field)
	if !ok {
		return nil, fmt.Errorf("field %q has no unit suffix for %s to convert to (e.g. _a, _w, _j, _c, _lpm)", field, from)
	}
	dst := byName[toName]
	if src.dim != dst.dim {
		return nil, fmt.Errorf("unit %s is a %s but field %q holds a %s (%s)", from, src.dim, field, dst.dim, toName)
	}
	// base = v*scale*src.factor + src.offset; out = (base - dst.offset) / dst.factor
	k := scale * src.factor / dst.factor
	off := (src.offset - dst.offset) / dst.factor
	// Decimal scales (tenths of A, hundredths of kW) are not exact in
	// binary: 87 x 0.1 is 8.700000000000001, 87 / 10 is 8.7. Divide or
	// multiply by the whole number k stands for when there is one.
	if d := math.Round(1 / k); k < 1 && d > 1 && math.Abs(1/k-d) < 1e-9*d {
		return func(v float64) float64 { return v/d + off }, nil
	}
	if m := math.Round(k); k >= 1 && math.Abs(k-m) < 1e-9*m {
		k = m
	}
	return func(v float64) float64 { return v*k + off }, nil
}
