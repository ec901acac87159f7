package datamodel

import (
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/docs"
)

func TestEmbeddedTableHasTheMeasurementsSourcesWrite(t *testing.T) {
	ms, err := Parse(docs.DataModel)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ m, tag, field string }{
		{"gpu", "uuid", "temp_c"},
		{"gpu", "model", "mem_temp_c"},
		{"hwmon", "chip", "temp_c"},
		{"tank", "tank", "coolant_temp_c"},
		{"tank", "tank", "pump1_on"},
		{"pdu", "outlet", "current_a"},
		{"event", "kind", "message"},
		{"collector_source", "source", "errors_total"},
	} {
		m, ok := ms[c.m]
		if !ok {
			t.Errorf("measurement %s missing", c.m)
			continue
		}
		if !m.HasTag(c.tag) || !m.HasTag("host") || !m.HasField(c.field) {
			t.Errorf("%s: tag %s %v, field %s %v", c.m, c.tag, m.HasTag(c.tag), c.field, m.HasField(c.field))
		}
	}
	// Example values in parentheses are not names.
	if ms["rapl"].HasTag("package") || ms["hwmon"].HasTag("coretemp") || ms["tank"].HasField("water_flow_unit") {
		t.Errorf("a parenthesised example was taken for a name: rapl %v, hwmon %v", ms["rapl"].Tags, ms["hwmon"].Tags)
	}
}

func TestParseRefusesWhatIsNotATable(t *testing.T) {
	for _, md := range []string{"", "# nothing here\n", "| `gpu` | a |\n"} {
		if _, err := Parse(md); err == nil {
			t.Errorf("Parse(%q) = nil error", md)
		}
	}
	twice := "| `gpu` | `gpu` | `temp_c` |\n| `gpu` | `gpu` | `power_w` |\n"
	if _, err := Parse(twice); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a measurement listed twice: %v", err)
	}
}
