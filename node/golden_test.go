package node

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/collectors/prom"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with what this run produced")

// The times the golden ticks stand for: the collector ticks on the wall
// clock, and the golden sink moves each tick's points to these.
var (
	goldenStart    = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	goldenInterval = time.Second
)

// machineFields measure the machine the test runs on, not the fixture: how
// late a tick woke, how long a source took, ticks the test machine was too
// busy to run. They are dropped before the sinks, the only fields that are.
var machineFields = map[string][]string{
	schema.CollectorTick:   {schema.FieldLagS, schema.FieldMissedTicksTotal},
	schema.CollectorSource: {schema.FieldLatencyS},
}

// agentOwnFamilies are the families /metrics serves about the agent process
// rather than from the sink: Go runtime and process metrics (memory, CPU,
// file descriptors of the test binary), the build's version, and the wall
// time of the last tick. Everything else in the exposition is compared.
var agentOwnFamilies = []string{"go_", "process_", "heatsink_agent_", "heatsink_build_info", "heatsink_collector_last_tick_timestamp_seconds"}

// The fixture's counters advance between the two ticks by what one second
// of this load adds: RAPL energy by the zone's power (W, exact in binary),
// and /proc/stat by jiffies (USER_HZ 100) that vary by CPU.
var goldenZonePowerW = map[string]float64{"package-0": 45.5, "package-1": 41.25, "core": 30.25, "uncore": 2.5, "dram": 6.75, "psys": 60}

// goldenCPUJiffies is CPU n's user, system, iowait and idle jiffies in the
// second between the ticks; each sums to 100.
func goldenCPUJiffies(n int) [4]uint64 {
	user := uint64(20 + 7*(n%8))
	system := uint64(10)
	iowait := uint64(5 * (n % 2))
	return [4]uint64{user, system, iowait, 100 - user - system - iowait}
}

// A fixture machine's whole recording of two ticks, through the node's own
// collection (the registry's sources, the collector, the sinks), is its
// line protocol and its /metrics exposition as the agent serves them. The
// second tick is one second of known load later, so the rates derived from
// two readings (CPU usage, RAPL power) are in it. Rewrite the golden files
// after an intended change with
//
//	go test ./node -run TestGolden -update
//
// and review their diff.
func TestGolden(t *testing.T) {
	for _, machine := range []string{"intel-node", "amd-node"} {
		t.Run(machine, func(t *testing.T) {
			lp, metrics := goldenRun(t, machine)
			compareGolden(t, filepath.Join("testdata", machine+".lp.golden"), lp)
			compareGolden(t, filepath.Join("testdata", machine+".metrics.golden"), metrics)
		})
	}
}

// goldenRun records two ticks of a copy of machine's fixture trees and
// returns the line protocol written and the /metrics exposition after them.
func goldenRun(t *testing.T, machine string) (lp, metrics []byte) {
	t.Helper()
	fixtures := filepath.Join("..", "sensors", "testdata", machine)
	sys, proc := copyFixture(t, filepath.Join(fixtures, "sys")), copyFixture(t, filepath.Join(fixtures, "proc"))

	cfg := configs.Default()
	cfg.Host = machine
	cfg.SysfsRoot, cfg.ProcfsRoot = sys, proc
	// A short interval keeps the test fast; a deadline as long keeps a
	// busy test machine from timing a fixture read out.
	cfg.Interval, cfg.Deadline = 100*time.Millisecond, 100*time.Millisecond
	// The GPU source reads NVML, not the fixture.
	cfg.Section("sources.nvml").(*filter.Section).Disabled = true

	clock := &goldenClock{t: goldenStart}
	var out bytes.Buffer
	stream, err := collectors.NewStreamSink(&out, "lp")
	if err != nil {
		t.Fatal(err)
	}
	exposed := prom.New(prom.Options{Now: clock.now})
	sink := &goldenSink{sinks: []collectors.Sink{stream, exposed}, after: func(tick int) {
		if tick == 1 {
			advanceFixture(t, sys, proc)
		}
		clock.set(goldenStart.Add(time.Duration(tick) * goldenInterval))
	}}
	c, err := Start(cfg, Options{Ticks: 2, Sinks: []collectors.Sink{sink}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Finish("complete"); err != nil {
			t.Errorf("finish: %v", err)
		}
	})
	var names []string
	for _, s := range c.Sources() {
		names = append(names, s.Name())
		// RAPL times its readings itself, on the wall clock.
		if r, ok := s.(interface{ SetClock(func() time.Time) }); ok {
			r.SetClock(clock.now)
		}
	}
	if want := []string{"host", "hwmon", "cpufreq", "rapl", "nvme"}; !slices.Equal(names, want) {
		t.Fatalf("sources %v, want %v: the golden files cover those that read the fixture trees", names, want)
	}
	if err := c.Collector().Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sink.ticks != 2 {
		t.Fatalf("%d ticks written, want 2", sink.ticks)
	}

	rec := httptest.NewRecorder()
	agent.Handler(agent.Options{Collector: c.Collector(), Metrics: exposed, Now: clock.now}).
		ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	return out.Bytes(), withoutFamilies(t, rec.Body.Bytes(), agentOwnFamilies)
}

// copyFixture copies a fixture tree, symlinks and all, so the test can
// advance its counters.
func copyFixture(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// goldenClock is the time the current tick stands for: RAPL's and the
// Prometheus sink's clock. The collector's goroutine sets it between ticks
// while the sources' goroutines read it.
type goldenClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *goldenClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *goldenClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// goldenSink gives its sinks each tick's points at the time the tick
// stands for, without the machine's fields, then calls after with the
// number of ticks written. The collector writes a tick's batch before it
// starts the next tick, so what after changes is what the next tick reads.
type goldenSink struct {
	sinks []collectors.Sink
	after func(tick int)
	ticks int
}

func (g *goldenSink) Write(batch []point.Point) error {
	at := goldenStart.Add(time.Duration(g.ticks) * goldenInterval)
	pinned := make([]point.Point, 0, len(batch))
	for _, p := range batch {
		p.Time = at
		if drop := machineFields[p.Measurement]; drop != nil {
			p.Fields = slices.DeleteFunc(slices.Clone(p.Fields), func(f point.Field) bool { return slices.Contains(drop, f.Key) })
		}
		pinned = append(pinned, p)
	}
	for _, s := range g.sinks {
		if err := s.Write(pinned); err != nil {
			return fmt.Errorf("golden sink %T: %w", s, err)
		}
	}
	g.ticks++
	g.after(g.ticks)
	return nil
}

func (g *goldenSink) Flush() error {
	for _, s := range g.sinks {
		if err := s.Flush(); err != nil {
			return fmt.Errorf("golden sink %T: %w", s, err)
		}
	}
	return nil
}

func (g *goldenSink) Close() error { return g.Flush() }

// advanceFixture adds one second of the golden load to the fixture's
// counters: every RAPL zone's energy_uj and every CPU's /proc/stat times.
func advanceFixture(t *testing.T, sys, proc string) {
	t.Helper()
	zones, err := filepath.Glob(filepath.Join(sys, "class", "powercap", "intel-rapl:*"))
	if err != nil || len(zones) == 0 {
		t.Fatalf("no RAPL zones to advance under %s: %v", sys, err)
	}
	for _, z := range zones {
		name, err := os.ReadFile(filepath.Join(z, "name"))
		if err != nil {
			t.Fatal(err)
		}
		w, ok := goldenZonePowerW[strings.TrimSpace(string(name))]
		if !ok {
			t.Fatalf("%s: zone %q has no golden power", z, name)
		}
		energy := filepath.Join(z, "energy_uj")
		uj := readUint(t, energy) + uint64(w*1e6)
		if limit := readUint(t, filepath.Join(z, "max_energy_range_uj")); uj > limit {
			t.Fatalf("%s: %d µJ would wrap past %d; lower the fixture's value", energy, uj, limit)
		}
		writeFile(t, energy, strconv.FormatUint(uj, 10)+"\n")
	}

	path := filepath.Join(proc, "stat")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The aggregate "cpu" line is the sum of the per-CPU lines after it.
	var lines []string
	var total [4]uint64
	aggregate := -1
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "cpu":
			aggregate = i
		case len(f) > 0 && strings.HasPrefix(f[0], "cpu"):
			n, err := strconv.Atoi(f[0][3:])
			if err != nil {
				t.Fatalf("%s: %q", path, line)
			}
			d := goldenCPUJiffies(n)
			for k := range total {
				total[k] += d[k]
			}
			line = addJiffies(t, f, d)
		}
		lines = append(lines, line)
	}
	if aggregate < 0 {
		t.Fatalf("%s: no aggregate cpu line", path)
	}
	lines[aggregate] = addJiffies(t, strings.Fields(lines[aggregate]), total)
	writeFile(t, path, strings.Join(lines, "\n")+"\n")
}

// addJiffies adds user, system, iowait and idle jiffies to the fields of a
// /proc/stat cpu line (cpuN user nice system idle iowait ...).
func addJiffies(t *testing.T, f []string, d [4]uint64) string {
	t.Helper()
	for k, col := range [4]int{1, 3, 5, 4} {
		v, err := strconv.ParseUint(f[col], 10, 64)
		if err != nil {
			t.Fatalf("/proc/stat %s: %v", f[0], err)
		}
		f[col] = strconv.FormatUint(v+d[k], 10)
	}
	return strings.Join(f, " ")
}

func readUint(t *testing.T, path string) uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withoutFamilies drops the metric families whose names start with one of
// prefixes from a text exposition: a family runs from its # HELP line to
// the next one.
func withoutFamilies(t *testing.T, exposition []byte, prefixes []string) []byte {
	t.Helper()
	var out bytes.Buffer
	drop := false
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "# HELP "); ok {
			drop = slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) })
		}
		if !drop {
			out.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// compareGolden compares got with the golden file at path, or rewrites the
// file with -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, path, string(got))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./node -run TestGolden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./node -run TestGolden -update rewrites it; review the diff):\n%s", path, lineDiff(want, got))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+), or says
// that the same lines come in another order.
func lineDiff(want, got []byte) string {
	count := map[string]int{}
	for _, l := range strings.Split(string(want), "\n") {
		count[l]++
	}
	var plus []string
	for _, l := range strings.Split(string(got), "\n") {
		if count[l] > 0 {
			count[l]--
			continue
		}
		plus = append(plus, "+ "+l)
	}
	var minus []string
	for _, l := range strings.Split(string(want), "\n") {
		if count[l] > 0 {
			count[l]--
			minus = append(minus, "- "+l)
		}
	}
	if len(minus)+len(plus) == 0 {
		return "the same lines in another order"
	}
	return strings.Join(append(minus, plus...), "\n")
}
