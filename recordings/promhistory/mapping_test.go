package promhistory

import (
	"bytes"
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/heatsink-hpc/heatsink/collectors/prom"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/hwmon"
	"github.com/heatsink-hpc/heatsink/sensors/rapl"
)

var t0 = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// scrape turns exposition text into the matrix a range query over the
// given steps returns, as if every scrape had read the same text, plus the
// instance label Prometheus adds to a target's series.
func scrape(t *testing.T, text []byte, instance string, steps int) model.Matrix {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("parse exposition: %v", err)
	}
	var all []*dto.MetricFamily
	for _, f := range fams {
		all = append(all, f)
	}
	vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.TimeFromUnixNano(t0.UnixNano())}, all...)
	if err != nil {
		t.Fatalf("extract samples: %v", err)
	}
	var m model.Matrix
	for _, s := range vec {
		s.Metric["instance"] = model.LabelValue(instance)
		ss := &model.SampleStream{Metric: s.Metric}
		for i := range steps {
			ss.Values = append(ss.Values, model.SamplePair{Timestamp: s.Timestamp.Add(time.Duration(i) * time.Second), Value: s.Value})
		}
		m = append(m, ss)
	}
	return m
}

func newTestExporter(hosts ...string) *exporter {
	return &exporter{o: Options{Step: time.Second, Hosts: hosts}, mapper: newMapper(fieldsByMeasurement(), hostOf(hosts, nil)), cpu: newCPUDeriver()}
}

// byKey indexes points by series key and time.
func byKey(pts []point.Point) map[string]point.Point {
	out := map[string]point.Point{}
	for _, p := range pts {
		q := p
		q.Tags = slices.DeleteFunc(slices.Clone(p.Tags), func(t point.Tag) bool { return t.Key == "host" })
		out[q.SeriesKey()+" "+p.Time.Format(time.RFC3339)] = p
	}
	return out
}

// TestNodeExporterHwmonAndRAPLArriveUnderHeatsinkNames reads what node_exporter
// 1.5.0 exposed for the Intel fixture node (testdata/node_exporter-1.5.0.prom,
// recorded from Debian's prometheus-node-exporter with --path.sysfs on
// sensors/testdata/intel-node) and checks that every hwmon and RAPL series
// lands on the series heatsink's own sources write for the same sysfs tree,
// with the same temperatures and classes.
func TestNodeExporterHwmonAndRAPLArriveUnderHeatsinkNames(t *testing.T) {
	text, err := os.ReadFile("testdata/node_exporter-1.5.0.prom")
	if err != nil {
		t.Fatal(err)
	}
	ex := newTestExporter("node1")
	got := byKey(ex.assemble(t0, t0.Add(time.Second), []model.Matrix{scrape(t, text, "node1:9100", 2)}))

	sys := "../../sensors/testdata/intel-node/sys"
	var want []point.Point
	for _, src := range []interface {
		Discover(context.Context) error
		Sample(context.Context, time.Time, []point.Point) ([]point.Point, error)
	}{hwmon.New(sys, filter.Filter{}), rapl.New(sys, filter.Filter{})} {
		if err := src.Discover(context.Background()); err != nil {
			t.Fatal(err)
		}
		pts, err := src.Sample(context.Background(), t0, nil)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, pts...)
	}
	if len(want) == 0 {
		t.Fatal("heatsink's sources read nothing from the fixture")
	}
	checked := 0
	for key, w := range byKey(want) {
		g, ok := got[key]
		if !ok {
			t.Errorf("heatsink writes %s; the node_exporter export has no such series", key)
			continue
		}
		for _, f := range w.Fields {
			wv, _ := point.Float(f.Value)
			gv, ok := g.Float(f.Key)
			if !ok {
				if f.Key == "power_w" && w.Measurement == "rapl" {
					continue // derived by heatsink; Prometheus stored no rate
				}
				t.Errorf("%s: field %s missing from the export", key, f.Key)
				continue
			}
			if math.Abs(gv-wv) > 1e-6*math.Max(1, math.Abs(wv)) {
				t.Errorf("%s: %s = %v from node_exporter, heatsink read %v", key, f.Key, gv, wv)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d fields compared", checked)
	}
	// The package sensor is classed as heatsink classes it.
	pkg := got["hwmon,chip=platform_coretemp_0,chip_name=coretemp,class=cpu_package,label=Package id 0,sensor=temp1 "+t0.Format(time.RFC3339)]
	if v, ok := pkg.Float("temp_c"); !ok || v != 46 {
		t.Errorf("coretemp package: temp_c %v %v, want 46", v, ok)
	}
	// NVMe's unset thresholds (65261.85 °C) are absent, as heatsink's are.
	for _, p := range got {
		if v, ok := p.Float("max_c"); ok && v > 1000 {
			t.Errorf("%s: implausible max_c %v kept", p.SeriesKey(), v)
		}
	}
}

func TestNodeExporterHostMetrics(t *testing.T) {
	text, err := os.ReadFile("testdata/node_exporter-1.5.0.prom")
	if err != nil {
		t.Fatal(err)
	}
	m := scrape(t, text, "10.0.0.7:9100", 3)
	// The CPU counters move by one second of user time a step on cpu0.
	for _, s := range m {
		if s.Metric[model.MetricNameLabel] == cpuSeconds && s.Metric["cpu"] == "0" && s.Metric["mode"] == "user" {
			for i := range s.Values {
				s.Values[i].Value += model.SampleValue(float64(i) * 0.25)
			}
		}
		if s.Metric[model.MetricNameLabel] == cpuSeconds && s.Metric["cpu"] == "0" && s.Metric["mode"] == "idle" {
			for i := range s.Values {
				s.Values[i].Value += model.SampleValue(float64(i) * 0.75)
			}
		}
	}
	ex := newTestExporter("node7")
	ex.mapper.hostOf = hostOf([]string{"node7"}, map[string]string{"10.0.0.7:9100": "node7"})
	pts := ex.assemble(t0, t0.Add(2*time.Second), []model.Matrix{m})
	got := byKey(pts)
	at := func(key string, step int) point.Point {
		t.Helper()
		p, ok := got[key+" "+t0.Add(time.Duration(step)*time.Second).Format(time.RFC3339)]
		if !ok {
			t.Fatalf("no %s at step %d", key, step)
		}
		if p.Tag("host") != "node7" {
			t.Errorf("%s: host %q, want node7 (the instance's nodename)", key, p.Tag("host"))
		}
		return p
	}
	cpu0 := at("cpu,cpu=cpu0", 1)
	if v, _ := cpu0.Float("usage_pct"); math.Abs(v-25) > 1e-9 {
		t.Errorf("cpu0 usage_pct %v, want 25 (0.25 s user of 1 s)", v)
	}
	if v, _ := cpu0.Float("idle_pct"); math.Abs(v-75) > 1e-9 {
		t.Errorf("cpu0 idle_pct %v, want 75", v)
	}
	if _, ok := got["cpu,cpu=cpu1 "+t0.Add(time.Second).Format(time.RFC3339)]; ok {
		t.Error("cpu1's counters did not move, yet it has percentages")
	}
	if _, ok := got["cpu,cpu=cpu0 "+t0.Format(time.RFC3339)]; ok {
		t.Error("the first reading has percentages; there is nothing to compare it with")
	}
	mem := at("mem", 0)
	total, _ := mem.Float("total_bytes")
	avail, _ := mem.Float("available_bytes")
	used, _ := mem.Float("used_bytes")
	swap, _ := mem.Float("swap_used_bytes")
	if total != 3.344084992e10 || avail != 2.6752679936e10 || used != total-avail || swap != 8.589930496e9-8.32149504e9 {
		t.Errorf("mem: total %v available %v used %v swap used %v", total, avail, used, swap)
	}
	if _, ok := mem.Field("swap_total_bytes"); ok {
		t.Error("swap_total_bytes is not a data-model field")
	}
	load := at("load", 2)
	if v, _ := load.Float("load1"); v != 0.52 {
		t.Errorf("load1 %v", v)
	}
	if v, ok := load.Field("procs_running"); !ok || v.IntV() != 2 {
		t.Errorf("procs_running %v", v)
	}
	freq := at("cpufreq,cpu=cpu1", 0)
	if v, _ := freq.Float("freq_mhz"); math.Abs(v-4312.345) > 1e-9 {
		t.Errorf("cpu1 freq_mhz %v, want 4312.345", v)
	}
}

func TestDCGMExporterFieldsBecomeGPUFields(t *testing.T) {
	text, err := os.ReadFile("testdata/dcgm-exporter.prom")
	if err != nil {
		t.Fatal(err)
	}
	ex := newTestExporter("gpu-node-01")
	got := byKey(ex.assemble(t0, t0, []model.Matrix{scrape(t, text, "gpu-node-01:9400", 1)}))
	key := func(i int, uuid string) string {
		return "gpu,gpu=" + string(rune('0'+i)) + ",model=NVIDIA H100 80GB HBM3,uuid=" + uuid + " " + t0.Format(time.RFC3339)
	}
	g0, ok := got[key(0, "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52")]
	if !ok {
		t.Fatalf("no gpu 0 point; got %v", slices.Collect(func(yield func(string) bool) {
			for k := range got {
				if !yield(k) {
					return
				}
			}
		}))
	}
	if g0.Tag("host") != "gpu-node-01" {
		t.Errorf("host %q, want the exporter's Hostname", g0.Tag("host"))
	}
	want := map[string]float64{"temp_c": 61, "mem_temp_c": 52, "power_w": 689.123, "energy_j": 123456789.012,
		"sm_clock_mhz": 1980, "mem_clock_mhz": 2619, "util_pct": 100, "mem_util_pct": 87,
		"mem_used_bytes": 40000 << 20, "clock_event_reasons": 4, "throttle_power": 1, "throttle_thermal": 0}
	for f, w := range want {
		v, ok := g0.Float(f)
		if !ok || math.Abs(v-w) > 1e-9*math.Max(1, w) {
			t.Errorf("gpu 0 %s = %v (%v), want %v", f, v, ok, w)
		}
	}
	if v, _ := g0.Field("mem_used_bytes"); v.Kind() != lineprotocol.Int {
		t.Errorf("mem_used_bytes is %v, want an integer as NVML writes it", v.Kind())
	}
	g1 := got[key(1, "GPU-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901")]
	if _, ok := g1.Field("mem_temp_c"); ok {
		t.Error("gpu 1's blank memory temperature (9223372036854775794) was kept; an unsupported sensor is absent")
	}
	if v, _ := g1.Float("temp_c"); v != 34 {
		t.Errorf("gpu 1 temp_c %v", v)
	}
}

// TestHeatsinkMetricsRoundTrip exposes points of every measurement through
// collectors/prom's sink, as `collect --listen` serves them, and reads the
// exposition back: the same measurements, tags and values, with the data
// model's kinds.
func TestHeatsinkMetricsRoundTrip(t *testing.T) {
	mk := func(m string, tags []point.Tag, fields func(p *point.Point)) point.Point {
		p := point.New(m, t0)
		p.Tags = append([]point.Tag{{Key: "host", Value: "node1"}}, tags...)
		fields(&p)
		return p
	}
	in := []point.Point{
		mk("gpu", []point.Tag{{Key: "gpu", Value: "0"}, {Key: "uuid", Value: "GPU-1"}, {Key: "model", Value: "H100"}}, func(p *point.Point) {
			p.AddFloat("temp_c", 55).AddFloat("mem_temp_c", 60).AddFloat("power_w", 400.5).AddFloat("energy_j", 12345.678).
				AddFloat("util_pct", 97).AddInt("mem_used_bytes", 1<<30).AddInt("pstate", 0).AddFloat("sm_clock_mhz", 1980).
				AddInt("clock_event_reasons", 4).AddBool("throttle_thermal", false).AddBool("throttle_power", true).AddFloat("slowdown_c", 90)
		}),
		mk("hwmon", []point.Tag{{Key: "chip", Value: "platform_coretemp_0"}, {Key: "chip_name", Value: "coretemp"}, {Key: "sensor", Value: "temp1"}, {Key: "label", Value: "Package id 0"}, {Key: "class", Value: "cpu_package"}}, func(p *point.Point) {
			p.AddFloat("temp_c", 47).AddFloat("max_c", 84).AddFloat("crit_c", 94)
		}),
		mk("tank", []point.Tag{{Key: "tank", Value: "pod1"}, {Key: "vendor", Value: "submer"}}, func(p *point.Point) {
			p.AddFloat("coolant_temp_c", 31.5).AddBool("pump1_on", true).AddFloat("pump1_rpm", 2400).AddFloat("dissipation_kw", 3.2).
				AddFloat("water_flow_lpm", 20).AddInt("errors", 0)
		}),
		mk("rapl", []point.Tag{{Key: "zone", Value: "package-0"}, {Key: "zone_id", Value: "intel-rapl:0"}}, func(p *point.Point) {
			p.AddFloat("energy_j", 72509.8).AddFloat("power_w", 35)
		}),
		mk("collector_tick", nil, func(p *point.Point) {
			p.AddFloat("lag_s", 0.002).AddUint("missed_ticks_total", 3).AddInt("points", 120)
		}),
		mk("collector_source", []point.Tag{{Key: "source", Value: "hwmon"}}, func(p *point.Point) { p.AddBool("ok", true).AddUint("errors_total", 1) }),
		mk("cpu", []point.Tag{{Key: "cpu", Value: "total"}}, func(p *point.Point) { p.AddFloat("usage_pct", 12.5) }),
		mk("mem", nil, func(p *point.Point) { p.AddUint("used_bytes", 1<<33) }),
		mk("pdu", []point.Tag{{Key: "pdu", Value: "rack1"}, {Key: "phase", Value: "1"}}, func(p *point.Point) {
			p.AddFloat("current_a", 12.3).AddFloat("power_w", 2800).AddBool("power_derived", true)
		}),
		mk("cpufreq", []point.Tag{{Key: "cpu", Value: "cpu3"}}, func(p *point.Point) { p.AddFloat("freq_mhz", 3400) }),
	}
	// The job tag is exported as slurm_job and left out on the way back:
	// a run's series must not split at the job's start.
	withJob := slices.Clone(in)
	withJob[0].Tags = append(slices.Clone(in[0].Tags), point.Tag{Key: "job", Value: "4242"})
	sink := prom.New(prom.Options{Now: func() time.Time { return t0 }})
	if err := sink.Write(withJob); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(sink)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(&buf, f); err != nil {
			t.Fatal(err)
		}
	}
	ex := newTestExporter("node1")
	out := ex.assemble(t0, t0, []model.Matrix{scrape(t, buf.Bytes(), "node1:9109", 1)})
	got := map[string]point.Point{}
	for _, p := range out {
		got[p.SeriesKey()] = p
	}
	for _, w := range in {
		g, ok := got[w.SeriesKey()]
		if !ok {
			t.Errorf("%s did not come back; got %d series", w.SeriesKey(), len(got))
			continue
		}
		for _, f := range w.Fields {
			gf, ok := g.Field(f.Key)
			if !ok {
				t.Errorf("%s: field %s did not come back", w.SeriesKey(), f.Key)
				continue
			}
			if gf.Kind() != f.Value.Kind() {
				t.Errorf("%s.%s came back as %v, want %v", w.Measurement, f.Key, gf.Kind(), f.Value.Kind())
			}
			wv, _ := point.Float(f.Value)
			gv, _ := point.Float(gf)
			if math.Abs(gv-wv) > 1e-9*math.Max(1, math.Abs(wv)) {
				t.Errorf("%s.%s = %v, want %v", w.Measurement, f.Key, gv, wv)
			}
		}
		if len(g.Fields) != len(w.Fields) {
			t.Errorf("%s: %d fields back, want %d", w.SeriesKey(), len(g.Fields), len(w.Fields))
		}
	}
}

func TestFieldInvertsTheExpositionNames(t *testing.T) {
	ms := fieldsByMeasurement()
	for _, tc := range []struct{ metric, measurement, field string }{
		{"heatsink_gpu_memory_temperature_celsius", "gpu", "mem_temp_c"},
		{"heatsink_gpu_energy_joules_total", "gpu", "energy_j"},
		{"heatsink_collector_tick_missed_ticks_total", "collector_tick", "missed_ticks_total"},
		{"heatsink_collector_tick_lag_seconds", "collector_tick", "lag_s"},
		{"heatsink_influx_sink_spool_bytes", "influx_sink", "spool_bytes"},
		{"heatsink_tank_dissipation_kilowatts", "tank", "dissipation_kw"},
		{"heatsink_cpufreq_frequency_hertz", "cpufreq", "freq_mhz"},
		{"heatsink_gpu_utilization_ratio", "gpu", "util_pct"},
	} {
		m, f, _, ok := prom.Field(tc.metric, ms)
		if !ok || m != tc.measurement || f != tc.field {
			t.Errorf("Field(%s) = %s.%s %v, want %s.%s", tc.metric, m, f, ok, tc.measurement, tc.field)
		}
	}
	for _, bad := range []string{"heatsink_alert", "heatsink_gpu_model_info", "node_load1", "heatsink_nosuch_thing"} {
		if _, _, _, ok := prom.Field(bad, ms); ok {
			t.Errorf("Field(%s) is ok; it is no data-model field", bad)
		}
	}
	if !strings.HasPrefix(nodeMetrics, "node_") {
		t.Fatal(nodeMetrics)
	}
}

// BenchmarkAssemble measures turning one query window (10,000 steps of an
// 8-GPU node's DCGM fields and 34 coretemp sensors) into points, per sample.
func BenchmarkAssemble(b *testing.B) {
	const steps = 10000
	var m model.Matrix
	add := func(metric model.Metric) {
		ss := &model.SampleStream{Metric: metric, Values: make([]model.SamplePair, steps)}
		for i := range ss.Values {
			ss.Values[i] = model.SamplePair{Timestamp: model.TimeFromUnixNano(t0.Add(time.Duration(i) * time.Second).UnixNano()), Value: model.SampleValue(40 + i%20)}
		}
		m = append(m, ss)
	}
	for g := 0; g < 8; g++ {
		for name := range dcgm {
			add(model.Metric{model.MetricNameLabel: model.LabelValue(name), "gpu": model.LabelValue(strconv.Itoa(g)),
				"UUID": "GPU-x", "modelName": "H100", "Hostname": "n1", "instance": "n1:9400"})
		}
	}
	for s := 0; s < 34; s++ {
		add(model.Metric{model.MetricNameLabel: "node_hwmon_temp_celsius", "chip": "platform_coretemp_0",
			"sensor": model.LabelValue("temp" + strconv.Itoa(s)), "instance": "n1:9100"})
	}
	samples := len(m) * steps
	b.ResetTimer()
	for range b.N {
		ex := newTestExporter("n1")
		ex.assemble(t0, t0.Add((steps-1)*time.Second), []model.Matrix{m})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*samples), "ns/sample")
}
