package analysis

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// DropNonFinite removes every result that is not a finite number (NaN or
// ±Inf from an absurd reading, such as one of 1e200 °C) from v, a *Report
// or *Comparison: a pointer result becomes absent (JSON null) with the
// reason in its NotComputed beside it (or in the returned notes where it
// has none), and a plain number becomes 0 with a note. It returns what it
// dropped, for the report's notes. JSON has no form for NaN, and text
// would print it as a number.
func DropNonFinite(v any) []string {
	var notes []string
	var walk func(r reflect.Value, path string)
	walk = func(r reflect.Value, path string) {
		switch r.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !r.IsNil() {
				walk(r.Elem(), path)
			}
		case reflect.Slice, reflect.Array:
			// Only elements that can hold a result are walked: a plain
			// number in a slice is data, not a result, and a long series
			// would cost a path string an element.
			switch r.Type().Elem().Kind() {
			case reflect.Struct, reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Array:
			default:
				return
			}
			for i := range r.Len() {
				walk(r.Index(i), path+"["+strconv.Itoa(i)+"]")
			}
		case reflect.Map:
			// The extensions' results (Report.Analyses): a map's values
			// cannot be set, so only what they point to is cleaned.
			iter := r.MapRange()
			for iter.Next() {
				walk(iter.Value(), path+"."+iter.Key().String())
			}
		case reflect.Struct:
			t := r.Type()
			for i := range r.NumField() {
				f, sf := r.Field(i), t.Field(i)
				if !sf.IsExported() || sf.Tag.Get("json") == "-" {
					continue // not part of the report (the readings behind a component)
				}
				name := jsonName(sf)
				where := strings.TrimPrefix(path+"."+name, ".")
				switch {
				case sf.Type == reflect.TypeFor[*float64]():
					if f.IsNil() || finite(*f.Interface().(*float64)) {
						continue
					}
					why := "not a finite number: a computation overflowed, from a reading far outside any physical range"
					f.Set(reflect.Zero(sf.Type))
					if !noteBeside(r, name, why) {
						notes = append(notes, where+": "+why)
					}
				case sf.Type.Kind() == reflect.Float64:
					if x := f.Float(); !finite(x) {
						f.SetFloat(0)
						notes = append(notes, fmt.Sprintf("%s: not a finite number (%s), shown as 0", where, map[bool]string{true: "not a number", false: "infinite"}[math.IsNaN(x)]))
					}
				default:
					walk(f, where)
				}
			}
		}
	}
	walk(reflect.ValueOf(v), "")
	return notes
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// noteBeside records why in the NotComputed of the struct r (a map by
// field name, or a string), where it has one.
func noteBeside(r reflect.Value, name, why string) bool {
	nc := r.FieldByName("NotComputed")
	switch {
	case !nc.IsValid() || !nc.CanSet():
		return false
	case nc.Type() == reflect.TypeFor[map[string]string]():
		if nc.IsNil() {
			nc.Set(reflect.MakeMap(nc.Type()))
		}
		nc.SetMapIndex(reflect.ValueOf(name), reflect.ValueOf(why))
		return true
	case nc.Kind() == reflect.String:
		if nc.String() == "" {
			nc.SetString(name + ": " + why)
		} else {
			nc.SetString(nc.String() + "; " + name + ": " + why)
		}
		return true
	}
	return false
}

func jsonName(sf reflect.StructField) string {
	if tag, _, _ := strings.Cut(sf.Tag.Get("json"), ","); tag != "" && tag != "-" {
		return tag
	}
	return sf.Name
}
