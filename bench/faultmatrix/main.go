// Command faultmatrix runs heatsink through the faults of issue 21 end to
// end on this machine, with real parts: a real heatsink binary on a copy of
// a recorded sysfs tree, a real influxd, small tmpfs mounts that fill up,
// SIGHUP and kill -9. Per fault it prints the ticks expected, the ticks
// recorded in the run directory, the ticks delivered to InfluxDB, the
// seconds lost, how long each sink took to recover after the fault
// cleared, and processes left orphaned. It needs root (tmpfs mounts).
//
// Usage: bench/faults.sh [-heatsink PATH] [-only NAME]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/internal/smalldisk"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// row is one fault's line of the table; a negative number is not measured.
type row struct {
	fault                         string
	expected, local, delivered    int
	lostLocalS, lostDeliveredS    float64
	recoverLocalS, recoverInfluxS float64
	orphans                       int
	note                          string
}

type bench struct {
	bin, work, sysfs string
	srv              *influxtest.Server
}

func main() {
	bin := flag.String("heatsink", "", "heatsink binary (default: build one)")
	only := flag.String("only", "", "run only the faults whose name contains this")
	flag.Parse()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "faultmatrix: needs root, to mount the small tmpfs that fill up")
		os.Exit(2)
	}
	work, err := os.MkdirTemp("", "heatsink-faults-")
	check(err)
	defer os.RemoveAll(work)
	if *bin == "" {
		*bin = filepath.Join(work, "heatsink")
		out, err := exec.Command("go", "build", "-o", *bin, "./cmd/heatsink").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build heatsink: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	srv, err := influxtest.Launch(filepath.Join(work, "influxd"), influxtest.Options{})
	check(err)
	defer srv.Stop()
	b := &bench{bin: *bin, work: work, srv: srv}

	faults := []struct {
		name string
		run  func() []row
	}{
		{"enospc", b.diskFull},
		{"influx-down-at-start", b.influxDownAtStart},
		{"influx-down-mid-run", b.influxDownMidRun},
		{"sighup", b.sighup},
		{"kill9-collect", b.kill9Collect},
		{"kill9-run", b.kill9Run},
		{"hwmon", b.hwmonGone},
		{"health-impostor", b.healthImpostor},
		{"spool-full-influx-up", b.spoolDiskFull},
		{"spool-foreign", b.foreignSpool},
		{"hwmon-fifo", b.hwmonFIFO},
		{"tank-hung", b.tankHung},
		{"slurm-summary", b.slurmSummary},
		{"reload-influx-restore", b.influxRestore},
		{"reload-truncated", b.truncatedConfigs},
	}
	var rows []row
	t0 := time.Now()
	for _, f := range faults {
		if *only != "" && !strings.Contains(f.name, *only) {
			continue
		}
		fmt.Fprintf(os.Stderr, "faultmatrix: %s ...\n", f.name)
		rows = append(rows, f.run()...)
	}
	printTable(rows)
	fmt.Printf("\ntotal %.0f s on %s\n", time.Since(t0).Seconds(), hostname())
}

func printTable(rows []row) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "fault\tticks expected\trecorded locally\tdelivered to InfluxDB\ts lost (local)\ts lost (InfluxDB)\trun dir back after s\tInfluxDB back after s\torphans\t")
	n := func(v int) string {
		if v < 0 {
			return "—"
		}
		return strconv.Itoa(v)
	}
	f := func(v float64) string {
		if v < 0 || math.IsNaN(v) {
			return "—"
		}
		return fmt.Sprintf("%.1f", v)
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.fault, n(r.expected), n(r.local), n(r.delivered),
			f(r.lostLocalS), f(r.lostDeliveredS), f(r.recoverLocalS), f(r.recoverInfluxS), n(r.orphans))
	}
	tw.Flush()
	for _, r := range rows {
		if r.note != "" {
			fmt.Printf("  %s: %s\n", r.fault, r.note)
		}
	}
}

// sysCopy is a fresh copy of the recorded Intel node's sysfs.
func (b *bench) sysCopy(name string) string {
	dst := filepath.Join(b.work, name+"-sys")
	out, err := exec.Command("cp", "-a", "sensors/testdata/intel-node/sys", dst).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "copy sysfs: %v %s\n", err, out)
		os.Exit(1)
	}
	return dst
}

// config writes a configuration for host: a tick a second over sys.
func (b *bench) config(host, sys, extra string) string {
	path := filepath.Join(b.work, host+".yaml")
	body := fmt.Sprintf("host: %s\ninterval: 1s\nsysfs_root: %s\nsources: {nvml: {disabled: true}}\n%s", host, sys, extra)
	check(os.WriteFile(path, []byte(body), 0o644))
	return path
}

func (b *bench) influxFlags(spool string) []string {
	return []string{"--influx-url", b.srv.URL(), "--influx-bucket", influxtest.Bucket, "--influx-spool", spool}
}

// start starts heatsink with args, its log in the work directory.
func (b *bench) start(_ string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(b.bin, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	check(cmd.Start())
	return cmd, &log
}

func wait(cmd *exec.Cmd, log *bytes.Buffer, name string) {
	if err := cmd.Wait(); err != nil {
		fmt.Fprintf(os.Stderr, "faultmatrix: %s: heatsink: %v\n%s\n", name, err, tail(log.String()))
	}
	os.WriteFile(filepath.Join(os.TempDir(), "heatsink-faults-"+name+".log"), log.Bytes(), 0o644)
}

// localTicks returns the collector_tick times in a run directory.
func localTicks(dir string) []time.Time {
	var ts []time.Time
	rundir.ForEachPoint(dir, func(p *point.Point) error {
		if p.Measurement == "collector_tick" {
			ts = append(ts, p.Time)
		}
		return nil
	}, func(*point.LineError) {})
	return ts
}

// influxTicks returns the collector_tick times InfluxDB holds for host.
func (b *bench) influxTicks(host string) []time.Time {
	pts, err := b.srv.Points("collector_tick")
	if err != nil {
		return nil
	}
	var ts []time.Time
	for _, p := range pts {
		if p.Tag("host") == host {
			ts = append(ts, p.Time)
		}
	}
	return ts
}

// firstAfter is how long after t the first of ts is (-1 if none).
func firstAfter(ts []time.Time, t time.Time) float64 {
	best := -1.0
	for _, x := range ts {
		if d := x.Sub(t).Seconds(); d >= -0.5 && (best < 0 || d < best) {
			best = math.Max(d, 0)
		}
	}
	return best
}

// waitDelivered polls InfluxDB until it holds n ticks of host, or timeout.
func (b *bench) waitDelivered(host string, n int, timeout time.Duration) []time.Time {
	deadline := time.Now().Add(timeout)
	for {
		ts := b.influxTicks(host)
		if len(ts) >= n || time.Now().After(deadline) {
			return ts
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// mount mounts a small tmpfs under the work directory.
func (b *bench) mount(name string) string {
	dir := filepath.Join(b.work, name)
	check(os.MkdirAll(dir, 0o755))
	check(smalldisk.MountAt(dir, 4<<20))
	return dir
}

// diskFull: the run directory and the spool each on a small tmpfs, both
// filled 8 s into a 40 s collection and freed 20 s later.
func (b *bench) diskFull() []row {
	const secs = 40
	runFS, spoolFS := b.mount("runfs"), b.mount("spoolfs")
	defer smalldisk.Unmount(runFS)
	defer smalldisk.Unmount(spoolFS)
	host := "fault-enospc"
	run := filepath.Join(runFS, "run")
	cfg := b.config(host, b.sysCopy(host), "")
	cmd, log := b.start(host, append([]string{"collect", "--config", cfg, "--duration", strconv.Itoa(secs) + "s", "--out", run}, b.influxFlags(filepath.Join(spoolFS, "spool"))...)...)
	time.Sleep(8 * time.Second)
	freeRun, err1 := smalldisk.FillDir(runFS)
	freeSpool, err2 := smalldisk.FillDir(spoolFS)
	check(err1)
	check(err2)
	full := time.Now()
	time.Sleep(20 * time.Second)
	check(freeRun())
	check(freeSpool())
	freed := time.Now()
	wait(cmd, log, host)
	local := localTicks(run)
	delivered := b.waitDelivered(host, len(local), 30*time.Second)
	fullS := freed.Sub(full).Seconds()
	r := row{fault: "ENOSPC run dir + spool, 20 s", expected: secs, local: len(local), delivered: len(delivered),
		lostLocalS: float64(secs - len(local)), lostDeliveredS: float64(secs - len(delivered)),
		recoverLocalS: gapEnd(run, freed), recoverInfluxS: firstAfter(delivered, freed), orphans: -1,
		note: fmt.Sprintf("disks full for %.0f s; the run dir keeps points in memory meanwhile, the spool drops (and counts) what it cannot append", fullS)}
	return []row{r}
}

// gapEnd is how long after freed the run directory's recording gap closed.
func gapEnd(dir string, freed time.Time) float64 {
	end := -1.0
	rundir.ForEachPoint(dir, func(p *point.Point) error {
		if p.Measurement == "event" && p.Tag("kind") == rundir.GapEventKind {
			g, _ := p.Float("gap_s")
			end = math.Max(p.Time.Add(time.Duration(g*float64(time.Second))).Sub(freed).Seconds(), 0)
		}
		return nil
	}, func(*point.LineError) {})
	return end
}

// influxDownAtStart: influxd is stopped when collect starts, back 10 s later.
func (b *bench) influxDownAtStart() []row {
	const secs = 30
	host := "fault-influx-start"
	check(b.srv.Stop())
	cfg := b.config(host, b.sysCopy(host), "")
	run := filepath.Join(b.work, host+"-run")
	start := time.Now()
	cmd, log := b.start(host, append([]string{"collect", "--config", cfg, "--duration", strconv.Itoa(secs) + "s", "--out", run}, b.influxFlags(filepath.Join(b.work, host+"-spool"))...)...)
	time.Sleep(10 * time.Second)
	check(b.srv.Restart())
	back := time.Now()
	caught := b.catchUp(host, start, back)
	wait(cmd, log, host)
	local := localTicks(run)
	delivered := b.waitDelivered(host, len(local), 30*time.Second)
	note := ""
	if !strings.Contains(log.String(), "not answering at start") {
		note = "no warning about InfluxDB at start in the log"
	}
	return []row{{fault: "influxd down at start, 10 s", expected: secs, local: len(local), delivered: len(delivered),
		lostLocalS: float64(secs - len(local)), lostDeliveredS: float64(secs - len(delivered)), recoverLocalS: -1, recoverInfluxS: caught, orphans: -1, note: note}}
}

// catchUp measures how long after back InfluxDB holds the ticks collected
// before it (one a second since start, less one for start-up), that is
// until the spool's backlog has been sent.
func (b *bench) catchUp(host string, start, back time.Time) float64 {
	want := int(back.Sub(start).Seconds()) - 1
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		n := 0
		for _, t := range b.influxTicks(host) {
			if t.Before(back) {
				n++
			}
		}
		if n >= want {
			return time.Since(back).Seconds()
		}
	}
	return -1
}

// influxDownMidRun: influxd is stopped 10 s into a 70 s collection and
// started again 30 s later (its restart itself takes seconds more).
func (b *bench) influxDownMidRun() []row {
	const secs = 70
	host := "fault-influx-mid"
	cfg := b.config(host, b.sysCopy(host), "")
	run := filepath.Join(b.work, host+"-run")
	start := time.Now()
	cmd, log := b.start(host, append([]string{"collect", "--config", cfg, "--duration", strconv.Itoa(secs) + "s", "--out", run}, b.influxFlags(filepath.Join(b.work, host+"-spool"))...)...)
	time.Sleep(10 * time.Second)
	check(b.srv.Stop())
	time.Sleep(30 * time.Second)
	restart := time.Now()
	check(b.srv.Restart())
	back := time.Now()
	caught := b.catchUp(host, start, back)
	wait(cmd, log, host)
	local := localTicks(run)
	delivered := b.waitDelivered(host, len(local), 30*time.Second)
	return []row{{fault: "influxd down 30 s mid-run", note: fmt.Sprintf("influxd took %.1f s to answer again after its restart began", back.Sub(restart).Seconds()), expected: secs, local: len(local), delivered: len(delivered),
		lostLocalS: float64(secs - len(local)), lostDeliveredS: float64(secs - len(delivered)), recoverLocalS: -1, recoverInfluxS: caught, orphans: -1}}
}

// brokenConfigs are ten configuration files a SIGHUP must refuse.
var brokenConfigs = []string{
	"",
	"# nothing but a comment\n",
	"interval: 1s\nsources: [this is not a mapping\n",
	"interval: 1s\nalerts:\n  rules:\n    - {name: x, measurement: gpu, fie",
	"interval: 2000000h\n",
	"runner: {tolerance_c: .nan}\n",
	"host: \"node\\u0007bell\"\n",
	"sinks: {influx: {url: \"http://admin:pw@db:8086\", bucket: b}}\n",
	"alerts: {rules: [{name: hot, measurement: hwmon, field: temp_c, threshold: {op: \">\", value: .inf}}]}\n",
	"intervall: 1s\n",
}

// sighup: a 25 s collection with one alert rule gets ten broken
// configurations, each with SIGHUP; the rule and every tick must stay.
func (b *bench) sighup() []row {
	const secs = 25
	host := "fault-sighup"
	rule := "alerts:\n  rules:\n    - {name: cpu_hot, severity: critical, measurement: hwmon, field: temp_c, tags: {class: cpu_package}, threshold: {op: \">\", value: 90}}\n"
	cfg := b.config(host, b.sysCopy(host), rule)
	good, _ := os.ReadFile(cfg)
	addr := freeAddr()
	run := filepath.Join(b.work, host+"-run")
	cmd, log := b.start(host, "collect", "--config", cfg, "--duration", strconv.Itoa(secs)+"s", "--out", run, "--listen", addr)
	time.Sleep(3 * time.Second)
	kept := 0
	for _, body := range brokenConfigs {
		check(os.WriteFile(cfg, []byte(body), 0o644))
		cmd.Process.Signal(syscall.SIGHUP)
		time.Sleep(1500 * time.Millisecond)
		var rules []json.RawMessage
		if getJSON("http://"+addr+"/alerts", &rules) == nil && len(rules) == 1 {
			kept++
		}
	}
	os.WriteFile(cfg, good, 0o644)
	wait(cmd, log, host)
	local := localTicks(run)
	refused := strings.Count(log.String(), "reload failed")
	return []row{{fault: "SIGHUP x10 broken configs", expected: secs, local: len(local), delivered: -1,
		lostLocalS: float64(secs - len(local)), lostDeliveredS: -1, recoverLocalS: -1, recoverInfluxS: -1, orphans: -1,
		note: fmt.Sprintf("%d of 10 reloads refused; the alert rule was still served after %d of 10", refused, kept)}}
}

// kill9Collect: collect is killed with SIGKILL at 6 offsets; the next
// start sends what the spool kept and marks the run cut off.
func (b *bench) kill9Collect() []row {
	var rows []row
	for i, off := range []time.Duration{1500 * time.Millisecond, 2500 * time.Millisecond, 3200 * time.Millisecond, 4700 * time.Millisecond, 5100 * time.Millisecond, 6900 * time.Millisecond} {
		host := fmt.Sprintf("fault-kill9-%d", i+1)
		cfg := b.config(host, b.sysCopy(host), "")
		spool := filepath.Join(b.work, host+"-spool")
		run := filepath.Join(b.work, host+"-run")
		t0 := time.Now()
		cmd, log := b.start(host, append([]string{"collect", "--config", cfg, "--out", run}, b.influxFlags(spool)...)...)
		time.Sleep(off)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		_ = log
		alive := time.Since(t0)
		local := localTicks(run)
		// The next start on the same spool sends what the killed one kept.
		next, nlog := b.start(host+"-next", append([]string{"collect", "--config", cfg, "--duration", "1s", "--out", run + "-next"}, b.influxFlags(spool)...)...)
		wait(next, nlog, host+"-next")
		delivered := 0
		for _, t := range b.waitDelivered(host, len(local)+1, 15*time.Second) {
			if t.Before(t0.Add(alive)) {
				delivered++
			}
		}
		status := "?"
		if m, err := rundir.ReadMeta(run); err == nil {
			status = m.Status
		}
		expected := int(alive.Seconds())
		rows = append(rows, row{fault: fmt.Sprintf("kill -9 collect at %.1f s", off.Seconds()), expected: expected, local: len(local), delivered: delivered,
			lostLocalS: float64(expected - len(local)), lostDeliveredS: float64(expected - delivered), recoverLocalS: -1, recoverInfluxS: -1, orphans: -1,
			note: "run.json status after the next start: " + status})
	}
	return rows
}

// kill9Run: heatsink run is killed with SIGKILL during the load of a job
// (a program, and a shell that started a child in the background).
func (b *bench) kill9Run() []row {
	var rows []row
	for _, job := range []struct {
		name   string
		argv   []string
		sleeps []string // what the job runs, to find it and what it leaves
	}{
		{"a program", []string{"sleep", "3001"}, []string{"3001"}},
		{"a shell with a background child", []string{"sh", "-c", "sleep 3002 & sleep 3003; true"}, []string{"3002", "3003"}},
	} {
		host := "fault-run-" + strings.ReplaceAll(job.name, " ", "-")
		cfg := b.config(host, b.sysCopy(host), "")
		run := filepath.Join(b.work, host+"-run")
		cmd, log := b.start(host, append([]string{"run", "--config", cfg, "--baseline", "2s", "--load", "60s", "--out", run, "--"}, job.argv...)...)
		count := func() int {
			n := 0
			for _, a := range job.sleeps {
				n += len(pids(a))
			}
			return n
		}
		for deadline := time.Now().Add(30 * time.Second); count() < len(job.sleeps) && time.Now().Before(deadline); {
			time.Sleep(200 * time.Millisecond)
		}
		started := count()
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		_ = log
		time.Sleep(2 * time.Second)
		var left []int
		for _, a := range job.sleeps {
			left = append(left, pids(a)...)
		}
		for _, p := range left {
			syscall.Kill(p, syscall.SIGKILL)
		}
		next, nlog := b.start(host+"-next", "collect", "--config", cfg, "--duration", "1s", "--out", run+"-next")
		wait(next, nlog, host+"-next")
		status := "?"
		if m, err := rundir.ReadMeta(run); err == nil {
			status = m.Status
		}
		rows = append(rows, row{fault: "kill -9 run, job: " + job.name, expected: -1, local: len(localTicks(run)), delivered: -1,
			lostLocalS: -1, lostDeliveredS: -1, recoverLocalS: -1, recoverInfluxS: -1, orphans: len(left),
			note: fmt.Sprintf("job processes seen before the kill: %d; run.json status after the next start: %s", started, status)})
	}
	return rows
}

// pids returns the processes whose command line is "sleep ARG".
func pids(arg string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if string(b) == "sleep\x00"+arg+"\x00" {
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
				s := string(st)
				if i := strings.LastIndexByte(s, ')'); i > 0 && i+2 < len(s) && s[i+2] == 'Z' {
					continue
				}
			}
			out = append(out, pid)
		}
	}
	return out
}

// hwmonGone: the coretemp chip disappears 5 s into a 20 s collection and
// returns 5 s later as hwmon9, as a driver reload does.
func (b *bench) hwmonGone() []row {
	const secs = 20
	host := "fault-hwmon"
	sys := b.sysCopy(host)
	cfg := b.config(host, sys, "")
	run := filepath.Join(b.work, host+"-run")
	cmd, log := b.start(host, "collect", "--config", cfg, "--duration", strconv.Itoa(secs)+"s", "--out", run)
	time.Sleep(5 * time.Second)
	core := filepath.Join(sys, "devices/platform/coretemp.0")
	saved := filepath.Join(b.work, "coretemp.0")
	check(os.Rename(core, saved))
	check(os.Remove(filepath.Join(sys, "class/hwmon/hwmon1")))
	time.Sleep(5 * time.Second)
	check(os.Rename(filepath.Join(saved, "hwmon/hwmon1"), filepath.Join(saved, "hwmon/hwmon9")))
	check(os.Rename(saved, core))
	check(os.Symlink("../../devices/platform/coretemp.0/hwmon/hwmon9", filepath.Join(sys, "class/hwmon/hwmon9")))
	back := time.Now()
	wait(cmd, log, host)
	var coreTicks []time.Time
	seen := map[time.Time]bool{}
	rundir.ForEachPoint(run, func(p *point.Point) error {
		if p.Measurement == "hwmon" && p.Tag("chip") == "platform_coretemp_0" && !seen[p.Time] {
			seen[p.Time] = true
			coreTicks = append(coreTicks, p.Time)
		}
		return nil
	}, func(*point.LineError) {})
	return []row{{fault: "hwmon chip gone 5 s", expected: secs, local: len(coreTicks), delivered: -1,
		lostLocalS: float64(secs - len(coreTicks)), lostDeliveredS: -1, recoverLocalS: firstAfter(coreTicks, back), recoverInfluxS: -1, orphans: -1,
		note: "recorded = ticks with coretemp readings; 5 s of them are the chip's own absence"}}
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	defer l.Close()
	return l.Addr().String()
}

func getJSON(url string, into any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(into)
}

func tail(s string) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultmatrix:", err)
		os.Exit(1)
	}
}
