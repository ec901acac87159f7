package node

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/configs"
)

// A file still being written is read only once two reads agree: a writer
// appending a line every 60 ms for 0.6 s yields the whole file, never a
// prefix; one that never stops yields an error, not what it wrote so far.
func TestReadSettledWaitsForAWriterToFinish(t *testing.T) {
	lines := strings.Repeat("interval: 1s\n", 10)
	tests := []struct {
		name    string
		every   time.Duration
		forever bool
	}{
		{"a writer that finishes", 60 * time.Millisecond, false},
		{"a writer that never finishes", 60 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "n.yaml")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for i := 0; tt.forever || i < 10; i++ {
					select {
					case <-ctx.Done():
						return
					case <-time.After(tt.every):
					}
					f.WriteString("interval: 1s\n")
				}
			}()
			b, err := readSettled(ctx, path, 150*time.Millisecond, time.Second)
			switch {
			case tt.forever && err == nil:
				t.Errorf("read %d bytes of a file still being written, want an error", len(b))
			case tt.forever && !strings.Contains(err.Error(), "still being written"):
				t.Errorf("err %v, want it to say the file was still being written", err)
			case !tt.forever && err != nil:
				t.Errorf("err %v", err)
			case !tt.forever && string(b) != lines:
				t.Errorf("read %d bytes, want the whole file's %d", len(b), len(lines))
			}
		})
	}
}

// fullConfig is a node's configuration with a sink writing sinkFile, two
// alert rules and two PDUs, less what omit names, with extra on top.
func fullConfig(t *testing.T, sinkFile, omit, extra string) *configs.Config {
	t.Helper()
	parts := map[string]string{
		"sink":  "sinks:\n  probe: {file: " + sinkFile + ", tag: t}\n",
		"rules": "alerts:\n  rules:\n    - {name: hot, measurement: hwmon, field: temp_c, threshold: {op: \">\", value: 90}}\n    - {name: warm, measurement: hwmon, field: temp_c, threshold: {op: \">\", value: 80}}\n",
		"warm":  "alerts:\n  rules:\n    - {name: hot, measurement: hwmon, field: temp_c, threshold: {op: \">\", value: 90}}\n",
		"pdu":   "sources:\n  pdus:\n    - {name: a, target: 10.0.0.1, preset: apc-rpdu2}\n    - {name: b, target: 10.0.0.2, preset: apc-rpdu2}\n",
		"pdu:b": "sources:\n  pdus:\n    - {name: a, target: 10.0.0.1, preset: apc-rpdu2}\n",
	}
	y := "sysfs_root: ../sensors/testdata/intel-node/sys\nprocfs_root: ../sensors/testdata/intel-node/proc\n" + extra
	for _, k := range []string{"sink", "rules", "pdu"} {
		switch {
		case omit == k:
		case omit == "warm" && k == "rules":
			y += parts["warm"]
		case omit == "pdu:b" && k == "pdu":
			y += parts["pdu:b"]
		default:
			y += parts[k]
		}
	}
	return parseConfig(t, y)
}

// A reload refuses to drop a sink, alert rules or a source merely because
// the file no longer mentions them (what a file cut short says), and
// applies the same change when the file writes it: removes: naming it, or
// rules: [] for every rule.
func TestReloadRefusesRemovalsTheFileDoesNotWrite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.lp")
	old := fullConfig(t, file, "", "")
	tests := []struct {
		name, omit, extra string
		refused           string // "" applies
	}{
		{"nothing removed", "", "", ""},
		{"the sink left out", "sink", "", "sinks"},
		{"the sink removed on purpose", "sink", "removes: [sinks.probe]\n", ""},
		{"every rule left out", "rules", "", "alerts"},
		{"every rule removed on purpose", "rules", "alerts: {rules: []}\n", ""},
		{"the last rule left out", "warm", "", "alerts.rules.warm"},
		{"the last rule removed on purpose", "warm", "removes: [alerts.rules.warm]\n", ""},
		{"a PDU left out", "pdu:b", "", "sources.pdus.b"},
		{"a PDU removed on purpose", "pdu:b", "removes: [sources.pdus.b]\n", ""},
		{"removes names something else", "sink", "removes: [alerts.rules.hot]\n", "sinks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := fullConfig(t, file, tt.omit, tt.extra)
			err := refuseRemovals(old, cfg)
			switch {
			case tt.refused == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.refused != "" && err == nil:
				t.Errorf("applied, want refused naming %s", tt.refused)
			case tt.refused != "" && !strings.Contains(err.Error(), "mentions "+tt.refused+","):
				t.Errorf("err %v, want it to name exactly %s", err, tt.refused)
			}
		})
	}
	// A setting cut off the end of a rule (its for:) is a removal too.
	withFor := parseConfig(t, "alerts:\n  rules:\n    - name: hot\n      measurement: hwmon\n      field: temp_c\n      threshold: {op: \">\", value: 90}\n      for: 30s\n")
	cut := parseConfig(t, "alerts:\n  rules:\n    - name: hot\n      measurement: hwmon\n      field: temp_c\n      threshold: {op: \">\", value: 90}\n")
	if err := refuseRemovals(withFor, cut); err == nil || !strings.Contains(err.Error(), "mentions alerts.rules.hot.for,") {
		t.Errorf("a rule's for: cut off: err %v, want it refused naming alerts.rules.hot.for", err)
	}
}

// removes: holds dotted key paths.
func TestRemovesRefusesWhatIsNoKeyPath(t *testing.T) {
	_, err := configs.Parse("n.yaml", []byte("interval: 1s\nremoves: [sinks.influx, \"sinks. influx\"]\n"))
	if err == nil || !strings.Contains(err.Error(), "n.yaml:2: removes.1:") || !strings.Contains(err.Error(), "dotted key path") {
		t.Errorf("err %v, want it to name the line, the entry and the forms", err)
	}
}

// A refused reload keeps the running configuration, is counted, and makes
// /healthz degraded with the reason until a reload applies.
func TestARefusedReloadShowsInHealthz(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p.lp")
	cfg := fullConfig(t, file, "", "interval: 50ms\n")
	next := cfg
	ag, stop := influxAgent(t, cfg, &next)
	defer stop()
	srv := httptest.NewServer(agent.Handler(agent.Options{Collector: ag.c.collector, Sinks: ag.sinkHealth, Config: ag.configHealth}))
	defer srv.Close()
	eventually(t, "a tick", func() bool { return ag.c.collector.Stats().Ticks > 0 })

	next = fullConfig(t, file, "sink", "interval: 50ms\n")
	ag.reloadNoted(context.Background())
	h := healthz(t, srv.URL)
	if h.Status != "degraded" || !hasProblem(h, "configuration not reloaded") || h.Config == nil || h.Config.RefusedTotal != 1 || !strings.Contains(h.Config.Refused, "mentions sinks,") {
		t.Errorf("after a refused reload: status %s, problems %q, config %+v; want degraded, one refused, naming sinks", h.Status, h.Problems, h.Config)
	}
	if _, on := ag.sinkHealth()["probe"]; !on {
		t.Errorf("the probe sink is gone after a refused reload")
	}
	next = fullConfig(t, file, "", "interval: 50ms\n")
	ag.reloadNoted(context.Background())
	if h := healthz(t, srv.URL); hasProblem(h, "configuration") || h.Config == nil || h.Config.Refused != "" || h.Config.ReloadsTotal != 2 {
		t.Errorf("after a reload that applied: problems %q, config %+v, want nothing refused and two reloads", h.Problems, h.Config)
	}
}

func hasProblem(h agent.Health, prefix string) bool {
	for _, p := range h.Problems {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}
