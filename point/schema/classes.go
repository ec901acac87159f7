package schema

import "strings"

// HwmonClass is the class tag of an hwmon temperature (TagClass), from the
// chip's driver name and the channel's label: "cpu_package" and "cpu_core"
// for Intel coretemp's "Package id N" and "Core N", "cpu" for AMD's k10temp
// and zenpower (Tctl, Tdie, TccdN) and other CPU sensors, "nvme", "acpi" for
// ACPI thermal zones, "gpu" for GPU drivers, else "other".
//
// It is part of the data model rather than of the hwmon source because
// readers of other tools' recordings of the same sysfs files
// (node_exporter's node_hwmon_*) must class them as heatsink's own source
// does, so that an analysis finds the same components in either.
func HwmonClass(chipName, label string) string {
	switch chipName {
	case "coretemp":
		switch {
		case strings.HasPrefix(label, "Package id"), strings.HasPrefix(label, "Physical id"):
			return "cpu_package"
		case strings.HasPrefix(label, "Core"):
			return "cpu_core"
		}
		return "cpu"
	case "k10temp", "zenpower", "k8temp", "fam15h_power":
		return "cpu"
	case "nvme":
		return "nvme"
	case "acpitz":
		return "acpi"
	case "amdgpu", "radeon", "nouveau", "i915", "xe":
		return "gpu"
	}
	return "other"
}
