package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
)

// The reload faults of issue 28 (items 4 and 5): a node agent
// (collect --listen) whose configuration file is edited under it.

// agentHealth is the part of /healthz these faults read.
type agentHealth struct {
	Status string                     `json:"status"`
	Sinks  map[string]json.RawMessage `json:"sinks"`
	Config *struct {
		ReloadsTotal int    `json:"reloads_total"`
		RefusedTotal int    `json:"refused_total"`
		Refused      string `json:"refused"`
	} `json:"config"`
}

// reloadAgent starts collect --listen for secs on a configuration with an
// InfluxDB sink (and extra), recording to a run directory too.
func (b *bench) reloadAgent(host, extra string, secs int) (a *reloading, run string, body []byte, stop func()) {
	sink := fmt.Sprintf("sinks:\n  influx:\n    url: %s\n    bucket: %s\n    flush_interval: 1s\n    spool_dir: %s\n",
		b.srv.URL(), influxtest.Bucket, filepath.Join(b.work, host+"-spool"))
	cfg := b.config(host, b.sysCopy(host), extra+sink)
	body, err := os.ReadFile(cfg)
	check(err)
	addr := freeAddr()
	run = filepath.Join(b.work, host+"-run")
	cmd, log := b.start(host, "collect", "--config", cfg, "--duration", strconv.Itoa(secs)+"s", "--out", run, "--listen", addr)
	return &reloading{cfg: cfg, addr: addr, cmd: cmd}, run, body, func() { wait(cmd, log, host) }
}

// reloading is a running agent and its configuration file.
type reloading struct {
	cfg, addr string
	cmd       *exec.Cmd
}

// hup writes body to cfg, sends SIGHUP and waits (10 s at most) for the
// agent to count the reload; it returns /healthz after it.
func (a *reloading) hup(body []byte) agentHealth {
	cfg, addr := a.cfg, a.addr
	var h agentHealth
	getJSON("http://"+addr+"/healthz", &h)
	n := 0
	if h.Config != nil {
		n = h.Config.ReloadsTotal
	}
	check(os.WriteFile(cfg, body, 0o644))
	check(a.cmd.Process.Signal(syscall.SIGHUP))
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		var now agentHealth // fresh: decoding into h would keep the sinks it listed before
		if getJSON("http://"+addr+"/healthz", &now) == nil && now.Config != nil && now.Config.ReloadsTotal > n {
			return now
		}
	}
	return agentHealth{}
}

// influxRestore: 8 s into a 30 s collection the InfluxDB sink is removed
// on purpose (removes:) and put back by the next reload at once, while the
// removed sink still holds its spool; every tick but those collected while
// it was configured off must reach InfluxDB.
func (b *bench) influxRestore() []row {
	const secs = 30
	host := "fault-reload-restore"
	a, run, full, stop := b.reloadAgent(host, "", secs)
	time.Sleep(8 * time.Second)
	without := []byte(string(full[:bytes.Index(full, []byte("sinks:\n"))]) + "removes: [sinks.influx]\n")
	off := a.hup(without)
	_, still := off.Sinks["influx"]
	restored := time.Now()
	h := a.hup(full)
	time.Sleep(2 * time.Second)
	var after agentHealth
	getJSON("http://"+a.addr+"/healthz", &after)
	_, back := after.Sinks["influx"]
	stop()
	local := localTicks(run)
	delivered := b.waitDelivered(host, len(local), 30*time.Second)
	return []row{{fault: "reload: InfluxDB sink removed, restored at once", expected: secs, local: len(local), delivered: len(delivered),
		lostLocalS: float64(secs - len(local)), lostDeliveredS: float64(secs - len(delivered)), recoverLocalS: -1,
		recoverInfluxS: firstAfter(delivered, restored), orphans: -1,
		note: fmt.Sprintf("removal applied: %v%s; sink back in /healthz 2 s after the restore: %v (status %s%s)", !still, refusedOf(off), back, after.Status, refusedOf(h))}}
}

// truncatedConfigs: a 40 s collection with alert rules and an InfluxDB
// sink gets its file cut at 12 line ends spread through it, each with
// SIGHUP and the whole file back after; none may apply, and the sink and
// rules must run throughout.
func (b *bench) truncatedConfigs() []row {
	const secs, cuts = 40, 12
	host := "fault-reload-truncated"
	rules := "alerts:\n  rules:\n    - name: cpu_hot\n      severity: critical\n      measurement: hwmon\n      field: temp_c\n" +
		"      threshold: {op: \">\", value: 95}\n      for: 30s\n    - name: cpu_warm\n      measurement: hwmon\n      field: temp_c\n" +
		"      threshold: {op: \">\", value: 85}\n"
	a, run, full, stop := b.reloadAgent(host, rules, secs)
	time.Sleep(3 * time.Second)
	applied, kept := 0, 0
	for i := 1; i <= cuts; i++ {
		n := bytes.LastIndexByte(full[:len(full)*i/(cuts+1)], '\n') + 1
		h := a.hup(full[:n])
		if h.Config != nil && h.Config.Refused == "" {
			applied++
		}
		var rs []json.RawMessage
		if _, on := h.Sinks["influx"]; on && getJSON("http://"+a.addr+"/alerts", &rs) == nil && len(rs) == 2 {
			kept++
		}
		a.hup(full)
	}
	stop()
	local := localTicks(run)
	delivered := b.waitDelivered(host, len(local), 30*time.Second)
	return []row{{fault: "reload: 12 truncated configs", expected: secs, local: len(local), delivered: len(delivered),
		lostLocalS: float64(secs - len(local)), lostDeliveredS: float64(secs - len(delivered)), recoverLocalS: -1, recoverInfluxS: -1, orphans: -1,
		note: fmt.Sprintf("%d of %d cut files applied; InfluxDB sink and both rules still running after %d of %d", applied, cuts, kept, cuts)}}
}

// refusedOf is ", refused: REASON" for a reload /healthz says was refused.
func refusedOf(h agentHealth) string {
	if h.Config == nil || h.Config.Refused == "" {
		return ""
	}
	return ", refused: " + h.Config.Refused
}
