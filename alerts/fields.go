package alerts

import (
	"maps"
	"slices"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// kind is what a field holds, so that a rule can be checked against the
// field it watches when the configuration loads rather than never firing.
type kind uint8

const (
	numeric kind = iota
	boolean
	text
)

// measurementSchema is one measurement of the data model: the tags that
// identify its devices and the fields its sources write, as point/schema
// declares them (kind and unit).
type measurementSchema struct {
	tags   map[string]bool
	fields map[string]schema.Field
	// openFields marks measurements whose fields are not a closed set (a
	// workload's own metrics, a PDU's generic OIDs, a generic tank's mapped
	// fields); openTags, whose tags are not (an alert carries its series').
	openFields, openTags bool
	// sensor marks measurements sampled every tick, which the silent
	// condition watches when a rule names no measurement.
	sensor bool
}

// What the data model's prose says and its table cannot: open sets, and
// which measurements are sensors. Kinds and units are point/schema's.
var (
	openFieldSets = []string{schema.Iteration, schema.PDU, schema.Tank}
	openTagSets   = []string{schema.Alert}
	sensors       = []string{schema.CPU, schema.Mem, schema.Load, schema.Hwmon, schema.Cpufreq, schema.RAPL, schema.NVMe, schema.GPU, schema.PDU, schema.Tank}
)

// measurements is the data model's table, built once; it is never written
// after.
var measurements = schemas(schema.Measurements())

// schemas adds to the data model's table what rules need to know of each
// measurement: each field's declaration, and which sets are open.
func schemas(table map[string]schema.Measurement) map[string]measurementSchema {
	out := map[string]measurementSchema{}
	for name, m := range table {
		s := measurementSchema{tags: map[string]bool{}, fields: map[string]schema.Field{}}
		for _, t := range m.Tags {
			s.tags[t] = true
		}
		for _, f := range m.Fields {
			if d, ok := m.Field(f); ok {
				s.fields[f] = d
			}
		}
		out[name] = s
	}
	set := func(list []string, apply func(*measurementSchema)) {
		for _, m := range list {
			if s, ok := out[m]; ok {
				apply(&s)
				out[m] = s
			}
		}
	}
	set(openFieldSets, func(s *measurementSchema) { s.openFields = true })
	set(openTagSets, func(s *measurementSchema) { s.openTags = true })
	set(sensors, func(s *measurementSchema) { s.sensor = true })
	return out
}

// kindOf is what a rule can do with a field of the schema's kind.
func kindOf(k schema.Kind) kind {
	switch k {
	case schema.Bool:
		return boolean
	case schema.String:
		return text
	}
	return numeric
}

// hasTag reports whether the measurement's points can carry the tag key;
// the collector adds host to every point.
func (s measurementSchema) hasTag(key string) bool {
	return key == schema.TagHost || s.openTags || s.tags[key]
}

// field returns the kind of a field and whether any source writes it. A
// field outside an open measurement's table is taken for a number.
func (s measurementSchema) field(name string) (kind, bool) {
	if f, ok := s.fields[name]; ok {
		return kindOf(f.Kind), true
	}
	return numeric, s.openFields
}

// unit returns the unit of a field: its declaration's, else (an open
// measurement's own field) the one its name spells.
func (s measurementSchema) unit(name string) schema.Unit {
	if f, ok := s.fields[name]; ok {
		return f.Unit
	}
	return schema.UnitOf(name)
}

// fieldNames lists the measurement's fields, for an error that names the
// field a rule got wrong.
func (s measurementSchema) fieldNames() []string {
	return slices.Sorted(maps.Keys(s.fields))
}
