package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

// coretemp holds the CPU package and core sensors of the intel-node
// fixture, whose values the tests change to heat and cool a node.
const coretemp = "devices/platform/coretemp.0/hwmon/hwmon1"

// heatShell is a shell command setting every coretemp sensor of the node
// the job runs on (SLURMD_NODENAME) to the millidegrees in $t.
func heatShell(dir string) string {
	return fmt.Sprintf("for f in %s/machine-$SLURMD_NODENAME/sys/%s/temp*_input; do echo $t > $f; done", dir, coretemp)
}

// fleetNode is one node of the test cluster: a fixture machine (its sysfs
// copied, so its temperatures can be changed) and its agent.
type fleetNode struct {
	name, sys, url string
	socket         string // the agent's --socket, root's alone
	agent          *exec.Cmd
	stderr         *bytes.Buffer
}

// setCPU sets the package and every core of the node's CPU.
func (n *fleetNode) setCPU(t *testing.T, milliC int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(n.sys, coretemp, "temp*_input"))
	if len(files) < 2 {
		t.Fatalf("fixture coretemp sensors: %v", files)
	}
	for _, f := range files {
		if err := os.WriteFile(f, []byte(fmt.Sprintf("%d\n", milliC)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// alerts returns the node agent's firing rules.
func (n *fleetNode) firing(t *testing.T) []string {
	t.Helper()
	resp, err := http.Get(n.url + "/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rules []agent.Rule
	if err := json.NewDecoder(resp.Body).Decode(&rules); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rules {
		for _, a := range r.Alerts {
			if a.Firing {
				out = append(out, r.Name)
			}
		}
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const nodeRules = `
alerts:
  rules:
    - name: cpu_package_hot
      severity: critical
      measurement: hwmon
      field: temp_c
      tags: {class: cpu_package}
      threshold: {op: ">", value: 90, margin: 10}
`

// TestSlurmFleet runs the whole Slurm integration against a real two-node
// cluster (two slurmd on this host, n1 and n2), a real InfluxDB and two
// real node agents reading fixture machines: per-job tagging through the
// Prolog and Epilog, the EpilogSlurmctld summary, a multi-node heatsink run
// and the health check. One cluster serves every subtest.
func TestSlurmFleet(t *testing.T) {
	bin := heatsinkBinary(t)
	db := influxtest.Start(t)
	dir := clusterDir(t, "heatsink-fleet-")
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The scripts of deploy/slurm, their settings pointed at this test's
	// directories: each node's jobs directory is its own, as on separate
	// machines.
	deployScript := func(name string, set map[string]string, export string) string {
		b, err := os.ReadFile(filepath.Join("../../deploy/slurm", name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			if k, _, ok := strings.Cut(l, "="); ok && set[k] != "" {
				lines[i] = k + "=" + set[k]
				delete(set, k)
			}
		}
		if len(set) > 0 {
			t.Fatalf("deploy/slurm/%s has no setting %v", name, set)
		}
		if export != "" {
			lines = append(lines[:1], append([]string{export}, lines[1:]...)...)
		}
		return script(name, strings.Join(lines[1:], "\n"))
	}
	conf := filepath.Join(dir, "summary.yaml")
	os.WriteFile(conf, []byte(fmt.Sprintf("interval: 500ms\nsinks:\n  influx: {url: %s, bucket: %s, spool_dir: %s}\n",
		db.URL(), influxtest.Bucket, filepath.Join(dir, "spool-ctld"))), 0o644)
	jobsDir := dir + "/jobs/$SLURMD_NODENAME"
	cluster := slurmtest.Start(t, slurmtest.Options{
		Nodes:           2,
		Prolog:          deployScript("prolog.sh", map[string]string{"HEATSINK": bin, "JOBS_DIR": jobsDir}, ""),
		Epilog:          deployScript("epilog.sh", map[string]string{"HEATSINK": bin, "JOBS_DIR": jobsDir}, ""),
		EpilogSlurmctld: script("epilog-slurmctld.sh", "exit 0"), // written below, once slurm.conf exists
	})
	// slurmctld gives EpilogSlurmctld no SLURM_CONF; a site's slurm.conf is
	// where scontrol looks by default, this one is not.
	deployScript("epilog-slurmctld.sh", map[string]string{"HEATSINK": bin, "CONFIG": conf, "LOG": dir + "/summary.log"},
		"export SLURM_CONF="+cluster.Conf)
	env := append(os.Environ(), cluster.Client.Env...)

	var nodes []*fleetNode
	for _, name := range cluster.Nodes {
		n := &fleetNode{name: name, sys: filepath.Join(dir, "machine-"+name, "sys"), stderr: &bytes.Buffer{}}
		if out, err := exec.Command("cp", "-a", "../../sensors/testdata/intel-node", filepath.Join(dir, "machine-"+name)).CombinedOutput(); err != nil {
			t.Fatalf("copy fixture: %v %s", err, out)
		}
		n.setCPU(t, 40000)
		addr := freeAddr(t)
		n.url = "http://" + addr
		cfg := filepath.Join(dir, name+".yaml")
		os.WriteFile(cfg, []byte(fmt.Sprintf("host: %s\ninterval: 500ms\nsysfs_root: %s\nprocfs_root: %s\nsources: {nvml: {disabled: true}}\nsinks:\n  influx: {url: %s, bucket: %s, spool_dir: %s}\n%s",
			name, n.sys, filepath.Join(dir, "machine-"+name, "proc"), db.URL(), influxtest.Bucket, filepath.Join(dir, "spool-"+name), nodeRules)), 0o644)
		n.socket = filepath.Join(dir, "run-"+name, "agent.sock")
		n.agent = exec.Command(bin, "collect", "--config", cfg, "--listen", addr, "--socket", n.socket, "--jobs-dir", filepath.Join(dir, "jobs", name))
		n.agent.Stderr = n.stderr
		n.agent.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := n.agent.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			n.agent.Process.Signal(syscall.SIGTERM)
			n.agent.Wait()
			if t.Failed() {
				t.Logf("agent %s:\n%s", n.name, n.stderr.String())
			}
		})
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		eventually(t, 60*time.Second, "agent "+n.name+" healthy", func() bool {
			resp, err := http.Get(n.url + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}

	t.Run("a batch job's points carry its id and it gets a thermal summary", func(t *testing.T) {
		work := filepath.Join(dir, "work")
		os.MkdirAll(work, 0o755)
		time.Sleep(2 * time.Second) // a baseline before the job
		defer func() {
			for _, n := range nodes {
				n.setCPU(t, 40000)
			}
		}()
		sb := exec.Command("sbatch", "--parsable", "--nodes=2", "--chdir="+work, "--wrap",
			fmt.Sprintf("srun --ntasks-per-node=1 sh -c 't=75000; %s; sleep 3; t=40000; %s'", heatShell(dir), heatShell(dir)))
		sb.Env = env
		out, err := sb.CombinedOutput()
		if err != nil {
			t.Fatalf("sbatch: %v %s", err, out)
		}
		job := strings.TrimSpace(string(out))
		summary := filepath.Join(work, slurm.FileName(job))
		eventually(t, 90*time.Second, "the job's summary "+summary, func() bool {
			_, err := os.Stat(summary)
			return err == nil
		})
		var s slurm.Summary
		b, _ := os.ReadFile(summary)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if s.Job != job || strings.Join(s.Nodes, ",") != "n1,n2" || s.RuntimeS < 3 {
			t.Errorf("summary of job %s: job %s nodes %v runtime %v", job, s.Job, s.Nodes, s.RuntimeS)
		}
		peaks := map[string]float64{}
		for _, c := range s.Components {
			if c.Kind == "cpu" && c.PeakC != nil {
				peaks[c.Host] = *c.PeakC
			}
		}
		// The job heated each node's CPU to 75 °C.
		for _, n := range nodes {
			if peaks[n.name] != 75 {
				t.Errorf("%s: CPU peak %v over the job, want the job's 75 °C; summary:\n%s", n.name, peaks[n.name], b)
			}
		}
		// The agents ship from their spools at their own pace: wait until
		// every expected point has arrived (or give up), then check.
		tagged := map[string]int{}
		events := map[string]bool{}
		summaries := 0
		count := func() bool {
			pts, err := db.Points("hwmon", "event", "job_summary")
			if err != nil {
				t.Fatal(err)
			}
			clear(tagged)
			clear(events)
			summaries = 0
			for _, p := range pts {
				switch {
				case p.Measurement == "hwmon" && p.Tag("job") == job:
					tagged[p.Tag("host")]++
				case p.Measurement == "event" && p.Tag("job") == job:
					events[p.Tag("host")+" "+p.Tag("kind")] = true
				case p.Measurement == "job_summary" && p.Tag("job") == job:
					summaries++
				}
			}
			for _, n := range nodes {
				if tagged[n.name] < 4 || !events[n.name+" job_start"] || !events[n.name+" job_end"] {
					return false
				}
			}
			return summaries >= 2
		}
		deadline := time.Now().Add(30 * time.Second)
		for !count() && time.Now().Before(deadline) {
			time.Sleep(500 * time.Millisecond)
		}
		for _, n := range nodes {
			if tagged[n.name] < 4 {
				t.Errorf("%s: %d hwmon points tagged job=%s, want the job's seconds' worth", n.name, tagged[n.name], job)
			}
			if !events[n.name+" job_start"] || !events[n.name+" job_end"] {
				t.Errorf("%s: job events %v", n.name, events)
			}
		}
		if summaries < 2 {
			t.Errorf("%d job_summary points in InfluxDB", summaries)
		}
	})

	t.Run("run --launcher slurm records every node and report covers them", func(t *testing.T) {
		runDir := filepath.Join(dir, "run-multi")
		launcherCfg := filepath.Join(dir, "launcher.yaml")
		os.WriteFile(launcherCfg, []byte(fmt.Sprintf("interval: 500ms\nsinks:\n  influx: {url: %s, bucket: %s, spool_dir: %s}\n",
			db.URL(), influxtest.Bucket, filepath.Join(dir, "spool-launcher"))), 0o644)
		job := fmt.Sprintf("echo $SLURMD_NODENAME $HEATSINK_RUN_ID; t=70000; %s; sleep 3; t=40000; %s", heatShell(dir), heatShell(dir))
		cmd := exec.Command(bin, "run", "--config", launcherCfg, "--launcher", "slurm", "--nodes", "2",
			"--baseline", "3s", "--cooldown", "4s", "--out", runDir, "--", "sh", "-c", job)
		cmd.Env = env
		cmd.Dir = dir // the allocation's working directory
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("heatsink run --launcher slurm: %v\n%s", err, out)
		}
		meta, err := rundir.ReadMeta(runDir)
		if err != nil {
			t.Fatal(err)
		}
		jobID := meta.Labels["slurm_job"]
		if jobID == "" || meta.Labels["slurm_nodes"] != "n1,n2" || meta.Status != "complete" {
			t.Fatalf("run.json labels %v status %s\n%s", meta.Labels, meta.Status, out)
		}
		stdout, _ := os.ReadFile(filepath.Join(runDir, "job.stdout"))
		for _, n := range nodes {
			if !strings.Contains(string(stdout), n.name+" "+meta.ID) {
				t.Errorf("job.stdout %q: the job did not run on %s under run %s", stdout, n.name, meta.ID)
			}
		}
		if _, err := os.Stat(filepath.Join(runDir, slurm.FileName(jobID))); err != nil {
			t.Errorf("no thermal summary beside the job's output: %v", err)
		}
		// EpilogSlurmctld leaves a heatsink run's job to the run.
		eventually(t, 30*time.Second, "EpilogSlurmctld for the run's job", func() bool {
			b, _ := os.ReadFile(filepath.Join(dir, "summary.log"))
			return strings.Contains(string(b), "job "+jobID+" is heatsink run")
		})
		if _, err := os.Stat(filepath.Join(dir, slurm.FileName(jobID))); err == nil {
			t.Error("EpilogSlurmctld wrote a second summary of the run's job in its working directory")
		}
		hosts := map[string]int{}
		err = rundir.ForEachPoint(runDir, func(p *point.Point) error {
			if p.Measurement == "hwmon" {
				hosts[p.Tag("host")]++
				if p.Tag("job") != "" {
					return fmt.Errorf("gathered point keeps its job tag: %v", p)
				}
			}
			return nil
		}, nil)
		if err != nil || hosts["n1"] == 0 || hosts["n2"] == 0 {
			t.Fatalf("hwmon points by host in the run: %v (%v)", hosts, err)
		}

		rep := exec.Command(bin, "report", runDir, "--format", "json", "--hold", "1s", "--window", "2s")
		repOut, err := rep.Output()
		if err != nil {
			t.Fatalf("report: %v", err)
		}
		var report struct {
			Components []struct {
				Host              string   `json:"host"`
				Kind              string   `json:"kind"`
				LoadPeakC         *float64 `json:"load_peak_c"`
				HeatIntervalSPerC *float64 `json:"heat_interval_s_per_c"`
			} `json:"components"`
		}
		if err := json.Unmarshal(repOut, &report); err != nil {
			t.Fatal(err)
		}
		heated := map[string]bool{}
		for _, c := range report.Components {
			if c.Kind == "cpu" && c.LoadPeakC != nil && *c.LoadPeakC > 45 && c.HeatIntervalSPerC != nil {
				heated[c.Host] = true
			}
		}
		if !heated["n1"] || !heated["n2"] {
			t.Errorf("report covers the heated CPUs of %v, want n1 and n2:\n%s", heated, repOut)
		}

		// The agents marked the run on their job events, so the run can
		// also be exported from InfluxDB with every node.
		evs, err := db.Points("event")
		if err != nil {
			t.Fatal(err)
		}
		marked := map[string]bool{}
		for _, p := range evs {
			if p.Tag("run") == meta.ID && p.Tag("kind") == "job_start" {
				marked[p.Tag("host")] = true
			}
		}
		if !marked["n1"] || !marked["n2"] {
			t.Errorf("job_start events with run=%s from %v, want n1 and n2", meta.ID, marked)
		}
	})

	t.Run("healthcheck drains a hot node and resumes it once cooled", func(t *testing.T) {
		n := nodes[0]
		hc := func() string {
			t.Helper()
			// The agent's socket, as deploy/slurm/healthcheck.sh has it;
			// the port stays the way in should the socket go.
			cmd := exec.Command(bin, "healthcheck", "--agent", n.url, "--agent-socket", n.socket, "--node", n.name, "--cool-for", "1s", "--state", filepath.Join(dir, "hc-"+n.name))
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("healthcheck: %v\n%s", err, out)
			}
			return string(out)
		}
		if out := hc(); !strings.Contains(out, ": healthy") {
			t.Fatalf("cool node: %s", out)
		}
		n.setCPU(t, 95000)
		eventually(t, 30*time.Second, "the hot rule to fire on "+n.name, func() bool { return len(n.firing(t)) > 0 })
		if out := hc(); !strings.Contains(out, ": drained") || !strings.Contains(out, "cpu_package_hot") {
			t.Fatalf("hot node: %s", out)
		}
		info, err := cluster.Client.Node(context.Background(), n.name)
		if err != nil || !info.Drained() || !strings.HasPrefix(info.Reason, slurm.ReasonPrefix+" cpu_package_hot") {
			t.Fatalf("node after the drain: %+v %v", info, err)
		}
		// 85 °C is under the threshold but inside the 10 °C margin: still firing.
		n.setCPU(t, 85000)
		time.Sleep(2 * time.Second)
		if out := hc(); !strings.Contains(out, ": still_hot") {
			t.Fatalf("within the margin: %s", out)
		}
		n.setCPU(t, 40000)
		eventually(t, 30*time.Second, "the rule to clear", func() bool { return len(n.firing(t)) == 0 })
		if out := hc(); !strings.Contains(out, ": cooling") {
			t.Fatalf("just cooled: %s", out)
		}
		time.Sleep(1200 * time.Millisecond)
		if out := hc(); !strings.Contains(out, ": resumed") {
			t.Fatalf("cool for a second: %s", out)
		}
		if info, _ := cluster.Client.Node(context.Background(), n.name); info.Drained() {
			t.Fatalf("node still drained: %+v", info)
		}
		// The socket answered, not the port: its mode is root's alone.
		if st, err := os.Stat(n.socket); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("agent socket %s: %v %v, want mode 0600", n.socket, st, err)
		}
	})

	t.Run("a second agent on a taken port fails naming the holder", func(t *testing.T) {
		n := nodes[0]
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(n.url, "http://"))
		cfg := filepath.Join(dir, "second.yaml")
		os.WriteFile(cfg, []byte("host: second\ninterval: 500ms\nsysfs_root: "+n.sys+"\nsources: {nvml: {disabled: true}}\n"), 0o644)
		cmd := exec.Command(bin, "collect", "--config", cfg, "--listen", "127.0.0.1:"+port, "--duration", "5s", "--out", filepath.Join(dir, "second-run"))
		out, err := cmd.CombinedOutput()
		want := fmt.Sprintf("port %s is taken by pid %d (heatsink)", port, n.agent.Process.Pid)
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("second agent on %s: %v\n%s\nwant %q", port, err, out, want)
		}
	})
}
