package prom

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// legacyName is name as it was before the names came from point/schema's
// declarations: it re-parsed each field name's last suffix. Kept to prove
// that the exposition did not change (dashboards and recording rules key
// on these names).
func legacyName(measurement, field string, isString bool) (family, bool) {
	units := map[string]unit{
		"c": {"celsius", 1}, "w": {"watts", 1}, "kw": {"kilowatts", 1}, "j": {"joules", 1},
		"pct": {"ratio", 0.01}, "mhz": {"hertz", 1e6}, "bytes": {"bytes", 1}, "rpm": {"rpm", 1},
		"lpm": {"liters_per_minute", 1}, "m3h": {"cubic_meters_per_hour", 1}, "a": {"amperes", 1},
		"v": {"volts", 1}, "s": {"seconds", 1},
	}
	if skippedMeasurements[measurement] {
		return family{}, false
	}
	if isString && (strings.HasSuffix(field, "_text") || field == "message") {
		return family{}, false
	}
	parts := strings.Split(field, "_")
	typ := prometheus.GaugeValue
	scale := 1.0
	if n := len(parts); n > 1 && parts[n-1] == "total" {
		typ = prometheus.CounterValue
		parts = parts[:n-1]
	}
	suffix := ""
	if n := len(parts); n > 1 {
		if u, ok := units[parts[n-1]]; ok {
			parts[n-1], suffix = u.suffix, u.suffix
			scale = u.scale
			if u.suffix == "joules" {
				typ = prometheus.CounterValue
			}
		}
	}
	for i, p := range parts {
		if w, ok := words[p]; ok {
			parts[i] = w
		}
	}
	base := strings.Join(parts, "_")
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
		help += ", scaled to " + suffix
	}
	return family{name: full, help: help, typ: typ, scale: scale, info: isString, field: sanitize(field)}, true
}

// TestNamesAreThoseOfBeforeTheSchema holds every exported family (name,
// help, type, scale) to what suffix parsing gave: for each field of the
// data model, as a number and as a string, and for fields outside it that
// open measurements write.
func TestNamesAreThoseOfBeforeTheSchema(t *testing.T) {
	type pair struct{ m, f string }
	var pairs []pair
	for _, m := range schema.Measurements() {
		for _, f := range m.Fields {
			pairs = append(pairs, pair{m.Name, f})
		}
	}
	for _, f := range []string{"voltage_v", "flow_m3h", "inlet_c", "outlet_energy_j", "resets_total", "frequency_mhz",
		"humidity_pct", "fw", "w", "j", "s", "c_total", "j_total", "status_text", "alarm", "temp_total", "power_kw", "mem_util", "x_per_s", "9bad", "rack-temp_c"} {
		pairs = append(pairs, pair{schema.PDU, f}, pair{schema.Tank, f})
	}
	// A field of one measurement written by another (a generic tank's
	// temp_c, an hwmon chip's energy_j) is named by its declaration.
	for _, m := range []string{schema.Tank, schema.PDU, schema.Hwmon} {
		for _, f := range []string{schema.FieldTempC, schema.FieldEnergyJ, schema.FieldErrorsTotal, schema.FieldMessage, schema.FieldMode, schema.FieldFreqMHz} {
			pairs = append(pairs, pair{m, f})
		}
	}
	n := 0
	for _, p := range pairs {
		for _, str := range []bool{false, true} {
			got, gok := name(p.m, p.f, str)
			want, wok := legacyName(p.m, p.f, str)
			if got != want || gok != wok {
				t.Errorf("name(%s, %s, string %v) = %+v %v, was %+v %v", p.m, p.f, str, got, gok, want, wok)
			}
			n++
		}
	}
	if n < 300 {
		t.Errorf("compared only %d names", n)
	}
}

// TestCompoundUnitsKeepTheirSuffix lists where the names do differ from
// suffix parsing, deliberately: a rate's unit (bytes_per_s, flop_per_s) is
// one unit in the schema, not seconds, so a generic field named so keeps
// its suffix rather than becoming _per_seconds. No source writes one to a
// measurement Prometheus exports today.
func TestCompoundUnitsKeepTheirSuffix(t *testing.T) {
	for _, tc := range []struct{ m, f, want, was string }{
		{schema.PDU, "link_bytes_per_s", "heatsink_pdu_link_bytes_per_s", "heatsink_pdu_link_bytes_per_seconds"},
		{schema.Tank, "warmup_s_per_c", "heatsink_tank_warmup_s_per_c", "heatsink_tank_warmup_s_per_celsius"},
	} {
		got, _ := name(tc.m, tc.f, false)
		was, _ := legacyName(tc.m, tc.f, false)
		if got.name != tc.want || was.name != tc.was {
			t.Errorf("%s.%s: %s (was %s), want %s (was %s)", tc.m, tc.f, got.name, was.name, tc.want, tc.was)
		}
	}
}

func TestFieldInvertsEveryDataModelName(t *testing.T) {
	byMeasurement := map[string][]string{}
	for _, m := range schema.Measurements() {
		byMeasurement[m.Name] = slices.Clone(m.Fields)
	}
	for _, m := range schema.Measurements() {
		for _, f := range m.Fields {
			fam, ok := name(m.Name, f, false)
			if !ok {
				continue
			}
			gm, gf, scale, ok := Field(fam.name, byMeasurement)
			if !ok || gm != m.Name || gf != f || scale*fam.scale != 1 {
				t.Errorf("Field(%s) = %s.%s ×%v %v, want %s.%s", fam.name, gm, gf, scale, ok, m.Name, f)
			}
		}
	}
}
