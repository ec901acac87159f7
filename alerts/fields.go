package alerts

import "github.com/heatsink-hpc/heatsink/point/schema"

// kind is what a field holds, so that a rule can be checked against the
// field it watches when the configuration loads rather than never firing.
type kind uint8

const (
	numeric kind = iota
	boolean
	text
)

// measurementSchema is one measurement of the data model: the tags that
// identify its devices and the fields its sources write.
type measurementSchema struct {
	tags   map[string]bool
	fields map[string]kind
	// openFields marks measurements whose fields are not a closed set (a
	// workload's own metrics, a PDU's generic OIDs, a generic tank's mapped
	// fields); openTags, whose tags are not (an alert carries its series').
	openFields, openTags bool
	// sensor marks measurements sampled every tick, which the silent
	// condition watches when a rule names no measurement.
	sensor bool
}

// What the data model's prose says and its table cannot: field kinds other
// than numbers, open sets, and which measurements are sensors.
var (
	booleanFields = map[string][]string{
		schema.GPU:             {schema.FieldThrottleThermal, schema.FieldThrottlePower},
		schema.PDU:             {schema.FieldPowerDerived},
		schema.Tank:            {schema.FieldPump1On, schema.FieldPump2On, schema.FieldDemo, schema.FieldFactory, schema.FieldTest, schema.FieldMaintenance},
		schema.CollectorSource: {schema.FieldOK},
		schema.InfluxSink:      {schema.FieldOK},
	}
	textFields = map[string][]string{
		schema.Tank:  {schema.FieldMode, schema.FieldErrorsText, schema.FieldWarningsText},
		schema.Event: {schema.FieldMessage},
		schema.Alert: {schema.FieldState, schema.FieldMessage},
	}
	openFieldSets = []string{schema.Iteration, schema.PDU, schema.Tank}
	openTagSets   = []string{schema.Alert}
	sensors       = []string{schema.CPU, schema.Mem, schema.Load, schema.Hwmon, schema.Cpufreq, schema.RAPL, schema.NVMe, schema.GPU, schema.PDU, schema.Tank}
)

// measurements is the data model's table, built once; it is never written
// after.
var measurements = schemas(schema.Measurements())

// schemas adds to the data model's table what rules need to know of each
// measurement: the kind of each field, and which sets are open.
func schemas(table map[string]schema.Measurement) map[string]measurementSchema {
	out := map[string]measurementSchema{}
	for name, m := range table {
		s := measurementSchema{tags: map[string]bool{}, fields: map[string]kind{}}
		for _, t := range m.Tags {
			s.tags[t] = true
		}
		for _, f := range m.Fields {
			s.fields[f] = numeric
		}
		out[name] = s
	}
	for m, fs := range booleanFields {
		for _, f := range fs {
			if s, ok := out[m]; ok {
				s.fields[f] = boolean
			}
		}
	}
	for m, fs := range textFields {
		for _, f := range fs {
			if s, ok := out[m]; ok {
				s.fields[f] = text
			}
		}
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

// hasTag reports whether the measurement's points can carry the tag key;
// the collector adds host to every point.
func (s measurementSchema) hasTag(key string) bool {
	return key == schema.TagHost || s.openTags || s.tags[key]
}

// field returns the kind of a field and whether any source writes it.
func (s measurementSchema) field(name string) (kind, bool) {
	k, ok := s.fields[name]
	if !ok && s.openFields {
		return numeric, true
	}
	return k, ok
}
