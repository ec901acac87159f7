package filter

import (
	"strings"
	"testing"
)

func TestFilterSelectsByAnyName(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		device  []string
		sensor  []string
		keepDev bool
		keepSen bool
	}{
		{"zero keeps all", Spec{}, []string{"platform_coretemp_0", "coretemp"}, []string{"temp1", "Package id 0"}, true, true},
		{"include by driver name", Spec{DeviceInclude: "^coretemp$"}, []string{"platform_coretemp_0", "coretemp"}, nil, true, true},
		{"include misses", Spec{DeviceInclude: "^k10temp$"}, []string{"platform_coretemp_0", "coretemp"}, nil, false, true},
		{"exclude by id", Spec{DeviceExclude: "nvme"}, []string{"nvme_nvme0", "nvme"}, nil, false, true},
		{"exclude wins over include", Spec{DeviceInclude: ".", DeviceExclude: "coretemp"}, []string{"platform_coretemp_0"}, nil, false, true},
		{"sensor by label", Spec{SensorExclude: "^Core "}, nil, []string{"temp3", "Core 1"}, true, false},
		{"sensor by channel", Spec{SensorInclude: "^temp1$"}, nil, []string{"temp1", "Package id 0"}, true, true},
		{"sensor include misses", Spec{SensorInclude: "^temp1$"}, nil, []string{"temp2", "Core 0"}, true, false},
		{"empty names ignored", Spec{DeviceExclude: "^$"}, []string{"", "acpitz"}, nil, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := New(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Device(tt.device...); got != tt.keepDev {
				t.Errorf("Device(%q) = %v, want %v", tt.device, got, tt.keepDev)
			}
			if got := f.Sensor(tt.sensor...); got != tt.keepSen {
				t.Errorf("Sensor(%q) = %v, want %v", tt.sensor, got, tt.keepSen)
			}
		})
	}
}

func TestFilterBadExpressionIsNamed(t *testing.T) {
	_, err := New(Spec{SensorExclude: "Core ("})
	if err == nil || !strings.Contains(err.Error(), "sensor_exclude") || !strings.Contains(err.Error(), "Core (") {
		t.Fatalf("error %v should name sensor_exclude and the expression", err)
	}
	f, _ := New(Spec{DeviceInclude: "x"})
	if f.SelectsSensors() {
		t.Error("SelectsSensors with only a device expression")
	}
	f, _ = New(Spec{SensorInclude: "x"})
	if !f.SelectsSensors() {
		t.Error("SelectsSensors false with a sensor expression")
	}
}
