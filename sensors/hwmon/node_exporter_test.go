package hwmon

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/fixture"
)

// neFields are node_exporter's hwmon metrics that heatsink records, and the
// field each becomes. Its other hwmon metrics (voltages, pwm, alarms,
// beep, fan min/max/target) have no field in heatsink's data model.
var neFields = map[string]string{
	"node_hwmon_temp_celsius":      schema.FieldTempC,
	"node_hwmon_temp_max_celsius":  schema.FieldMaxC,
	"node_hwmon_temp_crit_celsius": schema.FieldCritC,
	"node_hwmon_fan_rpm":           schema.FieldFanRPM,
}

var neSample = regexp.MustCompile(`^(node_hwmon_[a-z_]+)\{chip="([^"]+)",sensor="([^"]+)"\} (\S+)$`)

// neValue is one value node_exporter reports for its hwmon fixture, keyed
// as heatsink records it: chip tag, sensor tag, field.
type neValue struct {
	chip, sensor, field string
}

// readNodeExporterValues reads the node_hwmon_* lines of node_exporter's
// e2e-output.txt that heatsink has a field for.
func readNodeExporterValues(t *testing.T, path string) map[neValue]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[neValue]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := neSample.FindStringSubmatch(sc.Text())
		if m == nil {
			t.Fatalf("%s: not a node_hwmon sample: %q", path, sc.Text())
		}
		field, ok := neFields[m[1]]
		if !ok {
			t.Fatalf("%s: %s has no heatsink field", path, m[1])
		}
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		want[neValue{m[2], m[3], field}] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return want
}

// node_exporter's own hwmon fixture, read by heatsink, gives every
// temperature, threshold and fan value node_exporter's end-to-end test
// expects, under the same chip and sensor names: heatsink names chips by
// node_exporter's rule, so dashboards and recordings of either line up.
// The fixture has the hard cases: chips without a device link (hwmon4, by
// number; nct6779, by name), the old layout with sensor files on the
// device (applesmc), two chips of one platform device (asus-nb-wmi) and a
// Wi-Fi card with three (mt7996, under ieee80211/phy0).
func TestNodeExporterFixtureGivesNodeExportersValues(t *testing.T) {
	dir := filepath.Join("testdata", "node_exporter")
	want := readNodeExporterValues(t, filepath.Join(dir, "e2e-output-hwmon.txt"))
	if len(want) != 42 {
		t.Fatalf("%d expected values, want the 42 of node_exporter's e2e output", len(want))
	}
	root := fixture.Untar(t, filepath.Join(dir, "sys.ttar"))
	s := discover(t, filepath.Join(root, "sys"), filter.Spec{})
	pts, err := s.Sample(context.Background(), stamp, nil)
	if err != nil {
		// The bogus chip's unreadable files are errors; the values below
		// say whether they cost anything node_exporter reports.
		t.Logf("sample: %v", err)
	}
	got := map[neValue]float64{}
	for _, p := range pts {
		for _, f := range p.Fields {
			v, _ := p.Float(f.Key)
			got[neValue{p.Tag(schema.TagChip), p.Tag(schema.TagSensor), f.Key}] = v
		}
	}
	for k, w := range want {
		t.Run(fmt.Sprintf("%s/%s/%s", k.chip, k.sensor, k.field), func(t *testing.T) {
			g, ok := got[k]
			if !ok {
				t.Fatalf("no %s for chip %s sensor %s; heatsink's chips: %v", k.field, k.chip, k.sensor, s.Describe())
			}
			if g != w {
				t.Errorf("%s = %v, node_exporter says %v", k.field, g, w)
			}
		})
	}
}

// Chips sharing an id are told apart by their driver name when it differs,
// else by hwmonN; a chip alone keeps its id, and a chip's id does not
// depend on whether the chips beside it pass the filter.
func TestChipsSharingADeviceAreNamedStably(t *testing.T) {
	type in struct{ id, name, hwmon string }
	tests := []struct {
		name  string
		chips []in
		want  []string
	}{
		{"alone on its device", []in{{"platform_coretemp_0", "coretemp", "hwmon3"}, {"platform_coretemp_1", "coretemp", "hwmon4"}},
			[]string{"platform_coretemp_0", "platform_coretemp_1"}},
		{"one device, names differ", []in{{"ieee80211_phy0", "mt7996_phy0_0", "hwmon8"}, {"ieee80211_phy0", "mt7996_phy0_1", "hwmon9"}, {"nct6779", "nct6779", "hwmon3"}},
			[]string{"ieee80211_phy0_mt7996_phy0_0", "ieee80211_phy0_mt7996_phy0_1", "nct6779"}},
		{"one device, names alike", []in{{"platform_x", "x", "hwmon1"}, {"platform_x", "x", "hwmon2"}, {"platform_x", "y", "hwmon3"}},
			[]string{"platform_x_hwmon1", "platform_x_hwmon2", "platform_x_y"}},
		{"one device, no names", []in{{"platform_x", "", "hwmon1"}, {"platform_x", "", "hwmon2"}},
			[]string{"platform_x_hwmon1", "platform_x_hwmon2"}},
		{"name cleaned as ids are", []in{{"platform_asus_nb_wmi", "asus", "hwmon6"}, {"platform_asus_nb_wmi", "asus-wmi-sensors", "hwmon7"}},
			[]string{"platform_asus_nb_wmi_asus", "platform_asus_nb_wmi_asus_wmi_sensors"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chips := make([]*chip, len(tt.chips))
			for i, c := range tt.chips {
				chips[i] = &chip{id: c.id, name: c.name, hwmon: c.hwmon}
			}
			dedupIDs(chips)
			for i, c := range chips {
				if c.id != tt.want[i] {
					t.Errorf("chip %d (%s): id %s, want %s", i, c.hwmon, c.id, tt.want[i])
				}
			}
		})
	}

	root := fixture.Untar(t, filepath.Join("testdata", "node_exporter", "sys.ttar"))
	s := discover(t, filepath.Join(root, "sys"), filter.Spec{DeviceInclude: "^ieee80211_phy0_mt7996_phy0_1$"})
	pts, err := s.Sample(context.Background(), stamp, nil)
	if err != nil || len(pts) != 1 || pts[0].Tag(schema.TagChip) != "ieee80211_phy0_mt7996_phy0_1" {
		t.Errorf("filtered to one of the Wi-Fi card's chips: %v, %v; want its one reading under its own name", pts, err)
	}
}
