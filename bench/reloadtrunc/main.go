// Command reloadtrunc measures what a running node agent does with a
// configuration file caught mid-write (issue 28, item 5): it starts a real
// `heatsink collect --listen` on a full configuration (an InfluxDB sink to
// a real influxd, three alert rules, hwmon and two PDUs), then 24 times
// writes the file cut short at a point spread evenly through it, sends
// SIGHUP, and reads the agent's log, /healthz and /alerts: did it apply
// the cut file, and what changed (sinks, sources, rules). After each cut
// the whole file is written back and reloaded. Last, the whole file itself
// is reloaded, which must apply.
//
// Usage: bench/reload-truncation.sh [-heatsink PATH]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/configs"

	// Every source and sink kind, so that configs.Parse knows the file's sections.
	_ "github.com/heatsink-hpc/heatsink/node"
)

const cuts = 24

// fullConfig is a node's real configuration; %s are the sysfs and procfs
// roots, the InfluxDB URL and bucket, and the spool directory.
const fullConfig = `# A node agent: hwmon and RAPL of this node, the rack's two PDUs,
# alert rules, and InfluxDB.
host: reload-bench
interval: 1s
sysfs_root: %s
procfs_root: %s
labels:
  cooling: immersion
  site: lab-a
sources:
  nvml: {disabled: true}
  hwmon:
    sensor_exclude: fan
  pdus:
    - {name: rack1-a, target: 127.0.0.1, port: 16101, preset: apc-rpdu2}
    - {name: rack1-b, target: 127.0.0.1, port: 16102, preset: apc-rpdu2}
alerts:
  rules:
    - name: cpu_hot
      severity: critical
      measurement: hwmon
      field: temp_c
      tags: {class: cpu_package}
      threshold: {op: ">", value: 95}
      for: 30s
    - name: cpu_warm
      severity: warning
      measurement: hwmon
      field: temp_c
      tags: {class: cpu_package}
      threshold: {op: ">", value: 85, margin: 3}
      for: 2m
    - name: sensor_silent
      severity: warning
      silent: 30s
sinks:
  influx:
    url: %s
    bucket: %s
    flush_interval: 1s
    timeout: 10s
    max_retry_interval: 4s
    spool_dir: %s
    spool_max_bytes: 1073741824
`

// state is what the agent runs, as it shows it.
type state struct {
	sinks, sources, rules []string
}

func (s state) String() string {
	return fmt.Sprintf("sinks %v sources %d rules %v", s.sinks, len(s.sources), s.rules)
}

// diff says what changed from a to b.
func diff(a, b state) string {
	var out []string
	list := func(what string, x, y []string) {
		for _, v := range x {
			if !slices.Contains(y, v) {
				out = append(out, "-"+what+" "+v)
			}
		}
		for _, v := range y {
			if !slices.Contains(x, v) {
				out = append(out, "+"+what+" "+v)
			}
		}
	}
	list("sink", a.sinks, b.sinks)
	list("source", a.sources, b.sources)
	list("rule", a.rules, b.rules)
	if len(out) == 0 {
		return "nothing"
	}
	return strings.Join(out, " ")
}

// syncBuf is the agent's log, written by its process and read here.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func main() {
	bin := flag.String("heatsink", "", "heatsink binary (default: build one from this tree)")
	flag.Parse()
	work, err := os.MkdirTemp("", "heatsink-reloadtrunc-")
	check(err)
	defer os.RemoveAll(work)
	if *bin == "" {
		*bin = filepath.Join(work, "heatsink")
		out, err := exec.Command("go", "build", "-o", *bin, "./cmd/heatsink").CombinedOutput()
		if err != nil {
			fail("build heatsink: %v\n%s", err, out)
		}
	}
	srv, err := influxtest.Launch(filepath.Join(work, "influxd"), influxtest.Options{})
	check(err)
	defer srv.Stop()
	root, err := filepath.Abs("sensors/testdata/intel-node")
	check(err)
	full := []byte(fmt.Sprintf(fullConfig, root+"/sys", root+"/proc", srv.URL(), influxtest.Bucket, filepath.Join(work, "spool")))
	if _, err := configs.Parse("full.yaml", full); err != nil {
		fail("the full configuration does not parse: %v", err)
	}
	path := filepath.Join(work, "node.yaml")
	check(os.WriteFile(path, full, 0o644))

	addr := freeAddr()
	log := &syncBuf{}
	cmd := exec.Command(*bin, "collect", "--config", path, "--listen", addr)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	check(cmd.Start())
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	base := waitState(addr, log)

	// The cuts as they fall (nearly always mid-line), then the same cuts
	// moved back to the end of their line: a writer flushing whole lines.
	applied, notBack := 0, 0
	for _, atLineEnd := range []bool{false, true} {
		fmt.Printf("\ncut %s\n", map[bool]string{false: "at 24 points spread evenly through the file", true: "at the same points moved back to the end of their line"}[atLineEnd])
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "cut at byte\tline\tparses\tapplied\twhat changed\tthe agent's reason")
		for i := 1; i <= cuts+1; i++ {
			n := len(full) * i / (cuts + 1)
			if i == cuts+1 {
				n = len(full)
			} else if atLineEnd {
				n = bytes.LastIndexByte(full[:n], '\n') + 1
			}
			cut := full[:n]
			_, perr := configs.Parse("cut.yaml", cut)
			ok, reason := reload(cmd, path, cut, log)
			after := getState(addr)
			if ok && n < len(full) {
				applied++
			}
			what := "—"
			if ok {
				what = diff(base, after)
			}
			fmt.Fprintf(tw, "%d/%d\t%d\t%s\t%s\t%s\t%s\n", n, len(full), bytes.Count(cut, []byte("\n"))+1, yes(perr == nil), yes(ok), what, short(reason))
			if ok && n == len(full) && what != "nothing" {
				fail("the whole file changed %s", what)
			}
			if n < len(full) {
				// Put the whole file back, so that every cut starts from it.
				if ok, reason := reload(cmd, path, full, log); !ok {
					fail("the whole file was refused after cut %d: %s", i, reason)
				}
				if s := getState(addr); diff(base, s) != "nothing" {
					notBack++
					fmt.Fprintf(os.Stderr, "reloadtrunc: after cut %d the whole file came back, yet the agent runs %s (%s)\n", i, s, diff(base, s))
				}
			}
		}
		tw.Flush()
	}
	fmt.Printf("\n%d of %d cut files applied (goal 0); the whole file: last row of each table; %d times the whole file written back did not restore what ran before the cut. Agent: %s\n", applied, 2*cuts, notBack, *bin)
}

// reload writes body to path in place, sends SIGHUP and waits for the
// agent to log the reload's outcome.
func reload(cmd *exec.Cmd, path string, body []byte, log *syncBuf) (applied bool, reason string) {
	before := log.String()
	nOK, nFail := strings.Count(before, "configuration reloaded"), strings.Count(before, "reload failed")
	check(os.WriteFile(path, body, 0o644))
	check(cmd.Process.Signal(syscall.SIGHUP))
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		l := log.String()
		if strings.Count(l, "configuration reloaded") > nOK {
			return true, ""
		}
		if strings.Count(l, "reload failed") > nFail {
			last := l[strings.LastIndex(l, "reload failed"):]
			if i := strings.Index(last, "err="); i >= 0 {
				last = last[i+4:]
			}
			return false, strings.SplitN(last, "\n", 2)[0]
		}
	}
	fail("no reload logged within 15 s of SIGHUP\n%s", tail(log.String()))
	return false, ""
}

// short is the gist of a refusal.
func short(reason string) string {
	reason = strings.Trim(reason, `"`)
	switch {
	case reason == "":
		return ""
	case strings.Contains(reason, "middle of a line"):
		return "ends mid-line"
	case strings.Contains(reason, "no longer mentions"):
		s := reason[strings.Index(reason, "mentions ")+len("mentions "):]
		return "drops " + s[:strings.Index(s, ", as a file")]
	case strings.Contains(reason, "still being written"):
		return "still being written"
	}
	if len(reason) > 70 {
		reason = reason[:70] + "..."
	}
	return reason
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// waitState waits for the agent's first ticks and returns what it runs.
func waitState(addr string, log *syncBuf) state {
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		var h struct {
			Ticks int `json:"ticks"`
		}
		if getJSON("http://"+addr+"/healthz", &h) == nil && h.Ticks >= 2 {
			return getState(addr)
		}
	}
	fail("the agent did not tick within 30 s\n%s", tail(log.String()))
	return state{}
}

func getState(addr string) state {
	var h struct {
		Sources []struct {
			Name string `json:"name"`
		} `json:"sources"`
		Sinks map[string]json.RawMessage `json:"sinks"`
	}
	var rules []struct {
		Name string `json:"name"`
	}
	check(getJSON("http://"+addr+"/healthz", &h))
	check(getJSON("http://"+addr+"/alerts", &rules))
	var s state
	for _, x := range h.Sources {
		s.sources = append(s.sources, x.Name)
	}
	for k := range h.Sinks {
		s.sinks = append(s.sinks, k)
	}
	slices.Sort(s.sinks)
	for _, r := range rules {
		s.rules = append(s.rules, r.Name)
	}
	return s
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer l.Close()
	return l.Addr().String()
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "reloadtrunc: "+format+"\n", a...)
	os.Exit(1)
}
