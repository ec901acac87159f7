package configs

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Ranges every option of its kind must fall in, whatever section it is in:
// a section's own Validate checks what is particular to it, and these catch
// what no section thought of (.nan and .inf parse as floats; a duration of
// 2,000,000 h parses too).
const (
	// MaxDuration bounds every duration option: a month.
	MaxDuration = 31 * 24 * time.Hour
	// MaxInterval bounds the sampling interval.
	MaxInterval = time.Hour
	// minTempC and maxTempC bound every temperature option (a key ending
	// in _c): from absolute zero to well past any part's limit.
	minTempC, maxTempC = -273.15, 1000
)

// checkRanges walks the configuration and returns a ValueError naming the
// first option out of its range.
func checkRanges(c *Config) error {
	if c.Interval > MaxInterval {
		return &ValueError{Path: []string{"interval"}, Msg: fmt.Sprintf("%v is above the %v maximum", c.Interval, MaxInterval)}
	}
	for _, r := range c.Host {
		if unicode.IsControl(r) {
			return &ValueError{Path: []string{"host"}, Msg: fmt.Sprintf("%q holds a control character: it could not be written as a tag", c.Host)}
		}
	}
	if err := walkRanges(reflect.ValueOf(c).Elem(), nil); err != nil {
		return err
	}
	// The registered sections (sources, sinks, alerts, runner) are held
	// beside the core, by their key path.
	for _, key := range slices.Sorted(maps.Keys(c.sections)) {
		if err := walkRanges(reflect.ValueOf(c.sections[key]), strings.Split(key, ".")); err != nil {
			return err
		}
	}
	return nil
}

var durationType = reflect.TypeFor[time.Duration]()

func walkRanges(v reflect.Value, path []string) error {
	switch {
	case v.Type() == durationType:
		if d := time.Duration(v.Int()); d < 0 || d > MaxDuration {
			return &ValueError{Path: path, Msg: fmt.Sprintf("%v is outside 0..%v", d, MaxDuration)}
		}
		return nil
	case v.Kind() == reflect.Float64 || v.Kind() == reflect.Float32:
		x := v.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return &ValueError{Path: path, Msg: fmt.Sprintf("%v is not a finite number", x)}
		}
		if len(path) > 0 && strings.HasSuffix(path[len(path)-1], "_c") && (x < minTempC || x > maxTempC) {
			return &ValueError{Path: path, Msg: fmt.Sprintf("%g °C is outside %g..%g °C", x, minTempC, float64(maxTempC))}
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return walkRanges(v.Elem(), path)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
			if name == "-" {
				continue
			}
			p := path
			if !strings.Contains(opts, "inline") {
				if name == "" {
					name = strings.ToLower(sf.Name)
				}
				p = append(path[:len(path):len(path)], name)
			}
			if err := walkRanges(v.Field(i), p); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := walkRanges(v.Index(i), append(path[:len(path):len(path)], strconv.Itoa(i))); err != nil {
				return err
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if err := walkRanges(it.Value(), append(path[:len(path):len(path)], fmt.Sprint(it.Key()))); err != nil {
				return err
			}
		}
	}
	return nil
}
