package hwmon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/fixture"
)

func discover(t *testing.T, root string, spec filter.Spec) *Source {
	t.Helper()
	return fixture.Discover(t, New, root, spec)
}

var stamp = time.Unix(1700000000, 0)

// render prints a point as "tags: fields" in a stable order, so a whole
// sample can be compared with a table.
func render(p point.Point) string {
	var tags []string
	for _, t := range p.Tags {
		tags = append(tags, t.Key+"="+t.Value)
	}
	var fields []string
	for _, f := range p.Fields {
		v, _ := point.Float(f.Value)
		fields = append(fields, fmt.Sprintf("%s=%g", f.Key, v))
	}
	return strings.Join(tags, ",") + ": " + strings.Join(fields, " ")
}

func renderAll(pts []point.Point) []string {
	out := make([]string, len(pts))
	for i, p := range pts {
		if p.Measurement != "hwmon" || !p.Time.Equal(stamp) {
			return []string{"bad point " + p.String()}
		}
		out[i] = render(p)
	}
	return out
}

func TestHwmonReadsRealLayouts(t *testing.T) {
	tests := []struct {
		node string
		want []string
	}{
		{"intel-node", []string{
			"chip=nvme_nvme0,chip_name=nvme,sensor=temp1,label=Composite,class=nvme: temp_c=38.85 max_c=81.85 crit_c=84.85",
			// Sensor N thresholds read 65535 K: unset, so absent.
			"chip=nvme_nvme0,chip_name=nvme,sensor=temp2,label=Sensor 1,class=nvme: temp_c=38.85",
			"chip=nvme_nvme0,chip_name=nvme,sensor=temp3,label=Sensor 2,class=nvme: temp_c=41.85",
			"chip=platform_coretemp_0,chip_name=coretemp,sensor=temp1,label=Package id 0,class=cpu_package: temp_c=46 max_c=84 crit_c=94",
			"chip=platform_coretemp_0,chip_name=coretemp,sensor=temp2,label=Core 0,class=cpu_core: temp_c=38 max_c=84 crit_c=94",
			"chip=platform_coretemp_0,chip_name=coretemp,sensor=temp3,label=Core 1,class=cpu_core: temp_c=45 max_c=84 crit_c=94",
			"chip=platform_coretemp_0,chip_name=coretemp,sensor=temp4,label=Core 2,class=cpu_core: temp_c=41 max_c=84 crit_c=94",
			"chip=platform_coretemp_0,chip_name=coretemp,sensor=temp5,label=Core 3,class=cpu_core: temp_c=48 max_c=84 crit_c=94",
			"chip=platform_coretemp_0,chip_name=coretemp,sensor=temp6,label=Core 4,class=cpu_core: temp_c=44 max_c=84 crit_c=94",
			"chip=platform_coretemp_0,chip_name=coretemp,sensor=temp7,label=Core 5,class=cpu_core: temp_c=40 max_c=84 crit_c=94",
			"chip=platform_nct6775_656,chip_name=nct6798,sensor=temp1,label=SYSTIN,class=other: temp_c=34 max_c=80",
			"chip=platform_nct6775_656,chip_name=nct6798,sensor=temp2,label=CPUTIN,class=other: temp_c=38.5 max_c=80",
			// A fan header with nothing on it reads 0 rpm: a real reading.
			"chip=platform_nct6775_656,chip_name=nct6798,sensor=fan1,class=other: fan_rpm=0",
			"chip=platform_nct6775_656,chip_name=nct6798,sensor=fan2,class=other: fan_rpm=1176",
			"chip=thermal_thermal_zone0,chip_name=acpitz,sensor=temp1,class=acpi: temp_c=27.8 crit_c=119",
		}},
		{"amd-node", []string{
			// NVMe in the older layout: the chip is named after the PCI function.
			"chip=0000:00:01_1_0000:01:00_0,chip_name=nvme,sensor=temp1,label=Composite,class=nvme: temp_c=35.85 max_c=80.85 crit_c=84.85",
			"chip=0000:0b:00_0_0000:0c:00_0,chip_name=amdgpu,sensor=temp1,label=edge,class=gpu: temp_c=41 crit_c=100",
			"chip=0000:0b:00_0_0000:0c:00_0,chip_name=amdgpu,sensor=temp2,label=junction,class=gpu: temp_c=43 crit_c=110",
			"chip=0000:0b:00_0_0000:0c:00_0,chip_name=amdgpu,sensor=temp3,label=mem,class=gpu: temp_c=48 crit_c=100",
			"chip=0000:0b:00_0_0000:0c:00_0,chip_name=amdgpu,sensor=fan1,class=gpu: fan_rpm=0",
			"chip=0000:0b:00_0_0000:0c:00_0,chip_name=amdgpu,sensor=power1,class=gpu: power_w=11",
			"chip=pci0000:00_0000:00:18_3,chip_name=k10temp,sensor=temp1,label=Tctl,class=cpu: temp_c=48.875",
			"chip=pci0000:00_0000:00:18_3,chip_name=k10temp,sensor=temp3,label=Tccd1,class=cpu: temp_c=41",
			"chip=pci0000:00_0000:00:18_3,chip_name=k10temp,sensor=temp4,label=Tccd2,class=cpu: temp_c=40.25",
			// it87 in the old driver layout: name and files under hwmon4/device.
			"chip=platform_it87_2608,chip_name=it8688,sensor=temp1,class=other: temp_c=36",
			"chip=platform_it87_2608,chip_name=it8688,sensor=temp2,class=other: temp_c=45",
			"chip=platform_it87_2608,chip_name=it8688,sensor=fan1,class=other: fan_rpm=1350",
			"chip=platform_it87_2608,chip_name=it8688,sensor=fan2,class=other: fan_rpm=0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.node, func(t *testing.T) {
			s := discover(t, fixture.Sys(tt.node), filter.Spec{})
			pts, err := s.Sample(context.Background(), stamp, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := renderAll(pts)
			if !slices.Equal(got, tt.want) {
				t.Errorf("sample:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestHwmonDescribeNamesChipsNotHwmonNumbers(t *testing.T) {
	s := discover(t, fixture.Sys("intel-node"), filter.Spec{})
	want := []string{
		"nvme_nvme0 nvme (hwmon2): temp1 Composite, temp2 Sensor 1, temp3 Sensor 2",
		"platform_coretemp_0 coretemp (hwmon1): temp1 Package id 0, temp2 Core 0, temp3 Core 1, temp4 Core 2, temp5 Core 3, temp6 Core 4, temp7 Core 5",
		"platform_nct6775_656 nct6798 (hwmon3): temp1 SYSTIN, temp2 CPUTIN, fan1, fan2",
		"thermal_thermal_zone0 acpitz (hwmon0): temp1",
	}
	if got := s.Describe(); !slices.Equal(got, want) {
		t.Errorf("Describe:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestHwmonFilters(t *testing.T) {
	tests := []struct {
		name string
		spec filter.Spec
		want []string // chip/sensor of each point
	}{
		{"exclude nvme chip by driver name", filter.Spec{DeviceExclude: "^nvme$"}, nil},
		{"packages only", filter.Spec{SensorInclude: "^Package id"}, []string{"platform_coretemp_0/temp1"}},
		{"coretemp only, no core 3", filter.Spec{DeviceInclude: "coretemp", SensorExclude: "^Core [3-5]$"},
			[]string{"platform_coretemp_0/temp1", "platform_coretemp_0/temp2", "platform_coretemp_0/temp3", "platform_coretemp_0/temp4"}},
		{"fans by channel name", filter.Spec{SensorInclude: "^fan"}, []string{"platform_nct6775_656/fan1", "platform_nct6775_656/fan2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := discover(t, fixture.Sys("intel-node"), tt.spec)
			pts, err := s.Sample(context.Background(), stamp, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pts {
				got = append(got, p.Tag("chip")+"/"+p.Tag("sensor"))
			}
			if tt.want == nil {
				if slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "nvme") }) || len(got) != 12 {
					t.Errorf("got %v, want the 12 non-NVMe channels", got)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	f, _ := filter.New(filter.Spec{DeviceInclude: "^no-such-chip$"})
	if err := New(fixture.Sys("intel-node"), f).Discover(context.Background()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("everything filtered out: %v, want ErrUnsupported", err)
	}
}

// TestHwmonBadValuesArePerSensorErrors: each broken channel is one error
// naming its file; every other channel is still recorded.
func TestHwmonBadValuesArePerSensorErrors(t *testing.T) {
	sys := fixture.CopySys(t, "intel-node")
	core := filepath.Join(sys, "class/hwmon/hwmon1")
	s := discover(t, sys, filter.Spec{})
	bad := map[string]string{
		"temp2_input": "N/A\n",                     // not a number
		"temp3_input": "",                          // empty
		"temp4_input": "99999999999999999999999\n", // beyond int64
		"temp5_input": "2147483647\n",              // a sentinel: 2147483 °C
		"temp6_input": "-300000\n",                 // below absolute zero
	}
	for f, v := range bad {
		if err := os.WriteFile(filepath.Join(core, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fan := filepath.Join(sys, "class/hwmon/hwmon3/fan2_input")
	os.WriteFile(fan, []byte("4294967295\n"), 0o644)
	pts, err := s.Sample(context.Background(), stamp, nil)
	if err == nil {
		t.Fatal("no error for the broken channels")
	}
	if len(pts) != 15-6 {
		t.Errorf("%d points, want the 9 good channels", len(pts))
	}
	for _, p := range pts {
		if p.Tag("chip") == "platform_coretemp_0" && p.Tag("sensor") != "temp1" && p.Tag("sensor") != "temp7" {
			t.Errorf("broken channel recorded: %s", render(p))
		}
	}
	msg := err.Error()
	for _, want := range []string{
		"hwmon platform_coretemp_0 temp2: parse " + filepath.Join(core, "temp2_input") + `: "N/A" is not a decimal integer`,
		"hwmon platform_coretemp_0 temp3: parse " + filepath.Join(core, "temp3_input") + ": empty value",
		"hwmon platform_coretemp_0 temp4: parse " + filepath.Join(core, "temp4_input") + `: "99999999999999999999999" is out of range`,
		"hwmon platform_coretemp_0 temp5: " + filepath.Join(core, "temp5_input") + ": 2147483647 is outside the physical range of a temp reading",
		"hwmon platform_coretemp_0 temp6: " + filepath.Join(core, "temp6_input") + ": -300000 is outside the physical range",
		"hwmon platform_nct6775_656 fan2: " + fan + ": 4294967295 is outside the physical range of a fan reading",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != 6 {
		t.Errorf("%d errors, want 6:\n%s", n, msg)
	}
}

// TestHwmonVanishedChips: a chip that disappears mid-run (driver unloaded)
// costs one error and is dropped at the next sample; when every chip is gone
// the sample has no points and an error, so the collector discovers again;
// a chip that comes back under a new hwmonN is found again.
func TestHwmonVanishedChips(t *testing.T) {
	sys := fixture.CopySys(t, "intel-node")
	s := discover(t, sys, filter.Spec{})
	ctx := context.Background()
	core := filepath.Join(sys, "devices/platform/coretemp.0")
	saved := filepath.Join(t.TempDir(), "coretemp.0")
	if err := os.Rename(core, saved); err != nil {
		t.Fatal(err)
	}
	pts, err := s.Sample(ctx, stamp, nil)
	if err == nil || !strings.Contains(err.Error(), "hwmon chip platform_coretemp_0 (hwmon1) vanished") {
		t.Errorf("error %v, want the coretemp chip named as vanished", err)
	}
	if strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("one vanished chip should be one error, got:\n%v", err)
	}
	if len(pts) != 15-7 {
		t.Errorf("%d points, want the 8 channels of the other chips", len(pts))
	}
	pts, err = s.Sample(ctx, stamp, nil)
	if err != nil || len(pts) != 8 {
		t.Errorf("next sample: %d points, %v; want 8 and no error (the chip is gone)", len(pts), err)
	}
	// The driver comes back, registered as hwmon7.
	os.Rename(saved, core)
	os.Rename(filepath.Join(core, "hwmon/hwmon1"), filepath.Join(core, "hwmon/hwmon7"))
	os.Remove(filepath.Join(sys, "class/hwmon/hwmon1"))
	os.Symlink("../../devices/platform/coretemp.0/hwmon/hwmon7", filepath.Join(sys, "class/hwmon/hwmon7"))
	// Every other chip disappears.
	for _, d := range []string{"devices/virtual", "devices/pci0000:00", "devices/platform/nct6775.656"} {
		if err := os.RemoveAll(filepath.Join(sys, d)); err != nil {
			t.Fatal(err)
		}
	}
	pts, err = s.Sample(ctx, stamp, nil)
	if len(pts) != 0 || err == nil || strings.Count(err.Error(), "vanished") != 3 {
		t.Fatalf("every known chip gone: %d points, %v; want none and three vanished chips", len(pts), err)
	}
	// The collector discovers again after such a sample.
	if err := s.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	pts, err = s.Sample(ctx, stamp, nil)
	if err != nil || len(pts) != 7 || pts[0].Tag("chip") != "platform_coretemp_0" {
		t.Errorf("after re-discovery: %d points, %v; want coretemp's 7 under its stable id", len(pts), err)
	}
	if d := s.Describe(); len(d) != 1 || !strings.Contains(d[0], "(hwmon7)") {
		t.Errorf("Describe after re-discovery: %q", d)
	}
	os.RemoveAll(filepath.Join(sys, "class"))
	if err := s.Discover(ctx); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Discover with no hwmon class: %v, want ErrUnsupported", err)
	}
}

func TestHwmonThresholdsAreRefreshedRarely(t *testing.T) {
	sys := fixture.CopySys(t, "intel-node")
	s := discover(t, sys, filter.Spec{DeviceInclude: "coretemp", SensorInclude: "^Package"})
	s.SetRefresh(3)
	maxFile := filepath.Join(sys, "devices/platform/coretemp.0/hwmon/hwmon1/temp1_max")
	var got []float64
	for i := range 4 {
		if i == 1 {
			os.WriteFile(maxFile, []byte("70000\n"), 0o644)
		}
		pts, err := s.Sample(context.Background(), stamp, nil)
		if err != nil || len(pts) != 1 {
			t.Fatalf("sample %d: %d points, %v", i, len(pts), err)
		}
		v, _ := pts[0].Float("max_c")
		got = append(got, v)
	}
	// Read at the first sample and again at the fourth.
	if !slices.Equal(got, []float64{84, 84, 84, 70}) {
		t.Errorf("max_c over 4 samples = %v, want [84 84 84 70]", got)
	}
}

func TestHwmonPowerAverageWhenNoInput(t *testing.T) {
	sys := fixture.CopySys(t, "amd-node")
	gpu := filepath.Join(sys, "devices/pci0000:00/0000:00:03.1/0000:0a:00.0/0000:0b:00.0/0000:0c:00.0/hwmon/hwmon3")
	// Older amdgpu kernels expose power1_average only.
	os.Rename(filepath.Join(gpu, "power1_input"), filepath.Join(gpu, "power1_average"))
	os.WriteFile(filepath.Join(gpu, "power1_average"), []byte("187000000\n"), 0o644)
	s := discover(t, sys, filter.Spec{SensorInclude: "^power"})
	pts, err := s.Sample(context.Background(), stamp, nil)
	if err != nil || len(pts) != 1 {
		t.Fatalf("%d points, %v", len(pts), err)
	}
	if v, _ := pts[0].Float("power_w"); v != 187 {
		t.Errorf("power_w = %v, want 187", v)
	}
}

func TestChipIDsStayUniqueWithoutDeviceLinks(t *testing.T) {
	sys := filepath.Join(t.TempDir(), "sys")
	// Two virtual chips with the same name and no device link.
	for _, n := range []string{"hwmon0", "hwmon1"} {
		dir := filepath.Join(sys, "devices/virtual/hwmon", n)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "name"), []byte("acpi_fan\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "temp1_input"), []byte("30000\n"), 0o644)
		os.MkdirAll(filepath.Join(sys, "class/hwmon"), 0o755)
		os.Symlink("../../devices/virtual/hwmon/"+n, filepath.Join(sys, "class/hwmon", n))
	}
	s := discover(t, sys, filter.Spec{})
	pts, err := s.Sample(context.Background(), stamp, nil)
	if err != nil || len(pts) != 2 || pts[0].Tag("chip") != "acpi_fan_hwmon0" || pts[1].Tag("chip") != "acpi_fan_hwmon1" {
		t.Errorf("chips %v, %v; want acpi_fan_hwmon0 and acpi_fan_hwmon1", pts, err)
	}
}

func TestBenchNodeHasTheReadingsTheBenchmarkCounts(t *testing.T) {
	s := discover(t, fixture.Sys("bench-node"), filter.Spec{})
	pts, err := s.Sample(context.Background(), stamp, nil)
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]int{}
	for _, p := range pts {
		classes[p.Tag("class")]++
	}
	// 2 sockets x (package + 32 cores), one NVMe drive with 3 sensors.
	if len(pts) != 69 || classes["cpu_package"] != 2 || classes["cpu_core"] != 64 || classes["nvme"] != 3 {
		t.Errorf("bench-node: %d points by class %v", len(pts), classes)
	}
}

func TestReadLimitTreatsSentinelsAsUnset(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		raw  string
		want float64
		ok   bool
	}{
		{"84850", 84.85, true},
		{"65261850", 0, false}, // 65535 K: NVMe's "no threshold"
		{"-273150", -273.15, true},
	} {
		p := filepath.Join(dir, "temp1_max")
		os.WriteFile(p, []byte(tt.raw+"\n"), 0o644)
		v, ok, err := ReadLimit(p)
		if err != nil || ok != tt.ok || math.Abs(v-tt.want) > 1e-9 {
			t.Errorf("ReadLimit(%s) = %v, %v, %v; want %v, %v", tt.raw, v, ok, err, tt.want, tt.ok)
		}
	}
}

func TestReadLimitsReadsEachThresholdOnItsOwn(t *testing.T) {
	dir := t.TempDir()
	write := func(name, v string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ch := Channel{Kind: Temp, Name: "temp1", Max: write("temp1_max", "84000\n"), Crit: write("temp1_crit", "N/A\n")}
	l, err := ch.ReadLimits()
	if err == nil || !strings.Contains(err.Error(), "temp1_crit") {
		t.Errorf("unreadable crit: err = %v, want one naming temp1_crit", err)
	}
	if !l.HasMax || l.MaxC != 84 || l.HasCrit || l.CritC != 0 {
		t.Errorf("limits = %+v, want max 84 and no crit", l)
	}
	// A channel without threshold files has none, and no error.
	if l, err := (&Channel{Kind: Temp, Name: "temp2"}).ReadLimits(); err != nil || l != (Limits{}) {
		t.Errorf("no thresholds: %+v, %v", l, err)
	}
}

func BenchmarkHwmonSampleBenchNode(b *testing.B) {
	fixture.BenchmarkSample(b, New(fixture.Sys("bench-node"), filter.Filter{}))
}

// A driver reload takes seconds: the chip is gone for more than the one
// tick after which the vanished chip triggers a rescan, and comes back
// under a new hwmonN. Sampling finds it again within MissingRescan.
func TestHwmonChipGoneForSecondsIsFoundAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 5 s of real time, as a driver reload does")
	}
	sys := fixture.CopySys(t, "intel-node")
	s := discover(t, sys, filter.Spec{})
	ctx := context.Background()
	core := filepath.Join(sys, "devices/platform/coretemp.0")
	saved := filepath.Join(t.TempDir(), "coretemp.0")
	if err := os.Rename(core, saved); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(sys, "class/hwmon/hwmon1"))
	gone := time.Now()
	coretemp := func(pts []point.Point) int {
		n := 0
		for _, p := range pts {
			if p.Tag("chip") == "platform_coretemp_0" {
				n++
			}
		}
		return n
	}
	for time.Since(gone) < 5*time.Second { // a tick a second, the chip gone
		pts, _ := s.Sample(ctx, stamp, nil)
		if n := coretemp(pts); n != 0 {
			t.Fatalf("%d coretemp points while it is gone", n)
		}
		time.Sleep(time.Second)
	}
	// The driver is back, as hwmon9.
	os.Rename(filepath.Join(saved, "hwmon/hwmon1"), filepath.Join(saved, "hwmon/hwmon9"))
	os.Rename(saved, core)
	os.Symlink("../../devices/platform/coretemp.0/hwmon/hwmon9", filepath.Join(sys, "class/hwmon/hwmon9"))
	back := time.Now()
	for {
		pts, err := s.Sample(ctx, stamp, nil)
		if coretemp(pts) == 7 && err == nil {
			break
		}
		if time.Since(back) > MissingRescan+2*time.Second {
			t.Fatalf("coretemp back as hwmon9 for %v and not sampled (%d points, %v)", time.Since(back).Round(time.Second), coretemp(pts), err)
		}
		time.Sleep(time.Second)
	}
	if d := strings.Join(s.Describe(), "\n"); !strings.Contains(d, "(hwmon9)") {
		t.Errorf("Describe: %s", d)
	}
}
