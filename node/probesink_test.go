package node

// The one line that adds a sink, here the test sink of internal/probesink.
import _ "github.com/heatsink-hpc/heatsink/internal/probesink"

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/configs"
)

// Adding a sink is its package and one import line (above): with nothing
// else edited, its section is in the strict loader, a collection writes to
// it, a reload reopens, replaces and removes it (closing it before opening
// its successor, since it locks its file, and keeping it when the new
// section fails to open), and /healthz reports it.
func TestAddingASinkTakesOnePackageAndOneImport(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"sinks:\n  probe:\n    fil: x\n", "n.yaml:3: unknown key sinks.probe.fil"},
		{"sinks:\n  probe: {file: x, tag: \"\"}\n", "sinks.probe.tag: empty"},
	} {
		if _, err := configs.Parse("n.yaml", []byte(tc.yaml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.yaml, err, tc.want)
		}
	}

	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.lp"), filepath.Join(dir, "b.lp")
	parse := func(sinks string) *configs.Config {
		t.Helper()
		c, err := configs.Parse("n.yaml", []byte("interval: 50ms\nsysfs_root: ../sensors/testdata/intel-node/sys\n"+
			"procfs_root: ../sensors/testdata/intel-node/proc\nsources:\n  nvml: {disabled: true}\n"+sinks))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	probe := func(file, tag string) string {
		return "sinks:\n  probe: {file: " + file + ", tag: " + tag + "}\n"
	}
	var next *configs.Config
	cfg := parse(probe(a, "one"))
	ag := NewAgent(cfg, AgentOptions{Load: func([]byte) (*configs.Config, error) { return next, nil }})
	c, err := Start(cfg, Options{Handoff: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := ag.Start(ctx, c); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- c.Collector().Run(ctx) }()
	defer func() {
		cancel()
		<-ran
		ag.Stop()
		if err := c.Finish("complete"); err != nil {
			t.Errorf("finish: %v", err)
		}
	}()
	srv := httptest.NewServer(agent.Handler(agent.Options{Collector: c.Collector(), Sinks: ag.sinkHealth}))
	defer srv.Close()

	tests := []struct {
		name  string
		sinks string // sinks: of the reloaded configuration; "" for the first
		// file gains lines tagged tag; stopped gains nothing more.
		file, tag, stopped string
		// runs is the probe sink's file after the reload, "" for none.
		runs string
	}{
		{name: "configured", file: a, tag: "one", runs: a},
		{name: "section changed, same locked file", sinks: probe(a, "two"), file: a, tag: "two", runs: a},
		{name: "new section fails to open", sinks: probe(filepath.Join(dir, "none", "c.lp"), "x"), file: a, tag: "two", runs: a},
		{name: "moved to another file", sinks: probe(b, "three"), file: b, tag: "three", stopped: a, runs: b},
		{name: "removed", sinks: "removes: [sinks.probe]\n", stopped: b},
	}
	for i, tt := range tests {
		if i > 0 {
			next = parse(tt.sinks)
			if err := ag.reload(context.Background()); err != nil {
				t.Fatalf("%s: reload: %v", tt.name, err)
			}
		}
		if tt.file != "" {
			n := countTagged(t, tt.file, tt.tag)
			eventually(t, tt.name+": more lines tagged "+tt.tag+" in "+filepath.Base(tt.file), func() bool {
				return countTagged(t, tt.file, tt.tag) > n
			})
		}
		if tt.stopped != "" {
			// The collector drops the sink between two ticks (50 ms): once
			// it has, three more ticks add nothing.
			eventually(t, tt.name+": "+filepath.Base(tt.stopped)+" no longer written to", func() bool {
				n := countTagged(t, tt.stopped, "")
				time.Sleep(150 * time.Millisecond)
				return countTagged(t, tt.stopped, "") == n
			})
		}
		h := healthz(t, srv.URL)
		ph, on := h.Sinks["probe"]
		if on != (tt.runs != "") || (on && (!ph.OK || ph.SentPointsTotal == 0)) {
			t.Errorf("%s: /healthz sinks %+v", tt.name, h.Sinks)
		}
		if got := ag.cfg.Section("sinks.probe"); tt.runs != "" && !strings.Contains(jsonOf(t, got), tt.runs) {
			t.Errorf("%s: the running configuration says %s, want its file %s", tt.name, jsonOf(t, got), tt.runs)
		}
	}
}

// countTagged counts the lines of path starting with tag ("" for all).
func countTagged(t *testing.T, path, tag string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && strings.HasPrefix(l, tag) {
			n++
		}
	}
	return n
}

func healthz(t *testing.T, url string) agent.Health {
	t.Helper()
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h agent.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("decode /healthz: %v", err)
	}
	return h
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
