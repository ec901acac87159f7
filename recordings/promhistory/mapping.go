package promhistory

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/heatsink-hpc/heatsink/collectors/prom"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// kind is how a field is written: the data model's integers and booleans
// stay integers and booleans, though Prometheus stores every value as a
// float.
type kind uint8

const (
	kindFloat kind = iota
	kindInt
	kindUint
	kindBool
)

// target is where one Prometheus series lands: a field of a point of one
// measurement and tag set.
type target struct {
	measurement string
	tags        []point.Tag // sorted by key
	field       string
	scale       float64
	kind        kind
	// plausibleC drops temperature thresholds outside physical bounds, as
	// heatsink's own hwmon source does (NVMe's unset 65261.85 °C).
	plausibleC bool
	// reasons marks a clock event reasons bitmask: the thermal and power
	// booleans are decoded from it as the NVML source decodes them.
	reasons bool
	// dcgm marks a DCGM field, whose blank values mean "not supported".
	dcgm bool
}

// dcgmBlank is the least of DCGM's blank values: DCGM_FP64_BLANK is 2^47
// and the integer blanks sit near 2^63 (a T4 without a memory sensor
// reports DCGM_FI_DEV_MEMORY_TEMP 9223372036854775794). No reading of a
// field heatsink maps comes near it.
const dcgmBlank = 1 << 47

// dcgm maps the DCGM exporter's fields (dcp-metrics-included.csv and
// default-counters.csv of dcgm-exporter) to the gpu measurement. Energy is
// in millijoules, the frame buffer in MiB.
var dcgm = map[string]struct {
	field string
	scale float64
	kind  kind
}{
	"DCGM_FI_DEV_GPU_TEMP":                 {schema.FieldTempC, 1, kindFloat},
	"DCGM_FI_DEV_MEMORY_TEMP":              {schema.FieldMemTempC, 1, kindFloat},
	"DCGM_FI_DEV_POWER_USAGE":              {schema.FieldPowerW, 1, kindFloat},
	"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": {schema.FieldEnergyJ, 1e-3, kindFloat},
	"DCGM_FI_DEV_SM_CLOCK":                 {schema.FieldSMClockMHz, 1, kindFloat},
	"DCGM_FI_DEV_MEM_CLOCK":                {schema.FieldMemClockMHz, 1, kindFloat},
	"DCGM_FI_DEV_GPU_UTIL":                 {schema.FieldUtilPct, 1, kindFloat},
	"DCGM_FI_DEV_MEM_COPY_UTIL":            {schema.FieldMemUtilPct, 1, kindFloat},
	"DCGM_FI_DEV_FB_USED":                  {schema.FieldMemUsedBytes, 1 << 20, kindInt},
	"DCGM_FI_DEV_POWER_MGMT_LIMIT":         {schema.FieldPowerLimitW, 1, kindFloat},
	"DCGM_FI_DEV_SLOWDOWN_TEMP":            {schema.FieldSlowdownC, 1, kindFloat},
	"DCGM_FI_DEV_SHUTDOWN_TEMP":            {schema.FieldShutdownC, 1, kindFloat},
	"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS":   {schema.FieldClockEventReasons, 1, kindInt},
	"DCGM_FI_DEV_CLOCKS_EVENT_REASONS":     {schema.FieldClockEventReasons, 1, kindInt},
}

// nodeHwmon maps node_exporter's hwmon metrics to hwmon fields.
var nodeHwmon = map[string]struct {
	field     string
	plausible bool
}{
	"node_hwmon_temp_celsius":      {schema.FieldTempC, false},
	"node_hwmon_temp_max_celsius":  {schema.FieldMaxC, true},
	"node_hwmon_temp_crit_celsius": {schema.FieldCritC, true},
	"node_hwmon_fan_rpm":           {schema.FieldFanRPM, false},
	"node_hwmon_power_watt":        {schema.FieldPowerW, false},
	"node_hwmon_power_input_watt":  {schema.FieldPowerW, false},
}

// nodeSimple maps node_exporter's host metrics without labels of their own.
var nodeSimple = map[string]struct {
	measurement, field string
	kind               kind
}{
	"node_memory_MemTotal_bytes":     {schema.Mem, "total_bytes", kindUint},
	"node_memory_MemAvailable_bytes": {schema.Mem, "available_bytes", kindUint},
	"node_load1":                     {schema.Load, "load1", kindFloat},
	"node_load5":                     {schema.Load, "load5", kindFloat},
	"node_load15":                    {schema.Load, "load15", kindFloat},
	"node_procs_running":             {schema.Load, "procs_running", kindInt},
}

// Info series that name what other series measure; they are read, not kept.
const (
	hwmonChipNames   = "node_hwmon_chip_names"
	hwmonSensorLabel = "node_hwmon_sensor_label"
	cpuSeconds       = "node_cpu_seconds_total"
	memSwapTotal     = "node_memory_SwapTotal_bytes"
	memSwapFree      = "node_memory_SwapFree_bytes"
)

// nonFloat are the data model's fields that are not floats. Prometheus
// keeps only floats, so heatsink's own metrics come back with their kinds
// from here.
var nonFloat = map[string]kind{
	"mem_used_bytes": kindInt, "mem_total_bytes": kindInt, "pstate": kindInt, "clock_event_reasons": kindInt,
	"total_bytes": kindUint, "available_bytes": kindUint, "used_bytes": kindUint, "swap_used_bytes": kindUint,
	"procs_running": kindInt, "errors": kindInt, "warnings": kindInt, "points": kindInt,
	"missed_ticks_total": kindUint, "errors_total": kindUint, "timeouts_total": kindUint,
	"sent_points_total": kindUint, "retries_total": kindUint, "direct_points_total": kindUint, "dropped_points_total": kindUint,
	"rejected_points_total": kindUint, "spool_bytes": kindUint, "spool_points": kindUint,
	"throttle_thermal": kindBool, "throttle_power": kindBool, "pump1_on": kindBool, "pump2_on": kindBool,
	"power_derived": kindBool, "ok": kindBool, "available": kindBool, "demo": kindBool, "factory": kindBool, "test": kindBool,
	"maintenance": kindBool,
}

// mapper turns series into targets. It learns hwmon chip names and sensor
// labels from node_exporter's info series, which must be seen first.
type mapper struct {
	schema       map[string][]string
	hostOf       func(model.Metric) string
	chipNames    map[string]string // host \x00 chip
	sensorLabels map[string]string // host \x00 chip \x00 sensor
}

func newMapper(schema map[string][]string, hostOf func(model.Metric) string) *mapper {
	return &mapper{schema: schema, hostOf: hostOf, chipNames: map[string]string{}, sensorLabels: map[string]string{}}
}

// learn reads an info series; it reports whether m was one.
func (mp *mapper) learn(m model.Metric) bool {
	host := mp.hostOf(m)
	switch m[model.MetricNameLabel] {
	case hwmonChipNames:
		mp.chipNames[host+"\x00"+string(m["chip"])] = string(m["chip_name"])
		return true
	case hwmonSensorLabel:
		mp.sensorLabels[host+"\x00"+string(m["chip"])+"\x00"+string(m["sensor"])] = string(m["label"])
		return true
	}
	return false
}

// target maps a series; ok is false for series heatsink has no field for.
func (mp *mapper) target(m model.Metric) (target, bool) {
	name := string(m[model.MetricNameLabel])
	host := mp.hostOf(m)
	switch {
	case strings.HasPrefix(name, prom.Namespace+"_"):
		return mp.heatsink(name, m, host)
	case strings.HasPrefix(name, "DCGM_FI_"):
		d, ok := dcgm[name]
		if !ok {
			return target{}, false
		}
		t := target{measurement: schema.GPU, field: d.field, scale: d.scale, kind: d.kind, reasons: d.field == "clock_event_reasons", dcgm: true}
		t.tags = tags("gpu", string(m["gpu"]), "uuid", string(m["UUID"]), "model", string(m["modelName"]), "host", host)
		return t, true
	case strings.HasPrefix(name, "node_hwmon_"):
		h, ok := nodeHwmon[name]
		if !ok {
			return target{}, false
		}
		chip, sensor := string(m["chip"]), string(m["sensor"])
		chipName := mp.chipNames[host+"\x00"+chip]
		label := mp.sensorLabels[host+"\x00"+chip+"\x00"+sensor]
		t := target{measurement: schema.Hwmon, field: h.field, scale: 1, plausibleC: h.plausible}
		t.tags = tags("chip", chip, "chip_name", chipName, "sensor", sensor, "label", label,
			"class", schema.HwmonClass(chipName, label), "host", host)
		return t, true
	case strings.HasPrefix(name, "node_rapl_") && strings.HasSuffix(name, "_joules_total"):
		zone := strings.TrimSuffix(strings.TrimPrefix(name, "node_rapl_"), "_joules_total")
		// node_exporter splits "package-0" into the name package and the
		// index 0; the other zones' index is not part of their name.
		if zone == "package" {
			zone += "-" + string(m["index"])
		}
		zoneID := ""
		if p := string(m["path"]); p != "" {
			zoneID = path.Base(p)
		}
		return target{measurement: schema.RAPL, field: schema.FieldEnergyJ, scale: 1,
			tags: tags("zone", zone, "zone_id", zoneID, "host", host)}, true
	case name == "node_cpu_scaling_frequency_hertz", name == "node_cpu_scaling_frequency_min_hertz",
		name == "node_cpu_scaling_frequency_max_hertz":
		field := map[string]string{"node_cpu_scaling_frequency_hertz": "freq_mhz",
			"node_cpu_scaling_frequency_min_hertz": "min_mhz", "node_cpu_scaling_frequency_max_hertz": "max_mhz"}[name]
		return target{measurement: schema.Cpufreq, field: field, scale: 1e-6,
			tags: tags("cpu", "cpu"+string(m["cpu"]), "host", host)}, true
	}
	if s, ok := nodeSimple[name]; ok {
		return target{measurement: s.measurement, field: s.field, scale: 1, kind: s.kind, tags: tags("host", host)}, true
	}
	return target{}, false
}

// heatsink maps heatsink's own exposition back to the data model: the
// inverse of collectors/prom's names, its labels back to tags.
func (mp *mapper) heatsink(name string, m model.Metric, host string) (target, bool) {
	meas, field, scale, ok := prom.Field(name, mp.schema)
	if !ok {
		return target{}, false
	}
	t := target{measurement: meas, field: field, scale: scale, kind: nonFloat[field]}
	var kv []string
	for l, v := range m {
		switch l {
		case model.MetricNameLabel, "instance", "job", "exported_instance", "host", "slurm_job", "jobs":
			// The Slurm job tags are dropped, as slurm.Gather drops it:
			// analysis keys a series by all its tags, and a GPU must be one
			// series across the job's start. The job's span becomes phases.
			continue
		}
		kv = append(kv, string(l), string(v))
	}
	if ei := m["exported_instance"]; ei != "" {
		kv = append(kv, "instance", string(ei))
	}
	t.tags = tags(append(kv, "host", host)...)
	return t, true
}

// tags makes sorted tags of key, value pairs, leaving out empty values as
// line protocol must.
func tags(kv ...string) []point.Tag {
	out := make([]point.Tag, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			out = append(out, point.Tag{Key: kv[i], Value: kv[i+1]})
		}
	}
	slices.SortFunc(out, func(a, b point.Tag) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// hostPart is an instance label without its port.
func hostPart(instance string) string {
	if i := strings.LastIndexByte(instance, ':'); i > 0 {
		if _, err := strconv.Atoi(instance[i+1:]); err == nil {
			h := instance[:i]
			return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
		}
	}
	return instance
}

// Reads reports whether Export reads the metric: a heatsink name of a
// data-model field, or a DCGM exporter or node_exporter metric it maps.
func Reads(metric string) bool {
	switch {
	case strings.HasPrefix(metric, prom.Namespace+"_"):
		_, _, _, ok := prom.Field(metric, fieldsByMeasurement())
		return ok
	case strings.HasPrefix(metric, "DCGM_FI_"):
		_, ok := dcgm[metric]
		return ok
	}
	return regexp.MustCompile("^(" + nodeMetrics + ")$").MatchString(metric)
}
