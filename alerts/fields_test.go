package alerts

import (
	"maps"
	"slices"
	"testing"
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
	for _, list := range []map[string][]string{booleanFields, textFields} {
		for m, fs := range list {
			for _, f := range fs {
				if _, ok := measurements[m].fields[f]; !ok {
					t.Errorf("fields.go gives %s.%s a kind; docs/data-model.md has no such field", m, f)
				}
			}
		}
	}
	for _, m := range slices.Concat(openFieldSets, openTagSets, sensors) {
		if _, ok := measurements[m]; !ok {
			t.Errorf("fields.go names measurement %s; docs/data-model.md has none", m)
		}
	}
}
