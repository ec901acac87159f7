package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func getJSON(t *testing.T, url string, into any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp.StatusCode
}

// A node agent reloads its configuration on SIGHUP between two ticks: no
// tick is lost, sources whose settings did not change go on as they were
// (RAPL power, derived from the previous sample, is missing only from the
// very first), a removed source stops, new alert rules apply, and a
// broken file leaves the running configuration in place.
func TestCollectReloadsOnSIGHUPWithoutLosingATick(t *testing.T) {
	t.Parallel()
	bin := heatsinkBinary(t)
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-a", "../../sensors/testdata/intel-node/sys", filepath.Join(dir, "sys")).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	cfgPath := filepath.Join(dir, "node.yaml")
	base := fmt.Sprintf("host: n1\ninterval: 250ms\nsysfs_root: %s\nprocfs_root: /proc\n", filepath.Join(dir, "sys"))
	write := func(body string) {
		if err := os.WriteFile(cfgPath, []byte(base+body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`sources: {nvml: {disabled: true}}
alerts:
  rules:
    - {name: cpu_hot, severity: critical, measurement: hwmon, field: temp_c, tags: {class: cpu_package}, threshold: {op: ">", value: 90}}
`)
	addr := freeAddr(t)
	run := filepath.Join(dir, "run")
	cmd := ownState(t, exec.Command(bin, "collect", "--config", cfgPath, "--listen", addr, "--out", run))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	url := "http://" + addr
	var h agent.Health
	eventually(t, 30*time.Second, "six ticks", func() bool { return getJSON(t, url+"/healthz", &h) == http.StatusOK && h.Ticks >= 6 })
	if len(h.Sources) != 5 {
		t.Errorf("sources before the reload: %+v", h.Sources)
	}

	// cpufreq goes; a rule on the NVMe drive (38.85 °C in the fixture) comes.
	write(`sources: {nvml: {disabled: true}, cpufreq: {disabled: true}}
alerts:
  rules:
    - {name: cpu_hot, severity: critical, measurement: hwmon, field: temp_c, tags: {class: cpu_package}, threshold: {op: ">", value: 90}}
    - {name: nvme_warm, severity: warning, measurement: nvme, field: temp_c, threshold: {op: ">", value: 30}}
`)
	cmd.Process.Signal(syscall.SIGHUP)
	var rules []agent.Rule
	eventually(t, 30*time.Second, "the new rule to fire", func() bool {
		getJSON(t, url+"/alerts", &rules)
		return len(rules) == 2 && len(rules[1].Alerts) > 0 && rules[1].Alerts[0].Firing
	})
	eventually(t, 30*time.Second, "four sources", func() bool { getJSON(t, url+"/healthz", &h); return len(h.Sources) == 4 })
	ticksAtReload := h.Ticks

	write("sources: [this is not a mapping\n")
	cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, 30*time.Second, "six ticks more", func() bool { getJSON(t, url+"/healthz", &h); return h.Ticks >= ticksAtReload+6 })
	getJSON(t, url+"/alerts", &rules)
	if len(rules) != 2 || len(h.Sources) != 4 {
		t.Errorf("after a broken reload: %d rules, %d sources; want the running configuration kept", len(rules), len(h.Sources))
	}
	// An emptied file (a deploy caught mid-write) is refused like a broken one.
	if err := os.WriteFile(cfgPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ticksAtReload = h.Ticks
	cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, 30*time.Second, "six ticks more", func() bool { getJSON(t, url+"/healthz", &h); return h.Ticks >= ticksAtReload+6 })
	getJSON(t, url+"/alerts", &rules)
	if len(rules) != 2 || len(h.Sources) != 4 {
		t.Errorf("after an empty file's reload: %d rules, %d sources; want the running configuration kept", len(rules), len(h.Sources))
	}
	// The file cut short after its first rule (a deploy caught mid-write at
	// a line's end) parses, but drops nvme_warm by not mentioning it: refused,
	// and said in /healthz; removes: naming the rule applies the same file.
	cut := `sources: {nvml: {disabled: true}, cpufreq: {disabled: true}}
alerts:
  rules:
    - {name: cpu_hot, severity: critical, measurement: hwmon, field: temp_c, tags: {class: cpu_package}, threshold: {op: ">", value: 90}}
`
	write(cut)
	refused := h.Config.RefusedTotal
	cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, 30*time.Second, "the cut file refused", func() bool {
		getJSON(t, url+"/healthz", &h)
		return h.Config != nil && h.Config.RefusedTotal > refused
	})
	getJSON(t, url+"/alerts", &rules)
	if len(rules) != 2 || h.Status != "degraded" || !strings.Contains(h.Config.Refused, "alerts.rules.nvme_warm") {
		t.Errorf("after a file cut short: %d rules, status %s, refused %q; want 2 rules kept, degraded, naming alerts.rules.nvme_warm", len(rules), h.Status, h.Config.Refused)
	}
	write("removes: [alerts.rules.nvme_warm]\n" + cut)
	cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, 30*time.Second, "the rule removed on purpose", func() bool {
		getJSON(t, url+"/alerts", &rules)
		return len(rules) == 1
	})
	write(`sources: {nvml: {disabled: true}, cpufreq: {disabled: true}}
alerts:
  rules:
    - {name: cpu_hot, severity: critical, measurement: hwmon, field: temp_c, tags: {class: cpu_package}, threshold: {op: ">", value: 90}}
    - {name: nvme_warm, severity: warning, measurement: nvme, field: temp_c, threshold: {op: ">", value: 30}}
`)
	cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, 30*time.Second, "the rule back", func() bool {
		getJSON(t, url+"/alerts", &rules)
		return len(rules) == 2
	})
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if f := fams["heatsink_alert_rule_firing_series"]; f == nil || len(f.GetMetric()) != 2 {
		t.Errorf("/metrics alert rules: %v", f)
	}
	if _, ok := fams["heatsink_hwmon_temperature_celsius"]; !ok {
		t.Error("/metrics has no hwmon temperatures")
	}

	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("collect: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "reload failed") || !strings.Contains(stderr.String(), "configuration reloaded") {
		t.Errorf("log does not tell the reload and the failed one:\n%s", stderr.String())
	}

	var ticks []time.Time
	var missed float64
	var power []bool
	var cpufreqAfter, nvmeAlerts int
	var reloadAt time.Time
	err = rundir.ForEachPoint(run, func(p *point.Point) error {
		switch {
		case p.Measurement == "collector_tick":
			ticks = append(ticks, p.Time)
			missed, _ = p.Float("missed_ticks_total")
		case p.Measurement == "rapl" && p.Tag("zone_id") == "intel-rapl:0":
			_, ok := p.Float("power_w")
			power = append(power, ok)
		case p.Measurement == "alert" && p.Tag("rule") == "nvme_warm":
			nvmeAlerts++
			if reloadAt.IsZero() {
				reloadAt = p.Time
			}
		case p.Measurement == "cpufreq" && !reloadAt.IsZero() && p.Time.After(reloadAt.Add(time.Second)):
			cpufreqAfter++
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	iv := 250 * time.Millisecond
	span := ticks[len(ticks)-1].Sub(ticks[0])
	if want := int(span/iv) + 1 - int(missed); len(ticks) != want {
		t.Errorf("%d ticks over %v at %v with %v counted as missed: %d lost across the reloads", len(ticks), span, iv, missed, want-len(ticks))
	}
	if len(power) < 10 || power[0] {
		t.Errorf("RAPL samples %v: want power from the second on", power)
	}
	for i, ok := range power {
		if !ok && i > 0 {
			t.Errorf("RAPL power missing at sample %d of %d: the source was re-created by the reload", i, len(power))
			break
		}
	}
	if nvmeAlerts == 0 || cpufreqAfter > 0 {
		t.Errorf("after the reload: %d nvme_warm alerts, %d cpufreq points; want the new rule and no cpufreq", nvmeAlerts, cpufreqAfter)
	}
}
