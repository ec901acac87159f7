package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
	"github.com/heatsink-hpc/heatsink/tune"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// tuneSpace is a small space for a shell command whose score is a*b+n.
const tuneSpace = `name: score
task:
  - {name: n, min: 1, max: 100}
params:
  - {name: a, type: int, min: 1, max: 5, default: 3}
  - {name: b, type: ordinal, values: [1, 2, 4, 8], default: 4}
`

// scoreCommand prints the score and takes long enough (0.4 s an iteration)
// for evaluations on different nodes to be seen overlapping.
var scoreCommand = []string{"sh", "-c", `echo "score: $(( {a} * {b} + {n} ))"; sleep 0.4`}

// TestTuneOnSlurm runs heatsink tune --launcher slurm --parallel 3 against
// a real three-node cluster (three slurmd on this host), each node reading
// its own fixture machine at its own temperature: every evaluation must run
// as a step of the tuning job on one node, be judged by that node's
// sensors (its first evaluation records the node's baseline, the later ones
// wait for it), be recorded with the node, and reach the tuner's report.
func TestTuneOnSlurm(t *testing.T) {
	bin := heatsinkBinary(t)
	dir := clusterDir(t, "heatsink-tune-slurm-")
	cluster := slurmtest.Start(t, slurmtest.Options{Nodes: 3})
	tempC := map[string]float64{}
	for i, name := range cluster.Nodes {
		machine := filepath.Join(dir, "machine-"+name)
		if out, err := exec.Command("cp", "-a", "../../sensors/testdata/intel-node", machine).CombinedOutput(); err != nil {
			t.Fatalf("copy fixture: %v %s", err, out)
		}
		tempC[name] = float64(50 + 15*i) // above the fixture's other sensors (nvme, up to 42 °C)
		(&fleetNode{sys: filepath.Join(machine, "sys")}).setCPU(t, int(tempC[name]*1000))
		os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(fmt.Sprintf("host: %s\ninterval: 200ms\nsysfs_root: %s\nprocfs_root: %s\nsources: {nvml: {disabled: true}}\n",
			name, filepath.Join(machine, "sys"), filepath.Join(machine, "proc"))), 0o644)
	}
	space := filepath.Join(dir, "space.yaml")
	os.WriteFile(space, []byte(tuneSpace), 0o644)
	out := filepath.Join(dir, "tuning")
	const budget = 7
	cmd := exec.Command(bin, append([]string{"tune", "--space", space, "--task", "n=10", "--out", out, "--method", "random",
		"--budget", strconv.Itoa(budget), "--objective", "min:re:score: ([0-9]+)", "--baseline", "1s",
		"--launcher", "slurm", "--parallel", "3", "--node-config", filepath.Join(dir, "{node}.yaml"), "--"}, scoreCommand...)...)
	cmd.Env = append(os.Environ(), cluster.Client.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("heatsink tune: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "recommended: heatsink run") || !strings.Contains(stderr.String(), fmt.Sprintf("random   %d/%d", budget, budget)) {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}

	var rep tune.Report
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Curves) != 1 {
		t.Fatalf("report.json: %v %s", err, b)
	}
	seen := map[string]string{} // evaluation -> the node the report says
	for _, ev := range rep.Curves[0].Evaluations {
		seen[filepath.Base(ev.Run)] = ev.Node
	}
	if md, _ := os.ReadFile(filepath.Join(out, "report.md")); !strings.Contains(string(md), "| violation | node |") {
		t.Errorf("report.md has no node column:\n%s", md)
	}
	jobs := map[string]bool{}
	perNode := map[string][]string{}
	var loads [][2]time.Time
	for n := 1; n <= budget; n++ {
		name := fmt.Sprintf("eval-%03d", n)
		reported, ok := seen[name]
		if !ok {
			t.Errorf("the tuner's report has no %s (it has %v)", name, seen)
		}
		var rec tune.Record
		b, err := os.ReadFile(filepath.Join(out, name, tune.RecordFile))
		if err != nil || json.Unmarshal(b, &rec) != nil {
			t.Fatalf("%s: %v %s", name, err, b)
		}
		if reported != rec.Node {
			t.Errorf("%s: the report says node %q, tune.json %q", name, reported, rec.Node)
		}
		job, step, _ := strings.Cut(rec.Job, ".")
		jobs[job] = true
		if step == "" || jobs[rec.Job] {
			t.Errorf("%s: slurm job %q, want a step of its own", name, rec.Job)
		}
		jobs[rec.Job] = true
		want, _ := strconv.Atoi(rec.Values["a"])
		bv, _ := strconv.Atoi(rec.Values["b"])
		want = want*bv + 10
		if rec.Objective == nil || *rec.Objective != float64(want) || rec.Violation != "" {
			t.Errorf("%s: objective %v (%s) for %v, want %d", name, rec.Objective, rec.Violation, rec.Values, want)
		}
		// The node's own sensors judged it: its fixture's temperature.
		if got, ok := tempC[rec.Node]; !ok || rec.Metrics["peak_temp_c"] != got {
			t.Errorf("%s: node %q, peak %v °C; want one of %v at its own temperature", name, rec.Node, rec.Metrics["peak_temp_c"], tempC)
		}
		meta, err := rundir.ReadMeta(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if meta.Host != rec.Node {
			t.Errorf("%s: run.json host %q, tune.json node %q", name, meta.Host, rec.Node)
		}
		_, baselined := meta.PhaseNamed(workloads.PhaseBaseline)
		_, waited := meta.PhaseNamed(workloads.PhaseWaitNominal)
		if first := len(perNode[rec.Node]) == 0; baselined != first || waited == first {
			t.Errorf("%s on %s (earlier there: %v): baseline phase %v, wait phase %v; a node's first evaluation measures its baseline, later ones wait for it",
				name, rec.Node, perNode[rec.Node], baselined, waited)
		}
		perNode[rec.Node] = append(perNode[rec.Node], name)
		if load, ok := meta.PhaseNamed(workloads.PhaseLoad); ok && load.End != nil && n <= 3 {
			loads = append(loads, [2]time.Time{load.Start, *load.End})
		}
	}
	if len(jobs) != budget+1 {
		t.Errorf("slurm jobs and steps %v: want %d steps of one job", jobs, budget)
	}
	if len(perNode) != 3 {
		t.Errorf("evaluations per node %v: want all 3 nodes used", perNode)
	}
	// The first three ran at once, one on each node.
	if len(loads) != 3 {
		t.Fatalf("load phases of the first 3 evaluations: %v", loads)
	}
	latestStart, earliestEnd := loads[0][0], loads[0][1]
	for _, l := range loads[1:] {
		if l[0].After(latestStart) {
			latestStart = l[0]
		}
		if l[1].Before(earliestEnd) {
			earliestEnd = l[1]
		}
	}
	if !latestStart.Before(earliestEnd) {
		t.Errorf("the first 3 evaluations' loads %v never overlapped: they did not run at once", loads)
	}
	t.Run("interrupted", func(t *testing.T) { tuneInterrupted(t, bin, cluster, dir, space) })
}

// tuneInterrupted stops a tuning run on Slurm with SIGINT while its
// evaluations run: the steps' heatsinks stop their jobs and record them,
// the report is written, and the allocation is given back.
func tuneInterrupted(t *testing.T, bin string, cluster *slurmtest.Cluster, dir, space string) {
	out := filepath.Join(dir, "interrupted")
	cmd := exec.Command(bin, "tune", "--space", space, "--task", "n=10", "--out", out, "--method", "random", "--budget", "6",
		"--objective", "min:re:score: ([0-9]+)", "--baseline", "0", "--launcher", "slurm", "--parallel", "2",
		"--node-config", filepath.Join(dir, "{node}.yaml"), "--", "sh", "-c", "sleep 60; echo score: 1")
	cmd.Env = append(os.Environ(), cluster.Client.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	running := func(n int) bool {
		b, _ := os.ReadFile(filepath.Join(out, fmt.Sprintf("eval-%03d", n), tune.SrunLogFile))
		return strings.Contains(string(b), "phase=load")
	}
	eventually(t, time.Minute, "both evaluations' loads to start", func() bool { return running(1) && running(2) })
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("an interrupted tuning run exited 0:\n%s", stderr.String())
		}
	case <-time.After(45 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("heatsink tune still running 45 s after SIGINT:\n%s", stderr.String())
	}
	stopped := time.Since(start)
	for n := 1; n <= 2; n++ {
		meta, err := rundir.ReadMeta(filepath.Join(out, fmt.Sprintf("eval-%03d", n)))
		if err != nil {
			t.Fatal(err)
		}
		if meta.Status != string(workloads.StatusInterrupted) {
			t.Errorf("eval-%03d: status %q, want %s (stopped %v after SIGINT)", n, meta.Status, workloads.StatusInterrupted, stopped)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "eval-003")); err == nil {
		t.Error("an evaluation started after the interrupt")
	}
	if _, err := os.Stat(filepath.Join(out, "report.json")); err != nil {
		t.Errorf("no report of the interrupted run: %v", err)
	}
	eventually(t, 30*time.Second, "the allocation to be released", func() bool {
		b, err := cluster.Client.Run(context.Background(), "squeue", "--noheader")
		return err == nil && len(bytes.TrimSpace(b)) == 0
	})
}
