package workloads

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ParamType is the type of a workload parameter.
type ParamType int

// Parameter types.
const (
	Int ParamType = iota
	Float
	String
	Bool
	Duration
	Bytes // a size: 1048576, 64MiB, 1GB
)

func (t ParamType) String() string {
	return [...]string{"int", "float", "string", "bool", "duration", "bytes"}[t]
}

// ParamSpec describes one --set key=value parameter.
type ParamSpec struct {
	Name    string
	Type    ParamType
	Default string // parsed like a user's value; "" means required
	Help    string
	// Min and Max bound numeric parameters when non-nil.
	Min, Max *float64
	// Choices restricts a string parameter.
	Choices []string
}

// Bound returns a pointer to v, for ParamSpec.Min and Max.
func Bound(v float64) *float64 { return &v }

// Values are parsed, validated parameter values.
type Values struct {
	m map[string]any
}

// ParseSet splits --set key=value arguments; a missing '=', an empty key or
// a key given twice is an error naming the argument.
func ParseSet(args []string) (map[string]string, error) {
	out := make(map[string]string, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok:
			return nil, fmt.Errorf("--set %q: want key=value", a)
		case k == "":
			return nil, fmt.Errorf("--set %q: empty key", a)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("--set %q: %s given twice", a, k)
		}
		out[k] = v
	}
	return out, nil
}

// ParseValues checks --set values against specs: unknown keys, wrong types,
// out-of-range values and missing required values are errors naming the key.
// Defaults fill the rest.
func ParseValues(specs []ParamSpec, set map[string]string) (Values, error) {
	v := Values{m: map[string]any{}}
	known := map[string]ParamSpec{}
	for _, s := range specs {
		known[s.Name] = s
	}
	for k := range set {
		if _, ok := known[k]; !ok {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return v, fmt.Errorf("unknown parameter %q (known: %s)", k, strings.Join(names, ", "))
		}
	}
	for _, s := range specs {
		raw, given := set[s.Name]
		if !given {
			raw = s.Default
			if raw == "" && s.Type != String {
				return v, fmt.Errorf("parameter %s is required", s.Name)
			}
		}
		x, err := parseValue(s, raw)
		if err != nil {
			return v, fmt.Errorf("parameter %s=%q: %w", s.Name, raw, err)
		}
		v.m[s.Name] = x
	}
	return v, nil
}

func parseValue(s ParamSpec, raw string) (any, error) {
	var num float64
	var out any
	switch s.Type {
	case Int:
		n, err := strconv.ParseInt(raw, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("not an integer")
		}
		num, out = float64(n), n
	case Float:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, fmt.Errorf("not a number")
		}
		num, out = f, f
	case Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("not true or false")
		}
		return b, nil
	case Duration:
		d, err := time.ParseDuration(raw)
		if err != nil {
			return nil, fmt.Errorf("not a duration (e.g. 30s)")
		}
		num, out = d.Seconds(), d
	case Bytes:
		n, err := ParseBytes(raw)
		if err != nil {
			return nil, err
		}
		num, out = float64(n), n
	case String:
		if len(s.Choices) > 0 {
			for _, c := range s.Choices {
				if raw == c {
					return raw, nil
				}
			}
			return nil, fmt.Errorf("not one of %s", strings.Join(s.Choices, ", "))
		}
		return raw, nil
	}
	if s.Min != nil && num < *s.Min {
		return nil, fmt.Errorf("below the minimum %g", *s.Min)
	}
	if s.Max != nil && num > *s.Max {
		return nil, fmt.Errorf("above the maximum %g", *s.Max)
	}
	return out, nil
}

// ParseBytes parses a size with an optional unit (B, KB, MB, GB, KiB, MiB, GiB, TiB).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("not a size (e.g. 64MiB)")
	}
	mult := map[string]float64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("unknown size unit %q", unit)
	}
	if b := f * mult; b >= math.MaxInt64 {
		return 0, fmt.Errorf("size %s is too large", t)
	}
	return int64(f * mult), nil
}

// Int returns an Int parameter.
func (v Values) Int(name string) int64 { return v.m[name].(int64) }

// Float returns a Float parameter.
func (v Values) Float(name string) float64 { return v.m[name].(float64) }

// String returns a String parameter.
func (v Values) String(name string) string { return v.m[name].(string) }

// Bool returns a Bool parameter.
func (v Values) Bool(name string) bool { return v.m[name].(bool) }

// Duration returns a Duration parameter.
func (v Values) Duration(name string) time.Duration { return v.m[name].(time.Duration) }

// Bytes returns a Bytes parameter.
func (v Values) Bytes(name string) int64 { return v.m[name].(int64) }

// Map returns the values as strings, for run.json.
func (v Values) Map() map[string]string {
	out := map[string]string{}
	for k, x := range v.m {
		out[k] = fmt.Sprint(x)
	}
	return out
}
