package alerts

// kind is what a field holds, so that a rule can be checked against the
// field it watches when the configuration loads rather than never firing.
type kind uint8

const (
	numeric kind = iota
	boolean
	text
)

// schema is one measurement of docs/data-model.md: the tags that identify its
// devices and the fields its sources write. open marks measurements whose
// fields (or tags) are not a closed set: a workload's own metrics, the tags of
// the series an alert fired on.
type schema struct {
	tags       []string
	fields     map[string]kind
	openFields bool
	openTags   bool
	// sensor marks measurements sampled every tick, which the "silent"
	// condition watches when a rule names no measurement.
	sensor bool
}

// measurements is docs/data-model.md as code; TestSchemaMatchesDataModel
// keeps the two in step. It is read, never written.
var measurements = map[string]schema{
	"cpu": {tags: []string{"cpu"}, sensor: true, fields: nums(
		"usage_pct", "user_pct", "system_pct", "iowait_pct", "idle_pct")},
	"mem": {sensor: true, fields: nums(
		"total_bytes", "available_bytes", "used_bytes", "swap_used_bytes")},
	"load": {sensor: true, fields: nums("load1", "load5", "load15", "procs_running")},
	"hwmon": {tags: []string{"chip", "chip_name", "sensor", "label", "class"}, sensor: true, fields: nums(
		"temp_c", "max_c", "crit_c", "fan_rpm", "power_w")},
	"cpufreq": {tags: []string{"cpu"}, sensor: true, fields: nums("freq_mhz", "min_mhz", "max_mhz")},
	"rapl":    {tags: []string{"zone", "zone_id"}, sensor: true, fields: nums("energy_j", "power_w")},
	"nvme": {tags: []string{"device", "model", "serial", "sensor"}, sensor: true, fields: nums(
		"temp_c", "warn_c", "crit_c")},
	"gpu": {tags: []string{"gpu", "uuid", "model"}, sensor: true, fields: with(nums(
		"temp_c", "mem_temp_c", "power_w", "energy_j", "power_limit_w", "util_pct", "mem_util_pct",
		"mem_used_bytes", "mem_total_bytes", "pstate", "sm_clock_mhz", "mem_clock_mhz",
		"clock_event_reasons", "slowdown_c", "shutdown_c", "gpu_max_c", "mem_max_c"),
		boolean, "throttle_thermal", "throttle_power")},
	// PDUs and generic tanks also write the fields their configuration maps
	// (generic OIDs, http-json paths), so those names cannot be checked here.
	"pdu": {tags: []string{"pdu", "phase", "bank", "outlet"}, sensor: true, openFields: true, fields: with(nums(
		"current_a", "power_w", "energy_j"), boolean, "power_derived")},
	"tank": {tags: []string{"tank", "vendor"}, sensor: true, openFields: true, fields: with(with(nums(
		"coolant_temp_c", "setpoint_c", "consumption_w", "dissipation_kw", "dissipation_c",
		"dissipation_w", "mpue", "pump1_rpm", "pump2_rpm", "coolant_in_c", "coolant_out_c",
		"coolant_flow_lpm", "water_in_c", "water_out_c", "water_flow_lpm",
		"alarm_c", "controller_cpu0_c", "controller_cpu1_c", "errors", "warnings"),
		boolean, "pump1_on", "pump2_on", "demo", "factory", "test", "maintenance"),
		text, "mode", "errors_text", "warnings_text")},
	"event": {tags: []string{"run", "kind", "phase"}, fields: with(nums(
		"iteration", "exit_status", "runtime_s"), text, "message")},
	"iteration": {tags: []string{"run", "workload"}, openFields: true, fields: nums(
		"n", "runtime_s", "exit_status")},
	"alert": {tags: []string{"rule", "severity", "measurement"}, openTags: true, fields: with(nums(
		"value", "threshold"), text, "state", "message")},
	"collector_tick": {fields: nums("lag_s", "missed_ticks_total", "points")},
	"collector_source": {tags: []string{"source"}, fields: with(nums(
		"latency_s", "points", "errors_total", "timeouts_total"), boolean, "ok")},
}

func nums(names ...string) map[string]kind {
	m := make(map[string]kind, len(names))
	for _, n := range names {
		m[n] = numeric
	}
	return m
}

func with(m map[string]kind, k kind, names ...string) map[string]kind {
	for _, n := range names {
		m[n] = k
	}
	return m
}

// hasTag reports whether the measurement's points can carry the tag key;
// the collector adds host to every point.
func (s schema) hasTag(key string) bool {
	if key == "host" || s.openTags {
		return true
	}
	for _, t := range s.tags {
		if t == key {
			return true
		}
	}
	return false
}

// field returns the kind of a field and whether any source writes it.
func (s schema) field(name string) (kind, bool) {
	k, ok := s.fields[name]
	if !ok && s.openFields {
		return numeric, true
	}
	return k, ok
}
