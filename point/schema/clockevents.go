package schema

// Clock event reason bits of an NVIDIA GPU (the clock_event_reasons field),
// as nvml.h defines them (nvmlClocksEventReason*, nvmlClocksThrottleReason*).
// They are written out here rather than taken from the NVML bindings because
// a reader of a recording (DCGM's DCGM_FI_DEV_CLOCKS_EVENT_REASONS in
// Prometheus) must decode them without loading NVML; sensors/nvml's tests
// check them against the bindings.
const (
	ClockEventSwPowerCap           uint64 = 0x4
	ClockEventHwSlowdown           uint64 = 0x8
	ClockEventSwThermalSlowdown    uint64 = 0x20
	ClockEventHwThermalSlowdown    uint64 = 0x40
	ClockEventHwPowerBrakeSlowdown uint64 = 0x80

	// ClockEventsThermal is what slows the clocks for heat
	// (FieldThrottleThermal).
	ClockEventsThermal = ClockEventHwSlowdown | ClockEventHwThermalSlowdown | ClockEventSwThermalSlowdown
	// ClockEventsPower is the power cap and the external power brake
	// (FieldThrottlePower).
	ClockEventsPower = ClockEventSwPowerCap | ClockEventHwPowerBrakeSlowdown
)

// DecodeClockEvents reports whether a clock event reasons bitmask holds a
// thermal slowdown (HW slowdown, HW thermal or SW thermal slowdown) and a
// power limit (SW power cap, HW power brake): the throttle_thermal and
// throttle_power fields derived from clock_event_reasons.
func DecodeClockEvents(reasons uint64) (thermal, power bool) {
	return reasons&ClockEventsThermal != 0, reasons&ClockEventsPower != 0
}
