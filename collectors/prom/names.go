package prom

import (
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Namespace prefixes every metric name.
const Namespace = "heatsink"

// unit is what a data-model unit becomes in a Prometheus name, and the
// factor to the Prometheus unit.
type unit struct {
	suffix string
	scale  float64
}

// promUnits maps the data model's units to Prometheus base units where the
// conversion is exact and keeps names distinct: MHz are exported in hertz
// and percentages as ratios (0..1, the Prometheus convention). Units with
// no base unit worth converting to keep their own name: kilowatts stay
// kilowatts (a tank reports dissipation_kw beside dissipation_w, which must
// not collide), litres per minute, cubic metres per hour and rpm stay as
// the hardware reports them, so a dashboard shows the numbers a site knows.
// A unit not here (the rates of workload metrics) keeps its suffix as is.
var promUnits = map[schema.Unit]unit{
	schema.Celsius:            {"celsius", 1},
	schema.Watts:              {"watts", 1},
	schema.Kilowatts:          {"kilowatts", 1},
	schema.Joules:             {"joules", 1},
	schema.Percent:            {"ratio", 0.01},
	schema.MHz:                {"hertz", 1e6},
	schema.Bytes:              {"bytes", 1},
	schema.RPM:                {"rpm", 1},
	schema.LitresPerMinute:    {"liters_per_minute", 1},
	schema.CubicMetresPerHour: {"cubic_meters_per_hour", 1},
	schema.Amperes:            {"amperes", 1},
	schema.Volts:              {"volts", 1},
	schema.Seconds:            {"seconds", 1},
}

// words spells out the data model's abbreviations, as Prometheus names do
// (node_hwmon_temp_celsius is the exception that proves the rule).
var words = map[string]string{
	"temp": "temperature",
	"mem":  "memory",
	"util": "utilization",
	"freq": "frequency",
}

// family is one metric name: how a field of a measurement is exported.
type family struct {
	name  string
	help  string
	typ   prometheus.ValueType
	scale float64
	// info marks a string field exported as NAME_info{field="value"} 1.
	info  bool
	field string
}

// skippedMeasurements are not state to scrape: events and iterations are
// things that happened (they belong in InfluxDB), and alerts are exported
// from the engine's own states (Options.Alerts) rather than as points.
var skippedMeasurements = map[string]bool{schema.Event: true, schema.Iteration: true, schema.Alert: true, schema.JobSummary: true}

// declaration returns what the data model says of measurement.field: its
// declaration where the measurement has the field, else what the name says
// of itself (an open measurement's field: a PDU's generic OID, a generic
// tank's mapped field), its kind being the value's.
func declaration(measurement, field string, isString bool) schema.Field {
	if m, ok := schema.Lookup(measurement); ok {
		if f, ok := m.Field(field); ok {
			return f
		}
	}
	kind := schema.Float
	if isString {
		kind = schema.String
	}
	return schema.Infer(field, kind)
}

// name returns how measurement.field is exported, given the kind of its
// value; ok is false for what is not exported (free text, skipped
// measurements, names that cannot be made valid). The field's unit,
// counter flag and free-text flag come from point/schema:
//
//   - a counter (a _total field, or energy_j) is a counter, its name ending
//     in _total: energy_j becomes energy_joules_total;
//   - the unit becomes the Prometheus unit (see promUnits), scaled;
//   - booleans are 0/1 gauges; other numbers are gauges;
//   - a string becomes an info metric NAME_info{FIELD="value"} 1, except
//     free text (errors_text, message...), whose values are unbounded and
//     would make a series per message.
//
// Whether a value is a string is the value's own kind, not the schema's,
// so a source that writes another kind than declared still gets a valid
// family.
func name(measurement, field string, isString bool) (family, bool) {
	if skippedMeasurements[measurement] {
		return family{}, false
	}
	f := declaration(measurement, field, isString)
	if isString && f.Text {
		return family{}, false
	}
	typ := prometheus.GaugeValue
	if f.Counter {
		typ = prometheus.CounterValue
	}
	// A one-word name is never a unit, whatever its spelling (a field
	// named w is no watts).
	base := strings.TrimSuffix(field, "_total")
	scale := 1.0
	pu, converted := promUnits[f.Unit]
	if converted {
		if b, ok := strings.CutSuffix(base, "_"+f.Unit.Suffix()); ok && b != "" {
			base, scale = b, pu.scale
		} else {
			converted = false
		}
	}
	parts := strings.Split(base, "_")
	for i, p := range parts {
		if w, ok := words[p]; ok {
			parts[i] = w
		}
	}
	base = strings.Join(parts, "_")
	if converted {
		base += "_" + pu.suffix
	}
	if isString {
		typ, scale = prometheus.GaugeValue, 1
		base += "_info"
	}
	full := Namespace + "_" + sanitize(measurement) + "_" + sanitize(base)
	if typ == prometheus.CounterValue {
		full += "_total"
	}
	if !model.LegacyValidation.IsValidMetricName(full) {
		return family{}, false
	}
	help := "heatsink " + measurement + "." + field + " (docs/data-model.md)"
	if scale != 1 {
		help += ", scaled to " + pu.suffix
	}
	return family{name: full, help: help, typ: typ, scale: scale, info: isString, field: sanitize(field)}, true
}

// reservedLabels are the labels Prometheus sets on every scraped series; a
// tag of the same name would be renamed exported_job on scrape. heatsink's
// job tag (the Slurm job on the node) is exported as slurm_job instead.
var reservedLabels = map[string]string{"job": "slurm_job", "instance": "exported_instance"}

// labelName turns a tag key into a valid label name.
func labelName(key string) string {
	if r, ok := reservedLabels[key]; ok {
		return r
	}
	return sanitize(key)
}

// sanitize replaces what a legacy Prometheus name may not hold with '_'.
func sanitize(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i], i) {
			ok = false
			break
		}
	}
	if ok && s != "" {
		return s
	}
	b := []byte(s)
	for i := range b {
		if !nameByte(b[i], i) {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

func nameByte(c byte, i int) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9'
}

// Field is the inverse of the exposition's naming: it returns the data
// model's measurement and field that a heatsink metric name was made from,
// and the factor that turns the exported value back into the field's unit.
// schema lists the data model's fields by measurement; the longest
// measurement that prefixes the name wins, so
// heatsink_gpu_memory_temperature_celsius is gpu.mem_temp_c and not a
// measurement "gpu_memory". Of the field names that map forward to exactly
// this name, one in the schema wins, else the most abbreviated (a generic
// PDU's voltage_v, exported as _volts). Info metrics (NAME_info) and alert
// metrics are not fields: ok is false for them.
func Field(metric string, schema map[string][]string) (measurement, field string, scale float64, ok bool) {
	rest, found := strings.CutPrefix(metric, Namespace+"_")
	if !found || strings.HasSuffix(rest, "_info") {
		return "", "", 0, false
	}
	best := ""
	for m := range schema {
		if len(m) > len(best) && strings.HasPrefix(rest, sanitize(m)+"_") {
			best = m
		}
	}
	if best == "" {
		return "", "", 0, false
	}
	fieldPart := strings.TrimPrefix(rest, sanitize(best)+"_")
	fieldPart, total := strings.CutSuffix(fieldPart, "_total")
	var fallback string
	var fallbackScale float64
	for _, cand := range fieldCandidates(fieldPart, total) {
		f, ok := name(best, cand, false)
		if !ok || f.name != metric {
			continue
		}
		if slices.Contains(schema[best], cand) {
			return best, cand, 1 / f.scale, true
		}
		if fallback == "" {
			fallback, fallbackScale = cand, 1/f.scale
		}
	}
	if fallback == "" {
		return "", "", 0, false
	}
	return best, fallback, fallbackScale, true
}

// fieldCandidates lists the field names that could have been exported as
// exported, most abbreviated first: each spelt-out word may have been
// abbreviated, the end may be a converted unit (liters_per_minute is one),
// and a counter's _total may be the field's own.
func fieldCandidates(exported string, total bool) []string {
	abbrev := map[string]string{}
	for k, v := range words {
		abbrev[v] = k
	}
	type split struct {
		parts []string
		unit  []string // abbreviations the last part may stand for
	}
	var splits []split
	for su, u := range promUnits {
		if base, ok := strings.CutSuffix(exported, "_"+u.suffix); ok && base != "" {
			splits = append(splits, split{strings.Split(base, "_"), []string{su.Suffix()}})
		}
	}
	slices.SortFunc(splits, func(a, b split) int { return strings.Compare(a.unit[0], b.unit[0]) })
	splits = append(splits, split{parts: strings.Split(exported, "_")})
	var out []string
	for _, sp := range splits {
		cands := [][]string{nil}
		for _, p := range sp.parts {
			var opts []string
			if a, ok := abbrev[p]; ok {
				opts = append(opts, a)
			}
			opts = append(opts, p)
			var next [][]string
			for _, c := range cands {
				for _, o := range opts {
					next = append(next, append(slices.Clone(c), o))
				}
			}
			cands = next
		}
		for _, c := range cands {
			for _, u := range append(sp.unit, "") {
				f := strings.Join(c, "_")
				if u != "" {
					f += "_" + u
				}
				// A counter of a unit (energy_j) is exported with _total
				// added, so the field without it is tried first.
				out = append(out, f)
				if total {
					out = append(out, f+"_total")
				}
			}
		}
	}
	return out
}
