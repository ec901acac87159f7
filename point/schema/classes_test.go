package schema

import "testing"

func TestHwmonClass(t *testing.T) {
	for _, tt := range []struct{ chip, label, want string }{
		{"coretemp", "Package id 1", "cpu_package"},
		{"coretemp", "Physical id 0", "cpu_package"}, // kernels before 3.x
		{"coretemp", "Core 17", "cpu_core"},
		{"coretemp", "", "cpu"},
		{"k10temp", "Tctl", "cpu"},
		{"zenpower", "Tdie", "cpu"},
		{"nvme", "Composite", "nvme"},
		{"acpitz", "", "acpi"},
		{"amdgpu", "junction", "gpu"},
		{"nct6798", "CPUTIN", "other"},
		{"", "", "other"},
	} {
		if got := HwmonClass(tt.chip, tt.label); got != tt.want {
			t.Errorf("HwmonClass(%q, %q) = %q, want %q", tt.chip, tt.label, got, tt.want)
		}
	}
}

func TestPlausibleTempC(t *testing.T) {
	for _, tt := range []struct {
		c    float64
		want bool
	}{
		{-273.15, true},
		{-273.16, false},
		{45.5, true},
		{1000, true},
		{65261.85, false},    // an unset NVMe threshold, 65535 K
		{2147483.647, false}, // 0x7fffffff millidegrees
	} {
		if got := PlausibleTempC(tt.c); got != tt.want {
			t.Errorf("PlausibleTempC(%v) = %v, want %v", tt.c, got, tt.want)
		}
	}
}

// The bits' agreement with NVML's own constants is checked in sensors/nvml,
// which has the bindings; this checks the decoding.
func TestDecodeClockEvents(t *testing.T) {
	for _, tc := range []struct {
		name           string
		reasons        uint64
		thermal, power bool
	}{
		{"none", 0, false, false},
		{"idle", 0x1, false, false},
		{"sw power cap", 0x4, false, true},
		{"hw slowdown", 0x8, true, false},
		{"sw thermal slowdown", 0x20, true, false},
		{"hw thermal slowdown", 0x40, true, false},
		{"hw power brake", 0x80, false, true},
		{"power cap and sw thermal", 0x4 | 0x20, true, true},
		{"unknown future bit", 1 << 40, false, false},
	} {
		thermal, power := DecodeClockEvents(tc.reasons)
		if thermal != tc.thermal || power != tc.power {
			t.Errorf("%s: DecodeClockEvents(%#x) = thermal %v, power %v; want %v, %v",
				tc.name, tc.reasons, thermal, power, tc.thermal, tc.power)
		}
	}
}
