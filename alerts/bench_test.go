package alerts_test

import (
	"fmt"
	"io/fs"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
)

// benchTick is one tick of a large GPU node: 8 GPUs, 64 CPU cores, a tank,
// PDU outlets and the collector's own health, about 200 points.
func benchTick() []point.Point {
	var ps []point.Point
	for i := range 8 {
		ps = append(ps, gpu(i, f{"temp_c", 60.0}, f{"mem_temp_c", 70.0}, f{"power_w", 450.0}, f{"energy_j", 1e6},
			f{"util_pct", 99.0}, f{"sm_clock_mhz", 1755}, f{"clock_event_reasons", 0x4}, f{"throttle_thermal", false},
			f{"throttle_power", true}, f{"slowdown_c", 89.0}, f{"mem_max_c", 95.0}))
	}
	for i := range 64 {
		ps = append(ps, pt("hwmon", fmt.Sprintf("chip=platform_coretemp_%d chip_name=coretemp sensor=temp%d class=cpu_core host=n1", i/32, i+2), f{"temp_c", 55.0}, f{"max_c", 100.0}, f{"crit_c", 100.0}))
		ps = append(ps, pt("cpufreq", fmt.Sprintf("cpu=cpu%d host=n1", i), f{"freq_mhz", 2400.0}, f{"min_mhz", 800.0}, f{"max_mhz", 3500.0}))
	}
	for i := range 33 {
		ps = append(ps, pt("cpu", fmt.Sprintf("cpu=cpu%d host=n1", i), f{"usage_pct", 50.0}, f{"idle_pct", 50.0}))
	}
	ps = append(ps, tank(f{"coolant_temp_c", 32.0}, f{"setpoint_c", 35.0}, f{"alarm_c", 45.0}, f{"mode", "normal"}, f{"demo", false}))
	ps = append(ps, pt("nvme", "device=nvme0 sensor=Composite host=n1", f{"temp_c", 40.0}, f{"warn_c", 70.0}))
	for i := range 8 {
		ps = append(ps, pt("pdu", fmt.Sprintf("pdu=rack1 outlet=%d host=n1", i), f{"current_a", 4.0}, f{"power_w", 900.0}))
	}
	for i := range 10 {
		ps = append(ps, pt("collector_source", fmt.Sprintf("source=s%d host=n1", i), f{"latency_s", 0.001}, f{"ok", true}))
	}
	return append(ps, pt("collector_tick", "host=n1", f{"points", 200}))
}

// BenchmarkWrite measures one tick through the shipped rules plus enough
// more (rates, forecasts, per-core thresholds) to make 20. The goal is
// well under 100 µs per tick.
func BenchmarkWrite(b *testing.B) {
	def, err := fs.ReadFile(configs.Examples, "alerts.yaml")
	if err != nil {
		b.Fatal(err)
	}
	cfg := parseRules(b, string(def)+`
    - {name: gpu_rising, measurement: gpu, field: temp_c, rate: {op: ">", per_min: 20}}
    - {name: gpu_will_throttle, measurement: gpu, field: temp_c, forecast: {op: ">=", value: slowdown_c, within: 2m}}
    - {name: core_hot, measurement: hwmon, field: temp_c, tags_regexp: {class: "cpu_core|cpu_package"}, threshold: {op: ">", value: max_c - 10}}
    - {name: core_rising, measurement: hwmon, field: temp_c, rate: {op: ">", per_min: 30, window: 30s}}
    - {name: freq_low, measurement: cpufreq, field: freq_mhz, threshold: {op: "<", value: min_mhz + 100}, for: 10s}
    - {name: cpu_busy, measurement: cpu, field: usage_pct, tags: {cpu: cpu0}, threshold: {op: ">", value: 98}}
    - {name: outlet_power, measurement: pdu, field: power_w, threshold: {op: ">", value: 1500}}
    - {name: source_down, measurement: collector_source, field: ok, is: false, for: 5s}
    - {name: gpu_power_brake, measurement: gpu, field: throttle_power, is: true, for: 1m}
`)
	var now time.Time
	e, err := alerts.NewEngine(cfg, alerts.Options{Logger: quietLogger(), Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	tick := benchTick()
	// A minute of history first, so rates and forecasts run over full windows.
	start := t0
	step := func(i int) {
		now = start.Add(time.Duration(i) * time.Second)
		for j := range tick {
			tick[j].Time = now
		}
		e.Write(tick)
	}
	for i := range 60 {
		step(i)
	}
	b.ReportMetric(float64(len(tick)), "points/tick")
	b.ReportMetric(float64(e.Rules()), "rules")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		step(60 + i)
	}
}
