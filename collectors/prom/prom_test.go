package prom

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// serve registers the sink and serves /metrics on a real listener.
func serve(t *testing.T, s *Sink) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(s)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// scrape fetches the exposition and parses it with the official text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("content type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse exposition: %v", err)
	}
	return fams
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// sample finds the metric of family name whose labels include want, and
// returns its type and value.
func sample(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) (dto.MetricType, float64) {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric %s; have %s", name, familyNames(fams))
	}
	for _, m := range f.GetMetric() {
		got := labels(m)
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return f.GetType(), m.GetCounter().GetValue()
		default:
			return f.GetType(), m.GetGauge().GetValue()
		}
	}
	t.Fatalf("%s has no series with labels %v", name, want)
	return 0, 0
}

func familyNames(fams map[string]*dto.MetricFamily) string {
	var n []string
	for k := range fams {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, " ")
}

func tick(at time.Time) []point.Point {
	g := point.New("gpu", at)
	g.AddTag("gpu", "0").AddTag("uuid", "GPU-aa").AddTag("model", "NVIDIA H100 80GB HBM3").AddTag("host", "n1").AddTag("job", "4242")
	g.AddFloat("temp_c", 65.5).AddFloat("mem_temp_c", 71).AddFloat("power_w", 412.25).AddFloat("energy_j", 123456.5).
		AddFloat("util_pct", 87).AddFloat("sm_clock_mhz", 1980).AddInt("mem_used_bytes", 1<<34).AddInt("pstate", 0).
		AddInt("clock_event_reasons", 32).AddBool("throttle_thermal", true).AddBool("throttle_power", false)
	h := point.New("hwmon", at)
	h.AddTag("chip", "platform_coretemp_0").AddTag("chip_name", "coretemp").AddTag("sensor", "temp1").
		AddTag("label", "Package id 0").AddTag("class", "cpu_package").AddTag("host", "n1")
	h.AddFloat("temp_c", 48).AddFloat("crit_c", 100)
	pdu := point.New("pdu", at)
	pdu.AddTag("pdu", "rack1").AddTag("outlet", "7").AddTag("host", "n1")
	pdu.AddFloat("current_a", 3.2).AddFloat("power_w", 736).AddBool("power_derived", true)
	tank := point.New("tank", at)
	tank.AddTag("tank", "pod1").AddTag("vendor", "submer").AddTag("host", "n1")
	tank.AddFloat("coolant_temp_c", 31.5).AddFloat("dissipation_kw", 2.5).AddFloat("dissipation_w", 2500).
		AddFloat("water_flow_lpm", 12).AddBool("pump1_on", false).AddString("mode", "auto").
		AddString("errors_text", "E12 pump stall").AddInt("errors", 1)
	src := point.New("collector_source", at)
	src.AddTag("source", "hwmon").AddTag("host", "n1")
	src.AddFloat("latency_s", 0.0021).AddBool("ok", true).AddUint("errors_total", 3)
	ev := point.New("event", at)
	ev.AddTag("kind", "note").AddString("message", "not state")
	return []point.Point{g, h, pdu, tank, src, ev}
}

func TestScrapeShowsLatestReadingsInPrometheusNamesAndUnits(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := New(Options{Now: clk.now, Staleness: 30 * time.Second})
	url := serve(t, s)
	if err := s.Write(tick(clk.now())); err != nil {
		t.Fatal(err)
	}
	fams := scrape(t, url)

	gpu := map[string]string{"gpu": "0", "uuid": "GPU-aa", "model": "NVIDIA H100 80GB HBM3", "host": "n1", "slurm_job": "4242"}
	for _, c := range []struct {
		name string
		typ  dto.MetricType
		want float64
		lbl  map[string]string
	}{
		{"heatsink_gpu_temperature_celsius", dto.MetricType_GAUGE, 65.5, gpu},
		{"heatsink_gpu_memory_temperature_celsius", dto.MetricType_GAUGE, 71, gpu},
		{"heatsink_gpu_power_watts", dto.MetricType_GAUGE, 412.25, gpu},
		{"heatsink_gpu_energy_joules_total", dto.MetricType_COUNTER, 123456.5, gpu},
		{"heatsink_gpu_utilization_ratio", dto.MetricType_GAUGE, 0.87, gpu},
		{"heatsink_gpu_sm_clock_hertz", dto.MetricType_GAUGE, 1.98e9, gpu},
		{"heatsink_gpu_memory_used_bytes", dto.MetricType_GAUGE, 1 << 34, gpu},
		{"heatsink_gpu_pstate", dto.MetricType_GAUGE, 0, gpu},
		{"heatsink_gpu_clock_event_reasons", dto.MetricType_GAUGE, 32, gpu},
		{"heatsink_gpu_throttle_thermal", dto.MetricType_GAUGE, 1, gpu},
		{"heatsink_gpu_throttle_power", dto.MetricType_GAUGE, 0, gpu},
		{"heatsink_hwmon_temperature_celsius", dto.MetricType_GAUGE, 48,
			map[string]string{"chip": "platform_coretemp_0", "chip_name": "coretemp", "sensor": "temp1", "label": "Package id 0", "class": "cpu_package"}},
		{"heatsink_hwmon_crit_celsius", dto.MetricType_GAUGE, 100, map[string]string{"chip": "platform_coretemp_0"}},
		{"heatsink_pdu_current_amperes", dto.MetricType_GAUGE, 3.2, map[string]string{"pdu": "rack1", "outlet": "7"}},
		{"heatsink_pdu_power_derived", dto.MetricType_GAUGE, 1, map[string]string{"pdu": "rack1"}},
		{"heatsink_tank_coolant_temperature_celsius", dto.MetricType_GAUGE, 31.5, map[string]string{"tank": "pod1", "vendor": "submer"}},
		{"heatsink_tank_dissipation_kilowatts", dto.MetricType_GAUGE, 2.5, map[string]string{"tank": "pod1"}},
		{"heatsink_tank_dissipation_watts", dto.MetricType_GAUGE, 2500, map[string]string{"tank": "pod1"}},
		{"heatsink_tank_water_flow_liters_per_minute", dto.MetricType_GAUGE, 12, map[string]string{"tank": "pod1"}},
		{"heatsink_tank_pump1_on", dto.MetricType_GAUGE, 0, map[string]string{"tank": "pod1"}},
		{"heatsink_tank_mode_info", dto.MetricType_GAUGE, 1, map[string]string{"tank": "pod1", "mode": "auto"}},
		{"heatsink_tank_errors", dto.MetricType_GAUGE, 1, map[string]string{"tank": "pod1"}},
		{"heatsink_collector_source_latency_seconds", dto.MetricType_GAUGE, 0.0021, map[string]string{"source": "hwmon"}},
		{"heatsink_collector_source_ok", dto.MetricType_GAUGE, 1, map[string]string{"source": "hwmon"}},
		{"heatsink_collector_source_errors_total", dto.MetricType_COUNTER, 3, map[string]string{"source": "hwmon"}},
	} {
		typ, v := sample(t, fams, c.name, c.lbl)
		if typ != c.typ {
			t.Errorf("%s is a %v, want %v", c.name, typ, c.typ)
		}
		if d := v - c.want; d > 1e-9*max(1, c.want) || d < -1e-9*max(1, c.want) {
			t.Errorf("%s = %v, want %v", c.name, v, c.want)
		}
	}
	if f := fams["heatsink_gpu_temperature_celsius"]; !strings.Contains(f.GetHelp(), "gpu.temp_c") {
		t.Errorf("help %q does not name the data-model field", f.GetHelp())
	}
	for name := range fams {
		if strings.Contains(name, "errors_text") || strings.HasPrefix(name, "heatsink_event_") || strings.Contains(name, "message") {
			t.Errorf("free text or events exported as %s", name)
		}
	}
	if _, ok := labels(fams["heatsink_gpu_temperature_celsius"].GetMetric()[0])["job"]; ok {
		t.Error("the Slurm job tag exported as job, which Prometheus overwrites on scrape")
	}
}

func TestSilentSeriesAreDroppedAfterTheStalenessWindow(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := New(Options{Now: clk.now, Staleness: 30 * time.Second})
	url := serve(t, s)
	s.Write(tick(clk.now()))
	// For 40 s only the GPU goes on reporting; the rest fell silent.
	for i := 0; i < 4; i++ {
		clk.add(10 * time.Second)
		s.Write(tick(clk.now())[:1])
	}
	fams := scrape(t, url)
	if _, v := sample(t, fams, "heatsink_gpu_temperature_celsius", map[string]string{"gpu": "0"}); v != 65.5 {
		t.Errorf("reporting GPU: %v", v)
	}
	for _, gone := range []string{"heatsink_hwmon_temperature_celsius", "heatsink_pdu_current_amperes", "heatsink_tank_mode_info"} {
		if _, ok := fams[gone]; ok {
			t.Errorf("%s still exported 40 s after its last reading with a 30 s window", gone)
		}
	}
	// A series that comes back is exported again.
	s.Write(tick(clk.now()))
	if _, v := sample(t, scrape(t, url), "heatsink_hwmon_temperature_celsius", nil); v != 48 {
		t.Errorf("returning hwmon sensor: %v", v)
	}
}

// When the Slurm job on the node ends (or another starts), the series
// labelled with the old job is dropped at the next write, not exported with
// a frozen value until the staleness window ends: Prometheus then sees the
// job's span as it was.
func TestSeriesOfAnEndedJobIsDroppedAtOnce(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := New(Options{Now: clk.now})
	url := serve(t, s)
	withJob := func(job string) []point.Point {
		pts := tick(clk.now())[:1]
		pts[0].SetTag("job", job) // "" removes it
		return pts
	}
	s.Write(withJob("4242"))
	if _, v := sample(t, scrape(t, url), "heatsink_gpu_temperature_celsius", map[string]string{"slurm_job": "4242"}); v != 65.5 {
		t.Fatalf("during the job: %v", v)
	}
	clk.add(time.Second)
	s.Write(withJob(""))
	for _, m := range scrape(t, url)["heatsink_gpu_temperature_celsius"].GetMetric() {
		if _, ok := labels(m)["slurm_job"]; ok {
			t.Errorf("the ended job's series is still exported: %v", labels(m))
		}
	}
	clk.add(time.Second)
	s.Write(withJob("4243"))
	fams := scrape(t, url)
	if n := len(fams["heatsink_gpu_temperature_celsius"].GetMetric()); n != 1 {
		t.Errorf("%d GPU series after the next job started, want 1 (job 4243's)", n)
	}
}

func TestAlertStatesAreExported(t *testing.T) {
	s := New(Options{Alerts: func() []AlertRule {
		return []AlertRule{
			{Name: "gpu_core_near_slowdown", Severity: "critical", Alerts: []Alert{
				{Measurement: "gpu", Tags: []point.Tag{{Key: "gpu", Value: "0"}, {Key: "host", Value: "n1"}, {Key: "job", Value: "7"}}, Firing: true},
				{Measurement: "gpu", Tags: []point.Tag{{Key: "gpu", Value: "1"}, {Key: "host", Value: "n1"}}},
			}},
			{Name: "pump_stopped", Severity: "warning"},
		}
	}})
	fams := scrape(t, serve(t, s))
	if _, v := sample(t, fams, "heatsink_alert", map[string]string{"rule": "gpu_core_near_slowdown", "severity": "critical",
		"alertstate": "firing", "measurement": "gpu", "gpu": "0", "host": "n1", "slurm_job": "7"}); v != 1 {
		t.Errorf("firing alert = %v", v)
	}
	if _, v := sample(t, fams, "heatsink_alert", map[string]string{"alertstate": "pending", "gpu": "1"}); v != 1 {
		t.Errorf("pending alert = %v", v)
	}
	if _, v := sample(t, fams, "heatsink_alert_rule_firing_series", map[string]string{"rule": "gpu_core_near_slowdown"}); v != 1 {
		t.Errorf("firing series of the GPU rule = %v, want 1 (the pending one does not count)", v)
	}
	if _, v := sample(t, fams, "heatsink_alert_rule_firing_series", map[string]string{"rule": "pump_stopped", "severity": "warning"}); v != 0 {
		t.Errorf("a quiet rule is exported as %v, want 0", v)
	}
}

// Every field of docs/data-model.md gets a valid name of its own with its
// unit, so a new field cannot silently collide with another or lose its unit.
func TestEveryDataModelFieldHasADistinctNameWithItsUnit(t *testing.T) {
	seen := map[string]string{}
	n := 0
	for _, m := range schema.Measurements() {
		for _, f := range m.Fields {
			fam, ok := name(m.Name, f, false)
			if skippedMeasurements[m.Name] {
				if ok {
					t.Errorf("%s.%s exported, but %s is not state", m.Name, f, m.Name)
				}
				continue
			}
			if !ok {
				t.Errorf("%s.%s has no Prometheus name", m.Name, f)
				continue
			}
			n++
			if other, dup := seen[fam.name]; dup {
				t.Errorf("%s.%s and %s are both %s", m.Name, f, other, fam.name)
			}
			seen[fam.name] = m.Name + "." + f
			if !strings.HasPrefix(fam.name, "heatsink_"+m.Name+"_") {
				t.Errorf("%s.%s -> %s: not under its measurement", m.Name, f, fam.name)
			}
			decl, _ := m.Field(f)
			if u, ok := promUnits[decl.Unit]; ok && !strings.HasSuffix(strings.TrimSuffix(fam.name, "_total"), "_"+u.suffix) {
				t.Errorf("%s.%s -> %s: lost its unit %s", m.Name, f, fam.name, u.suffix)
			}
			if decl.Counter != (fam.typ == prometheus.CounterValue) {
				t.Errorf("%s.%s -> %s: counter %v", m.Name, f, fam.name, fam.typ == prometheus.CounterValue)
			}
		}
	}
	if n < 80 {
		t.Errorf("only %d fields named: the data model was not read", n)
	}
}

func TestLabelsAndNamesAreSanitised(t *testing.T) {
	for in, want := range map[string]string{"chip": "chip", "rack-row": "rack_row", "9lives": "_lives", "": "_", "job": "slurm_job", "instance": "exported_instance"} {
		if got := labelName(in); got != want {
			t.Errorf("labelName(%q) = %q, want %q", in, got, want)
		}
	}
	s := New(Options{})
	p := point.New("gpu", time.Now())
	p.AddTag("rack-row", "b").AddTag("gpu", "0").AddFloat("temp_c", 40)
	s.Write([]point.Point{p})
	fams := scrape(t, serve(t, s))
	if _, v := sample(t, fams, "heatsink_gpu_temperature_celsius", map[string]string{"rack_row": "b"}); v != 40 {
		t.Error(fmt.Sprint(v))
	}
}
