package workloads

// A workload's parameters are one Go struct, so that the workload reads
// them as typed fields: a misspelt name is a compile error, not a panic in
// a user's run. Each exported field is one --set key, described by tags:
//
//	type Params struct {
//		Device string   `param:"device" default:"0" help:"GPU index or cpu"`
//		N      int      `param:"n" default:"0" min:"0" max:"131072" help:"matrix order"`
//		Impl   string   `param:"impl" default:"auto" choices:"auto,cublas,builtin" help:"GPU implementation"`
//		Size   ByteSize `param:"size" default:"64MiB" min:"64KiB" max:"1TiB" help:"each array's size"`
//	}
//
//   - param is the key users type after --set; every exported field has one.
//   - default is parsed like a user's value; without it the default is the
//     field's zero value. A struct whose defaults depend on the machine or
//     on another package's constants implements Defaulter.
//   - min and max bound numbers, durations and sizes, written like values
//     of the field's type (64KiB, 1s).
//   - choices restricts a string to a comma-separated list.
//   - help is the line `heatsink workloads` prints.
//
// The field's Go type is the parameter's type: int and uint kinds (int),
// float64 (float), string, bool, time.Duration (duration) and ByteSize
// (bytes: 1048576, 64MiB, 1GB).
//
// Decoding is strict, like a configuration section: an unknown key, a value
// of the wrong type, one out of range or not among the choices is an error
// naming the key, the value and what is allowed. Every source of values
// (--set, --tuned's best.yaml, the tuner's evaluations) goes through one
// resolver, Resolve, with one duplicate policy; see there.

import (
	"fmt"
	"math"
	"reflect"
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

// ByteSize is a size in bytes; as a parameter it takes units (64MiB, 1GB).
type ByteSize int64

// ParamSpec describes one parameter, as the tags of its field give it.
type ParamSpec struct {
	Name    string
	Type    ParamType
	Default string // the default value, as --set would take it back
	Help    string
	// Min and Max bound numeric parameters when non-nil (seconds for a
	// duration, bytes for a size).
	Min, Max *float64
	// Choices restricts a string parameter.
	Choices []string
}

// Range is the allowed interval, as `heatsink workloads` and the decoder's
// errors write it: "[1, 64]", ">= 0", "<= 1TiB", or "" when unbounded.
func (p ParamSpec) Range() string {
	f := func(v *float64) string { return p.bound(*v) }
	switch {
	case p.Min == nil && p.Max == nil:
		return ""
	case p.Max == nil:
		return ">= " + f(p.Min)
	case p.Min == nil:
		return "<= " + f(p.Max)
	}
	return "[" + f(p.Min) + ", " + f(p.Max) + "]"
}

// bound writes a bound in the parameter's own units.
func (p ParamSpec) bound(x float64) string {
	switch p.Type {
	case Bytes:
		return humanBytes(x)
	case Duration:
		return time.Duration(x * float64(time.Second)).String()
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// humanBytes writes a size the way --set accepts it back (64KiB, 1TiB).
func humanBytes(v float64) string {
	for _, u := range []struct {
		name string
		n    float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.n && v/u.n == float64(int64(v/u.n)) {
			return fmt.Sprintf("%d%s", int64(v/u.n), u.name)
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Defaulter is implemented (on the pointer) by a parameter struct whose
// defaults cannot be literal tags: GOMAXPROCS, or a Config's defaults kept
// in one place. Decode calls it after the tags' defaults and before the
// values given, and checks its results like the values given.
type Defaulter interface {
	SetDefaults()
}

// paramField is one parameter of a struct type.
type paramField struct {
	spec  ParamSpec
	index int
	kind  ParamType
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	byteSizeType = reflect.TypeOf(ByteSize(0))
)

// fieldsOf reads the parameter tags of struct type t; a malformed tag is an
// error naming the field, found when the workload registers (at init).
func fieldsOf(t reflect.Type) ([]paramField, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("parameters %v: want a struct", t)
	}
	var out []paramField
	seen := map[string]string{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name := sf.Tag.Get("param")
		if name == "" {
			return nil, fmt.Errorf("parameters %v: field %s has no param tag", t, sf.Name)
		}
		if prev, dup := seen[name]; dup {
			return nil, fmt.Errorf("parameters %v: fields %s and %s are both %q", t, prev, sf.Name, name)
		}
		seen[name] = sf.Name
		f := paramField{index: i, spec: ParamSpec{Name: name, Help: sf.Tag.Get("help")}}
		switch {
		case sf.Type == durationType:
			f.kind = Duration
		case sf.Type == byteSizeType:
			f.kind = Bytes
		default:
			switch sf.Type.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
				reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				f.kind = Int
			case reflect.Float32, reflect.Float64:
				f.kind = Float
			case reflect.String:
				f.kind = String
			case reflect.Bool:
				f.kind = Bool
			default:
				return nil, fmt.Errorf("parameters %v: field %s: type %v is not a parameter type", t, sf.Name, sf.Type)
			}
		}
		f.spec.Type = f.kind
		for _, b := range []struct {
			tag string
			to  **float64
		}{{"min", &f.spec.Min}, {"max", &f.spec.Max}} {
			raw, ok := sf.Tag.Lookup(b.tag)
			if !ok {
				continue
			}
			v := reflect.New(sf.Type).Elem()
			if err := parseInto(v, f.kind, raw); err != nil || f.kind == String || f.kind == Bool {
				return nil, fmt.Errorf("parameters %v: field %s: %s %q is not a bound of a %s", t, sf.Name, b.tag, raw, f.kind)
			}
			x := numeric(v, f.kind)
			*b.to = &x
		}
		if c, ok := sf.Tag.Lookup("choices"); ok {
			if f.kind != String {
				return nil, fmt.Errorf("parameters %v: field %s: choices apply to strings", t, sf.Name)
			}
			f.spec.Choices = strings.Split(c, ",")
		}
		out = append(out, f)
	}
	return out, nil
}

// parseInto sets v from raw; the error says what raw should have been.
func parseInto(v reflect.Value, kind ParamType, raw string) error {
	switch kind {
	case Int:
		if v.CanUint() {
			n, err := strconv.ParseUint(raw, 0, 64)
			if err != nil || v.OverflowUint(n) {
				return fmt.Errorf("not a non-negative integer")
			}
			v.SetUint(n)
			return nil
		}
		n, err := strconv.ParseInt(raw, 0, 64)
		if err != nil || v.OverflowInt(n) {
			return fmt.Errorf("not an integer")
		}
		v.SetInt(n)
	case Float:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("not a number")
		}
		v.SetFloat(f)
	case Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("not true or false")
		}
		v.SetBool(b)
	case Duration:
		d, err := time.ParseDuration(raw)
		if err != nil {
			return fmt.Errorf("not a duration (e.g. 30s)")
		}
		v.SetInt(int64(d))
	case Bytes:
		n, err := ParseBytes(raw)
		if err != nil {
			return err
		}
		v.SetInt(n)
	case String:
		v.SetString(raw)
	}
	return nil
}

// numeric is a number, duration or size as a float64, for the bounds.
func numeric(v reflect.Value, kind ParamType) float64 {
	switch {
	case kind == Duration:
		return time.Duration(v.Int()).Seconds()
	case kind == Float:
		return v.Float()
	case v.CanUint():
		return float64(v.Uint())
	}
	return float64(v.Int())
}

// format writes v as --set takes it back; sizes in bytes, so that run.json
// records what the workload used.
func format(v reflect.Value, kind ParamType) string {
	switch kind {
	case Duration:
		return time.Duration(v.Int()).String()
	case Float:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case Bool:
		return strconv.FormatBool(v.Bool())
	case String:
		return v.String()
	}
	if v.CanUint() {
		return strconv.FormatUint(v.Uint(), 10)
	}
	return strconv.FormatInt(v.Int(), 10)
}

// check is the range or choices test of one value, raw as the user gave it.
func (f paramField) check(v reflect.Value, raw string) error {
	s := f.spec
	if len(s.Choices) > 0 {
		for _, c := range s.Choices {
			if v.String() == c {
				return nil
			}
		}
		return fmt.Errorf("parameter %s=%q: not one of %s", s.Name, raw, strings.Join(s.Choices, ", "))
	}
	if f.kind == String || f.kind == Bool {
		return nil
	}
	x := numeric(v, f.kind)
	switch {
	case s.Min != nil && x < *s.Min:
		return fmt.Errorf("parameter %s=%q: below the minimum %s (allowed %s)", s.Name, raw, s.bound(*s.Min), s.Range())
	case s.Max != nil && x > *s.Max:
		return fmt.Errorf("parameter %s=%q: above the maximum %s (allowed %s)", s.Name, raw, s.bound(*s.Max), s.Range())
	}
	return nil
}

// decode fills the struct p points to: the tags' defaults, the Defaulter's,
// then set, each checked. Errors name the key.
func decode(p reflect.Value, set map[string]string) error {
	fields, err := fieldsOf(p.Type())
	if err != nil {
		return err
	}
	byName := make(map[string]paramField, len(fields))
	for _, f := range fields {
		byName[f.spec.Name] = f
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := byName[k]; !ok {
			names := make([]string, 0, len(fields))
			for _, f := range fields {
				names = append(names, f.spec.Name)
			}
			sort.Strings(names)
			return fmt.Errorf("unknown parameter %q (known: %s)", k, strings.Join(names, ", "))
		}
	}
	for _, f := range fields {
		if raw, ok := p.Type().Field(f.index).Tag.Lookup("default"); ok {
			if err := parseInto(p.Field(f.index), f.kind, raw); err != nil {
				return fmt.Errorf("parameter %s: default %q: %w", f.spec.Name, raw, err)
			}
		}
	}
	if d, ok := p.Addr().Interface().(Defaulter); ok {
		d.SetDefaults()
	}
	for _, f := range fields {
		v := p.Field(f.index)
		raw, given := set[f.spec.Name]
		if given {
			if err := parseInto(v, f.kind, raw); err != nil {
				return fmt.Errorf("parameter %s=%q: %w", f.spec.Name, raw, err)
			}
		} else {
			raw = format(v, f.kind)
		}
		if err := f.check(v, raw); err != nil {
			return err
		}
	}
	return nil
}

// Decode returns the parameter struct P from set: defaults for the keys not
// given, strict about the rest (the tags are described at the top of
// params.go).
func Decode[P any](set map[string]string) (P, error) {
	var p P
	err := decode(reflect.ValueOf(&p).Elem(), set)
	return p, err
}

// Specs describes the parameters of struct P, defaults filled in as
// decoding an empty set gives them.
func Specs[P any]() ([]ParamSpec, error) {
	var p P
	v := reflect.ValueOf(&p).Elem()
	fields, err := fieldsOf(v.Type())
	if err != nil {
		return nil, err
	}
	if err := decode(v, nil); err != nil {
		return nil, fmt.Errorf("parameters %T: the defaults: %w", p, err)
	}
	out := make([]ParamSpec, len(fields))
	for i, f := range fields {
		out[i] = f.spec
		if f.kind == Bytes {
			out[i].Default = humanBytes(float64(v.Field(f.index).Int()))
		} else {
			out[i].Default = format(v.Field(f.index), f.kind)
		}
	}
	return out, nil
}

// Values are a workload's decoded parameters: its struct, and the values
// as strings for run.json. Only the workload's own Typed.Of reads them.
type Values struct {
	p any
	m map[string]string
}

// Map returns the values as strings, for run.json.
func (v Values) Map() map[string]string {
	out := make(map[string]string, len(v.m))
	for k, x := range v.m {
		out[k] = x
	}
	return out
}

// Typed gives a workload whose parameters are the struct P the Workload
// interface's Params and Decode; embed it, and read the parameters in Start
// with Of:
//
//	type Workload struct{ workloads.Typed[Params] }
//
//	func (w Workload) Start(ctx context.Context, v workloads.Values) (workloads.Job, error) {
//		p, err := w.Of(v)
//		...
type Typed[P any] struct{}

// Params implements Workload. A malformed tag panics: Register checks every
// workload at init, so no user's command gets that far.
func (Typed[P]) Params() []ParamSpec {
	s, err := Specs[P]()
	if err != nil {
		panic(err)
	}
	return s
}

// Decode implements Workload.
func (Typed[P]) Decode(set map[string]string) (Values, error) {
	var p P
	v := reflect.ValueOf(&p).Elem()
	if err := decode(v, set); err != nil {
		return Values{}, err
	}
	fields, _ := fieldsOf(v.Type()) // decode read them without error
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		m[f.spec.Name] = format(v.Field(f.index), f.kind)
	}
	return Values{p: p, m: m}, nil
}

// Of returns the parameters Decode gave; values decoded for another
// workload are an error rather than a zero struct.
func (Typed[P]) Of(v Values) (P, error) {
	p, ok := v.p.(P)
	if !ok {
		return p, fmt.Errorf("parameters are %T, want %T", v.p, p)
	}
	return p, nil
}

// With returns p as Values, checked like a user's: for callers (tests,
// `heatsink ri train`) that build the struct in Go.
func (t Typed[P]) With(p P) (Values, error) {
	v := reflect.ValueOf(&p).Elem()
	fields, err := fieldsOf(v.Type())
	if err != nil {
		return Values{}, err
	}
	set := make(map[string]string, len(fields))
	for _, f := range fields {
		set[f.spec.Name] = format(v.Field(f.index), f.kind)
	}
	return t.Decode(set)
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
