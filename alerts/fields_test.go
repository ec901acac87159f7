package alerts

import (
	"maps"
	"slices"
	"testing"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// TestDataModelIsReadAsTheContract checks that the table of
// docs/data-model.md parses into the names rules use, and that the kinds
// and sets this package adds name only what the document has.
func TestDataModelIsReadAsTheContract(t *testing.T) {
	want := map[string][]string{
		"gpu":   {"temp_c", "mem_temp_c", "slowdown_c", "mem_max_c", "clock_event_reasons", "throttle_thermal"},
		"nvme":  {"temp_c", "warn_c", "crit_c"},
		"tank":  {"coolant_temp_c", "setpoint_c", "alarm_c", "mode", "demo"},
		"hwmon": {"temp_c", "max_c", "crit_c", "fan_rpm", "power_w"},
		"alert": {"state", "value", "threshold", "message"},
	}
	for m, fields := range want {
		s, ok := measurements[m]
		if !ok {
			t.Errorf("measurement %s not read from docs/data-model.md", m)
			continue
		}
		for _, f := range fields {
			if _, ok := s.fields[f]; !ok {
				t.Errorf("%s.%s not read from docs/data-model.md (got %v)", m, f, slices.Sorted(maps.Keys(s.fields)))
			}
		}
	}
	// Values in the prose are not names.
	if _, ok := measurements["alert"].fields["firing"]; ok {
		t.Error("alert's value firing read as a field")
	}
	if _, ok := measurements["nvme"].fields["_max"]; ok || len(measurements["nvme"].fields) != 3 {
		t.Errorf("nvme fields %v", slices.Sorted(maps.Keys(measurements["nvme"].fields)))
	}
	if got := slices.Sorted(maps.Keys(measurements["hwmon"].tags)); !slices.Equal(got, []string{"chip", "chip_name", "class", "label", "sensor"}) {
		t.Errorf("hwmon tags %v", got)
	}
	// Kinds are point/schema's: a boolean and a string stay what they are.
	for _, tc := range []struct {
		m, f string
		want kind
	}{
		{"gpu", "throttle_thermal", boolean},
		{"tank", "pump1_on", boolean},
		{"tank", "mode", text},
		{"alert", "state", text},
		{"tune_evaluation", "record", text},
		{"gpu", "clock_event_reasons", numeric},
		{"mem", "used_bytes", numeric},
	} {
		if got, ok := measurements[tc.m].field(tc.f); !ok || got != tc.want {
			t.Errorf("%s.%s is %s (%v), want %s", tc.m, tc.f, kindName(got), ok, kindName(tc.want))
		}
	}
	for _, m := range slices.Concat(openFieldSets, openTagSets, sensors) {
		if _, ok := measurements[m]; !ok {
			t.Errorf("fields.go names measurement %s; docs/data-model.md has none", m)
		}
	}
}

// The unit a threshold's plausibility check uses is the field's declared
// one, or for an open measurement's own field the one its name spells.
func TestFieldUnits(t *testing.T) {
	for _, tc := range []struct {
		m, f string
		want schema.Unit
	}{
		{"gpu", "slowdown_c", schema.Celsius},
		{"gpu", "util_pct", schema.Percent},
		{"gpu", "power_w", schema.Watts},
		{"gpu", "pstate", schema.None},
		{"tank", "inlet_c", schema.Celsius},
		{"pdu", "voltage_v", schema.Volts},
		{"job_summary", "heat_interval_s_per_c", schema.SecondsPerCelsius},
	} {
		if got := measurements[tc.m].unit(tc.f); got != tc.want {
			t.Errorf("%s.%s unit %s, want %s", tc.m, tc.f, got, tc.want)
		}
	}
}
