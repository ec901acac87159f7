package alerts

import "github.com/heatsink-hpc/heatsink/docs/datamodel"

// kind is what a field holds, so that a rule can be checked against the
// field it watches when the configuration loads rather than never firing.
type kind uint8

const (
	numeric kind = iota
	boolean
	text
)

// schema is one measurement of docs/data-model.md: the tags that identify its
// devices and the fields its sources write.
type schema struct {
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
		"gpu":              {"throttle_thermal", "throttle_power"},
		"pdu":              {"power_derived"},
		"tank":             {"pump1_on", "pump2_on", "demo", "factory", "test", "maintenance"},
		"collector_source": {"ok"},
		"influx_sink":      {"ok"},
	}
	textFields = map[string][]string{
		"tank":  {"mode", "errors_text", "warnings_text"},
		"event": {"message"},
		"alert": {"state", "message"},
	}
	openFieldSets = []string{"iteration", "pdu", "tank"}
	openTagSets   = []string{"alert"}
	sensors       = []string{"cpu", "mem", "load", "hwmon", "cpufreq", "rapl", "nvme", "gpu", "pdu", "tank"}
)

// measurements is the table of docs/data-model.md, read once; it is never
// written after.
var measurements = schemas(datamodel.Measurements())

// schemas adds to the data model's table what rules need to know of each
// measurement: the kind of each field, and which sets are open.
func schemas(table map[string]datamodel.Measurement) map[string]schema {
	out := map[string]schema{}
	for name, m := range table {
		s := schema{tags: map[string]bool{}, fields: map[string]kind{}}
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
	set := func(list []string, apply func(*schema)) {
		for _, m := range list {
			if s, ok := out[m]; ok {
				apply(&s)
				out[m] = s
			}
		}
	}
	set(openFieldSets, func(s *schema) { s.openFields = true })
	set(openTagSets, func(s *schema) { s.openTags = true })
	set(sensors, func(s *schema) { s.sensor = true })
	return out
}

// hasTag reports whether the measurement's points can carry the tag key;
// the collector adds host to every point.
func (s schema) hasTag(key string) bool {
	return key == "host" || s.openTags || s.tags[key]
}

// field returns the kind of a field and whether any source writes it.
func (s schema) field(name string) (kind, bool) {
	k, ok := s.fields[name]
	if !ok && s.openFields {
		return numeric, true
	}
	return k, ok
}
