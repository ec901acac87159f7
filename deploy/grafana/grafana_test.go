package grafana

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/docs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/recordings/promhistory"
)

// query is one InfluxQL query of the dashboard and where it is.
type query struct {
	where, text string
}

// queries walks the dashboard and returns every query: panel targets,
// annotations and template variables.
func queries(t *testing.T) []query {
	t.Helper()
	var dash any
	if err := json.Unmarshal(Dashboard, &dash); err != nil {
		t.Fatalf("heatsink.json: %v", err)
	}
	var out []query
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if q, ok := x["query"].(string); ok && q != "influxdb" {
				if raw, has := x["rawQuery"]; has && raw != true {
					t.Errorf("%s: a query Grafana would rebuild from its editor fields (rawQuery false)", path)
				}
				out = append(out, query{path, q})
			}
			for k, c := range x {
				name := k
				if title, ok := x["title"].(string); ok {
					name = title + "/" + k
				}
				walk(path+"/"+name, c)
			}
		case []any:
			for i, c := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), c)
			}
		}
	}
	walk("", dash)
	return out
}

var (
	fromRE    = regexp.MustCompile(`FROM\s+"([a-z_]+)"`)
	funcRE    = regexp.MustCompile(`\b(?:mean|max|min|last|first|sum|count)\("([a-z0-9_]+)"\)`)
	identRE   = regexp.MustCompile(`(FROM\s+|AS\s+)?"([a-z0-9_]+)"`)
	showTagRE = regexp.MustCompile(`^SHOW TAG VALUES FROM "([a-z_]+)" WITH KEY = "([a-z_]+)"$`)
	kindRE    = regexp.MustCompile(`"kind" = '([a-z_]+)'`)
)

// Every query reads measurements, fields and tags that docs/data-model.md
// says heatsink writes: a renamed field cannot leave a panel silently empty.
func TestEveryQueryNamesWhatHeatsinkWrites(t *testing.T) {
	ms := schema.Measurements()
	qs := queries(t)
	if len(qs) < 30 {
		t.Fatalf("only %d queries found in the dashboard", len(qs))
	}
	used := map[string]bool{}
	for _, q := range qs {
		if m := showTagRE.FindStringSubmatch(q.text); m != nil {
			if meas, ok := ms[m[1]]; !ok || !meas.HasTag(m[2]) {
				t.Errorf("%s: %q: %s has no tag %s", q.where, q.text, m[1], m[2])
			}
			continue
		}
		var from []schema.Measurement
		for _, m := range fromRE.FindAllStringSubmatch(q.text, -1) {
			meas, ok := ms[m[1]]
			if !ok {
				t.Errorf("%s: %q: no measurement %s in the data model", q.where, q.text, m[1])
				continue
			}
			from = append(from, meas)
			used[m[1]] = true
		}
		if len(from) == 0 {
			t.Errorf("%s: %q reads no measurement", q.where, q.text)
			continue
		}
		isField := func(name string) bool {
			return slices.ContainsFunc(from, func(m schema.Measurement) bool { return m.HasField(name) })
		}
		isTag := func(name string) bool {
			return slices.ContainsFunc(from, func(m schema.Measurement) bool { return m.HasTag(name) })
		}
		for _, m := range funcRE.FindAllStringSubmatch(q.text, -1) {
			if !isField(m[1]) {
				t.Errorf("%s: %q aggregates %s, which is no field of %s", q.where, q.text, m[1], fromRE.FindString(q.text))
			}
		}
		for _, m := range identRE.FindAllStringSubmatch(q.text, -1) {
			if m[1] != "" { // a measurement, or an alias
				continue
			}
			if !isField(m[2]) && !isTag(m[2]) {
				t.Errorf("%s: %q names %s, neither a field nor a tag of %s", q.where, q.text, m[2], fromRE.FindString(q.text))
			}
		}
		for _, m := range kindRE.FindAllStringSubmatch(q.text, -1) {
			if !strings.Contains(docs.DataModel, "`"+m[1]+"`") {
				t.Errorf("%s: event kind %s is not in docs/data-model.md", q.where, m[1])
			}
		}
	}
	for _, m := range []string{"gpu", "tank", "hwmon", "alert", "event"} {
		if !used[m] {
			t.Errorf("no panel or annotation reads %s", m)
		}
	}
}

// tick is one sample of everything the dashboard shows, as heatsink's
// sources, alert engine, runner and Slurm summary write it.
func tick(at time.Time) []point.Point {
	var pts []point.Point
	add := func(m, tags string, fields map[string]any) {
		p := point.New(m, at)
		for _, kv := range strings.Fields(tags) {
			k, v, _ := strings.Cut(kv, "=")
			p.AddTag(k, strings.ReplaceAll(v, "~", " "))
		}
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			switch v := fields[k].(type) {
			case float64:
				p.AddFloat(k, v)
			case int:
				p.AddInt(k, int64(v))
			case bool:
				p.AddBool(k, v)
			case string:
				p.AddString(k, v)
			}
		}
		pts = append(pts, p)
	}
	add("collector_tick", "host=n1", map[string]any{"lag_s": 0.001, "points": 40})
	add("gpu", "host=n1 gpu=0 uuid=GPU-0 model=H100", map[string]any{"temp_c": 61.0, "mem_temp_c": 70.0, "slowdown_c": 89.0, "mem_max_c": 95.0,
		"power_w": 420.0, "power_limit_w": 700.0, "sm_clock_mhz": 1980.0, "mem_clock_mhz": 2619.0, "throttle_thermal": false,
		"throttle_power": true, "clock_event_reasons": 4})
	add("hwmon", "host=n1 chip=platform_coretemp_0 chip_name=coretemp sensor=temp1 label=Package~id~0 class=cpu_package", map[string]any{"temp_c": 55.0})
	add("nvme", "host=n1 device=nvme0 sensor=Composite", map[string]any{"temp_c": 40.0})
	add("rapl", "host=n1 zone=package-0 zone_id=intel-rapl:0", map[string]any{"energy_j": 1e6, "power_w": 180.0})
	add("tank", "host=n1 tank=pod1 vendor=submer", map[string]any{"coolant_temp_c": 31.0, "coolant_in_c": 30.0, "coolant_out_c": 33.0,
		"water_in_c": 18.0, "water_out_c": 24.0, "setpoint_c": 32.0, "pump1_on": true, "pump2_on": false, "pump1_rpm": 1450.0,
		"pump2_rpm": 0.0, "coolant_flow_lpm": 120.0, "consumption_w": 900.0})
	add("pdu", "host=n1 pdu=rack1 outlet=7", map[string]any{"power_w": 1500.0, "current_a": 6.5})
	add("alert", "host=n1 rule=gpu_hot severity=critical measurement=gpu gpu=0", map[string]any{"state": "firing", "value": 88.0, "threshold": 84.0, "message": "GPU 0 hot"})
	add("alert", "host=n1 rule=gpu_hot severity=critical measurement=gpu gpu=1", map[string]any{"state": "cleared", "value": 80.0, "threshold": 84.0, "message": "GPU 1 cooled"})
	for i, k := range []string{"phase_start", "phase_end", "guard_pause", "guard_resume", "guard_stop", "job_start", "job_end"} {
		p := point.New("event", at.Add(time.Duration(i)*time.Millisecond))
		p.AddTag("host", "n1").AddTag("kind", k).AddTag("phase", "load").AddTag("run", "r1").AddTag("job", "42")
		p.AddString("message", k)
		pts = append(pts, p)
	}
	add("job_summary", "host=n1 job=42 run=r1 component=gpu_core:0 kind=gpu_core", map[string]any{"peak_c": 80.0, "idle_mean_c": 35.0,
		"heat_interval_s_per_c": 2.5, "energy_j": 36000.0, "runtime_s": 120.0})
	return pts
}

// Every query runs on a real InfluxDB 1.8 holding what heatsink writes, with
// Grafana's macros filled in as Grafana fills them, and returns data: the
// InfluxQL is valid and reads what is there.
func TestEveryQueryReturnsDataFromARealInfluxDB(t *testing.T) {
	srv := influxtest.Start(t)
	var lines []byte
	now := time.Now().Truncate(time.Second)
	for s := 60; s >= 0; s -= 10 {
		var err error
		if lines, err = point.Append(lines, tick(now.Add(-time.Duration(s)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Post(srv.URL()+"/write?db="+influxtest.Database, "text/plain", bytes.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("write: %s %s", resp.Status, b)
	}
	resp.Body.Close()

	grafana := strings.NewReplacer("$timeFilter", "time > now() - 1h", "$__interval", "10s", "$host", ".*", "$tank", ".*", "$job", ".*")
	for _, q := range queries(t) {
		text := grafana.Replace(q.text)
		resp, err := http.PostForm(srv.URL()+"/query", url.Values{"db": {influxtest.Database}, "q": {text}})
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Results []struct {
				Error  string `json:"error"`
				Series []struct {
					Values [][]any `json:"values"`
				} `json:"series"`
			} `json:"results"`
			Error string `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		switch {
		case err != nil:
			t.Errorf("%s: %s: %v", q.where, text, err)
		case r.Error != "" || len(r.Results) == 0 || r.Results[0].Error != "":
			t.Errorf("%s: %s: InfluxDB says %q %v", q.where, text, r.Error, r.Results)
		case len(r.Results[0].Series) == 0 || !hasValue(r.Results[0].Series[0].Values):
			t.Errorf("%s: %s: no data", q.where, text)
		}
	}
}

// hasValue reports whether any row holds a value besides its time.
func hasValue(rows [][]any) bool {
	for _, row := range rows {
		for _, v := range row[1:] {
			if v != nil {
				return true
			}
		}
		if len(row) == 1 && row[0] != nil { // SHOW TAG VALUES rows
			return true
		}
	}
	return false
}

// The Prometheus dashboard names only metrics that exist: heatsink's own
// exposition names of data-model fields, and the DCGM exporter's and
// node_exporter's metrics that heatsink export --prometheus reads, so that
// a panel and a report speak of the same readings.
func TestPrometheusDashboardNamesWhatTheExportersExpose(t *testing.T) {
	var d struct {
		Panels []struct {
			Title      string
			Datasource struct{ Type string }
			Targets    []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(PrometheusDashboard, &d); err != nil {
		t.Fatalf("heatsink-prometheus.json: %v", err)
	}
	metric := regexp.MustCompile(`\b(heatsink_[a-z0-9_]+|DCGM_FI_[A-Z0-9_]+|node_[A-Za-z0-9_]+)\b`)
	n := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if p.Datasource.Type != "prometheus" {
				t.Errorf("panel %q: data source %q, want prometheus", p.Title, p.Datasource.Type)
			}
			names := metric.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %q names no metric", p.Title, tg.Expr)
			}
			for _, name := range names {
				n++
				if !promhistory.Reads(name) {
					t.Errorf("panel %q: %s is not a metric heatsink, the DCGM exporter or node_exporter exposes as heatsink reads it", p.Title, name)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d metric names checked", n)
	}
}

// Every PromQL expression of the Prometheus dashboard parses, as Prometheus
// 2.42's promtool reads it (each as a recording rule; Grafana's $host
// becomes a value).
func TestPrometheusDashboardQueriesParse(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not installed (scripts/deps.sh installs Debian's prometheus, which has it)")
	}
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(PrometheusDashboard, &d); err != nil {
		t.Fatal(err)
	}
	var rules strings.Builder
	rules.WriteString("groups:\n- name: dashboard\n  rules:\n")
	i := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			expr := strings.ReplaceAll(tg.Expr, "$host", "node1")
			b, _ := json.Marshal(expr)
			fmt.Fprintf(&rules, "  - record: dashboard:expr%d\n    expr: %s\n", i, b)
			i++
		}
	}
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}
