package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// unitExecStart returns the arguments of the shipped unit's ExecStart,
// the binary's path first.
func unitExecStart(t *testing.T, unit string) []string {
	t.Helper()
	f, err := os.Open(unit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "ExecStart="); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("%s: no ExecStart line", unit)
	return nil
}

// The shipped unit starts as it is, with the shipped configuration and no
// other output: collect --listen alone is a Prometheus exporter, as
// node_exporter is. Its /metrics keeps a source this machine lacks
// (available 0, no ok, no errors) apart from one that fails, so an alert on
// heatsink_collector_source_ok == 0 has nothing to fire on here, and
// heatsink_build_info carries the version heatsink version prints.
func TestShippedUnitIsAPrometheusExporter(t *testing.T) {
	t.Parallel()
	bin := heatsinkBinary(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	// The unit's paths, moved where a test may write: the binary and the
	// configuration as docs/fleet.md installs them, the port free, the
	// socket and jobs directory under dir.
	paths := map[string]string{
		"/usr/local/bin/heatsink":     bin,
		"/etc/heatsink/heatsink.yaml": "../../configs/node.yaml",
		":9109":                       addr,
		"/run/heatsink/agent.sock":    filepath.Join(dir, "run", "agent.sock"),
		"/run/heatsink/jobs":          filepath.Join(dir, "run", "jobs"),
	}
	args := unitExecStart(t, "../../deploy/heatsink-collect.service")
	for i, a := range args {
		if p, ok := paths[a]; ok {
			args[i] = p
			delete(paths, a)
		}
	}
	if len(paths) > 0 {
		t.Fatalf("the unit's ExecStart %q no longer names %v: update this test with it", args, paths)
	}
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the agent's exit after SIGTERM: %v\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("the agent did not stop within 30 s of SIGTERM")
		}
	}()
	url := "http://" + addr
	var h agent.Health
	deadline := time.Now().Add(30 * time.Second)
	for getJSON(t, url+"/healthz", &h) != http.StatusOK || h.Ticks < 3 {
		select {
		case err := <-exited:
			t.Fatalf("the unit's command exited (%v) before three ticks:\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no three ticks within 30 s; stderr:\n%s", stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}

	fams := scrape(t, url+"/metrics")
	available := gauges(fams["heatsink_collector_source_available"], "source")
	ok := gauges(fams["heatsink_collector_source_ok"], "source")
	errs := gauges(fams["heatsink_collector_source_errors_total"], "source")
	if len(available) != len(h.Sources) {
		t.Errorf("heatsink_collector_source_available has %d sources, /healthz %d: %v", len(available), len(h.Sources), available)
	}
	for _, s := range h.Sources {
		av, known := available[s.Name]
		switch {
		case !known:
			t.Errorf("source %s: no heatsink_collector_source_available", s.Name)
		case s.Unavailable != (av == 0):
			t.Errorf("source %s: available %v on /metrics, unavailable %v in /healthz", s.Name, av, s.Unavailable)
		case av == 0 && hasKey(ok, s.Name):
			t.Errorf("source %s, unavailable here, is exported as heatsink_collector_source_ok %v: an alert on ok == 0 would fire on it", s.Name, ok[s.Name])
		case av == 0 && errs[s.Name] != 0:
			t.Errorf("source %s, unavailable here, counts %v errors", s.Name, errs[s.Name])
		case av == 1 && !hasKey(ok, s.Name):
			t.Errorf("source %s is available but has no heatsink_collector_source_ok", s.Name)
		}
		// What an alert on failing sources would fire on: nothing, on a
		// machine whose sources either work or are absent.
		if v, has := ok[s.Name]; has && v == 0 {
			t.Errorf("source %s fails on this machine: %s", s.Name, s.LastError)
		}
	}

	scrapeWithShippedPrometheus(t, addr)

	var v struct{ Version, Revision string }
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("heatsink version --json: %v: %s", err, out)
	}
	bi := fams["heatsink_build_info"]
	if bi == nil || len(bi.Metric) != 1 {
		t.Fatalf("heatsink_build_info: %v", bi)
	}
	labels := map[string]string{}
	for _, l := range bi.Metric[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["version"] != v.Version || labels["revision"] != v.Revision || v.Version == "" {
		t.Errorf("heatsink_build_info %v, heatsink version says version %q revision %q", labels, v.Version, v.Revision)
	}
}

func hasKey(m map[string]float64, k string) bool { _, ok := m[k]; return ok }

// scrape reads a Prometheus text exposition.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return fams
}

// gauges maps a family's series by one label's value to their values.
func gauges(f *dto.MetricFamily, label string) map[string]float64 {
	m := map[string]float64{}
	if f == nil {
		return m
	}
	for _, s := range f.Metric {
		var v float64
		switch {
		case s.Gauge != nil:
			v = s.Gauge.GetValue()
		case s.Counter != nil:
			v = s.Counter.GetValue()
		}
		for _, l := range s.GetLabel() {
			if l.GetName() == label {
				m[l.GetValue()] = v
			}
		}
	}
	return m
}

// scrapeWithShippedPrometheus runs Prometheus with deploy/prometheus's
// configuration and rules, its targets the agent at addr and its intervals
// 1 s, and checks that it scrapes the agent and that no rule fires on this
// machine: the agent's sources work or are absent here.
func scrapeWithShippedPrometheus(t *testing.T, addr string) {
	t.Helper()
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus not installed (scripts/deps.sh installs Debian's prometheus, with promtool)")
	}
	dir := t.TempDir()
	rules, _ := filepath.Abs("../../deploy/prometheus/heatsink.rules.yml")
	shipped, err := os.ReadFile("../../deploy/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(shipped)
	for old, repl := range map[string]string{"15s": "1s", "/etc/prometheus/heatsink.rules.yml": rules} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("deploy/prometheus/prometheus.yml no longer holds %q: update this test with it", old)
		}
		cfg = strings.ReplaceAll(cfg, old, repl)
	}
	cfg = regexp.MustCompile(`targets: \[.*\]`).ReplaceAllString(cfg, "targets: ['"+addr+"']")
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("promtool", "check", "config", cfgPath).CombinedOutput(); err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
	// The rules' own tests: an absent GPU fires nothing, a failing tank does.
	test := exec.Command("promtool", "test", "rules", "heatsink.rules.test.yml")
	test.Dir = filepath.Dir(rules)
	if out, err := test.CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
	promAddr := freeAddr(t)
	prom := exec.Command(promBin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	var stderr bytes.Buffer
	prom.Stderr = &stderr
	prom.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { prom.Process.Kill(); prom.Wait() }()
	query := func(q string) []json.RawMessage {
		var r struct {
			Status string
			Data   struct{ Result []json.RawMessage }
		}
		if code := getJSON(t, "http://"+promAddr+"/api/v1/query?query="+url.QueryEscape(q), &r); code != 0 && r.Status != "success" {
			t.Fatalf("query %s: %d %s", q, code, r.Status)
		}
		return r.Data.Result
	}
	// Three rule evaluations after the first scrape of every source.
	deadline := time.Now().Add(60 * time.Second)
	for len(query(`count_over_time(heatsink_collector_source_available[1m]) >= 4`)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus scraped no heatsink_collector_source_available within 60 s:\n%s", stderr.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	if up := query(`up{job="heatsink"} == 1`); len(up) != 1 {
		t.Errorf("up{job=\"heatsink\"} == 1: %s", up)
	}
	if a := query(`ALERTS`); len(a) != 0 {
		t.Errorf("the shipped rules fire on this machine: %s", a)
	}
	if f := query(`heatsink_collector_source_ok == 0`); len(f) != 0 {
		t.Errorf("failing sources on this machine: %s", f)
	}
}
