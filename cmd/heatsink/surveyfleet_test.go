package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

var (
	gpusimOnce sync.Once
	gpusimPath string
	gpusimErr  error
)

// gpusimBinary is heatsink built with -tags heatsink_gpusim: with the
// simulated GPUs of internal/gpusim, for surveys on machines without any.
func gpusimBinary(t *testing.T) string {
	t.Helper()
	gpusimOnce.Do(func() {
		dir, err := os.MkdirTemp("", "heatsink-gpusim-bin")
		if err != nil {
			gpusimErr = err
			return
		}
		os.Chmod(dir, 0o755) // the cluster's jobs run it
		gpusimPath = filepath.Join(dir, "heatsink-gpusim")
		if out, err := exec.Command("go", "build", "-tags", "heatsink_gpusim", "-o", gpusimPath, ".").CombinedOutput(); err != nil {
			gpusimErr = &buildError{err, string(out)}
		}
	})
	if gpusimErr != nil {
		t.Fatal(gpusimErr)
	}
	return gpusimPath
}

// simGPU is one planted GPU: core and memory °C/W, τ.
type simGPU struct{ core, mem, tau float64 }

// fleetMachine writes a node's configuration: its simulated GPUs (UUIDs
// GPU-<node>-<i>, 70 W idle, 700 W loaded, ±0.3 °C and ±5 W of noise,
// whole degrees) with coupling[s][n], and an empty sysfs and procfs so
// that nothing else is read. No GPUs: a machine with nothing to survey.
func fleetMachine(t *testing.T, dir, node string, gpus []simGPU, coupling string) {
	t.Helper()
	empty := filepath.Join(dir, "empty")
	loads := filepath.Join(dir, "load-"+node)
	for _, d := range []string{empty, loads} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "host: %s\ninterval: 100ms\nsysfs_root: %s\nprocfs_root: %s\nsources:\n  nvml: {disabled: true}\n", node, empty, empty)
	if len(gpus) > 0 {
		fmt.Fprintf(&b, "  gpusim:\n    load_dir: %s\n    noise_c: 0.3\n    power_noise_w: 5\n    seed: %d\n    coupling: %s\n    gpus:\n", loads, int(node[len(node)-1]), coupling)
		for i, g := range gpus {
			fmt.Fprintf(&b, "      - {uuid: GPU-%s-%d, model: SIM-H100, idle_w: 70, load_w: 700, idle_c: %d, mem_idle_c: 38, core_c_per_w: %g, mem_c_per_w: %g, tau_s: %g}\n",
				node, i, 33+i, g.core, g.mem, g.tau)
		}
	}
	writeFile(t, dir, node+".yaml", b.String())
}

// fleetFlags names each flag by scope, kind, host and component, sorted.
func fleetFlags(f analysis.FleetSurvey) []string {
	var out []string
	for _, fl := range f.Flags {
		k := fmt.Sprintf("%s %s %s/%s", fl.Scope, fl.Kind, fl.Host, fl.Component)
		if fl.Neighbour != "" {
			k += "→" + fl.Neighbour
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestSurveyFleetOnRealSlurm surveys every node of an allocation of the
// loopback Slurm cluster at once: four slurmd, each node a machine of two
// simulated GPUs whose plants differ. n1's GPU 1 is 37 % worse cooled than
// every other GPU (9.5 °C at its power), n2's GPU 0 heats its GPU 1 by
// 0.025 °C/W (15.8 °C), n3 is healthy the first time and its GPU 0 lost
// 15 % of its cooling by the second (3.8 °C: under the peer rule's 20 %,
// over the drift rule's 10 %), n4 has no GPU. Each is found with its
// reason and nothing else is flagged: the fleet's peer rule over all six
// GPUs, the node's neighbour rule, drift by UUID against the first fleet.
// The loads are a command that marks its GPU loaded while it runs; the
// plants' τ of 1-1.2 s make loads of 6 s and returns of 8 s what 40 s and
// more are on real GPUs, and the survey's analysis scales its episode rule
// to them.
func TestSurveyFleetOnRealSlurm(t *testing.T) {
	bin := gpusimBinary(t)
	dir := clusterDir(t, "heatsink-survey-fleet-")
	cluster := slurmtest.Start(t, slurmtest.Options{Nodes: 4})
	healthy := []simGPU{{0.040, 0.030, 1.0}, {0.039, 0.030, 1.2}}
	fleetMachine(t, dir, "n1", []simGPU{{0.041, 0.030, 1.0}, {0.055, 0.030, 1.1}}, "[]")
	fleetMachine(t, dir, "n2", []simGPU{{0.040, 0.031, 1.0}, {0.040, 0.029, 1.2}}, "[[0, 0.025], [0, 0]]")
	fleetMachine(t, dir, "n3", healthy, "[]")
	fleetMachine(t, dir, "n4", nil, "[]")
	load := fmt.Sprintf(`m=%s/load-$SLURMD_NODENAME/gpu$CUDA_VISIBLE_DEVICES; trap 'rm -f $m; exit 0' TERM; touch $m; while :; do sleep 1; done`, dir)
	survey := func(nodes int, out string, extra ...string) (analysis.FleetSurvey, string, int) {
		t.Helper()
		args := append([]string{"survey", "--launcher", "slurm", "--nodes", fmt.Sprint(nodes), "--out", filepath.Join(dir, out),
			"--config", filepath.Join(dir, "{node}.yaml"), "--baseline", "6s", "--load", "6s", "--min-return", "8s", "--max-cooldown", "12s", "--hold", "2s"}, extra...)
		cmd := exec.Command(bin, append(args, "--", "sh", "-c", load)...)
		cmd.Env = append(os.Environ(), cluster.Client.Env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var f analysis.FleetSurvey
		b, err := os.ReadFile(filepath.Join(dir, out, analysis.SurveyFile))
		if err != nil || json.Unmarshal(b, &f) != nil {
			t.Fatalf("no fleet survey.json (%v); exit %d\n%s\n%s", err, code, stdout.String(), stderr.String())
		}
		t.Logf("%s (exit %d):\n%s", out, code, stdout.String())
		return f, stdout.String(), code
	}

	first, table, code := survey(3, "first")
	want := []string{"fleet peers n1/gpu_core:1", "node neighbour n2/gpu_core:0→1"}
	if got := fleetFlags(first); !slices.Equal(got, want) || code != 1 || first.Status != "flagged" {
		t.Errorf("first fleet: exit %d, status %s, flags %q, want exit 1 and %q", code, first.Status, got, want)
	}
	var hosts []string
	for _, n := range first.Nodes {
		hosts = append(hosts, n.Host+":"+n.Status)
		if _, err := os.Stat(filepath.Join(dir, "first", n.Dir, "run.json")); err != nil {
			t.Errorf("node %s: its survey is no run directory: %v", n.Host, err)
		}
	}
	if !slices.Equal(hosts, []string{"n1:clean", "n2:flagged", "n3:clean"}) {
		t.Errorf("nodes %q, want n1 clean, n2 flagged (its neighbour heating), n3 clean", hosts)
	}
	if len(first.GPUs) != 6 {
		t.Fatalf("%d GPUs in the fleet, want 6", len(first.GPUs))
	}
	top := first.GPUs[0]
	if top.Host != "n1" || top.Index != "1" || top.UUID != "GPU-n1-1" || top.FleetRank == nil || *top.FleetRank != 1 ||
		top.FleetRobustZ == nil || *top.FleetRobustZ < 3.5 || len(top.NodeVerdicts) == 0 {
		t.Errorf("first in the fleet's ranking: %s/%s %s rank %v z %v, %d node verdicts; want n1's GPU 1 with z ≥ 3.5", top.Host, top.Index, top.UUID, top.FleetRank, top.FleetRobustZ, len(top.NodeVerdicts))
	}
	for i, g := range first.GPUs {
		if g.FleetRank == nil || *g.FleetRank != i+1 || g.AloneCore == nil || g.UUID != "GPU-"+g.Host+"-"+g.Index {
			t.Errorf("GPU %s/%s (%s): rank %v at place %d, alone core %v", g.Host, g.Index, g.UUID, g.FleetRank, i+1, g.AloneCore != nil)
		}
	}
	if !strings.Contains(table, "GPU-n1-1") || !strings.Contains(table, "peers(fleet)") {
		t.Errorf("the table ranks no n1 GPU 1 with its flag:\n%s", table)
	}
	for _, n := range first.Nodes {
		if n.Host == "n2" {
			reportReadsTheSurvey(t, bin, filepath.Join(dir, "first", n.Dir))
		}
	}
	// The fleet's directory holds no run of its own: report says where they are.
	if out, err := exec.Command(bin, "report", filepath.Join(dir, "first")).CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "is a fleet survey, not a run directory") || !strings.Contains(string(out), filepath.Join(dir, "first", "nodes", "*")) {
		t.Errorf("report on the fleet's directory: %v\n%s", err, out)
	}

	// Later n3's GPU 0 has lost cooling, and n4 (no GPU) is in the allocation.
	fleetMachine(t, dir, "n3", []simGPU{{0.046, 0.030, 1.0}, healthy[1]}, "[]")
	later, table, code := survey(4, "later", "--against", filepath.Join(dir, "first"))
	want = []string{"fleet drift n3/gpu_core:0", "fleet peers n1/gpu_core:1", "node neighbour n2/gpu_core:0→1"}
	if got := fleetFlags(later); !slices.Equal(got, want) || code != 2 || later.Status != "incomplete" {
		t.Errorf("later fleet: exit %d, status %s, flags %q, want exit 2 (n4 failed) and %q", code, later.Status, got, want)
	}
	for _, fl := range later.Flags {
		if fl.Kind == "drift" && (!strings.Contains(fl.Reason, "GPU-n3-0") || fl.Reference > 0.0415 || fl.Value < 0.044) {
			t.Errorf("drift: %s", fl.Reason)
		}
	}
	failed := slices.IndexFunc(later.Nodes, func(n analysis.FleetNode) bool { return n.Status == "failed" })
	if failed < 0 || later.Nodes[failed].Host != "n4" || !strings.Contains(later.Nodes[failed].Error, "no GPU reported a temperature") ||
		!strings.Contains(table, "node n4 failed") {
		t.Errorf("n4 (no GPU) not named as failed with its reason: %+v\n%s", later.Nodes, table)
	}
	if later.Against != first.RunID || len(later.GPUs) != 6 {
		t.Errorf("against %q (want %q), %d GPUs", later.Against, first.RunID, len(later.GPUs))
	}
}

// A fleet survey refuses what it cannot do before it allocates a node.
func TestSurveyFleetRefusesBeforeAllocating(t *testing.T) {
	tmp := t.TempDir()
	done := filepath.Join(tmp, "done")
	writeFile(t, tmp, "x", "")
	os.MkdirAll(done, 0o755)
	writeFile(t, done, analysis.SurveyFile, "{}")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"survey", "--out", filepath.Join(tmp, "a"), "--nodes", "2"}, "--nodes and --partition survey the nodes of an allocation: give --launcher slurm"},
		{[]string{"survey", "--out", filepath.Join(tmp, "b"), "--partition", "gpu"}, "give --launcher slurm"},
		{[]string{"survey", "--out", filepath.Join(tmp, "c"), "--launcher", "pbs"}, `--launcher "pbs": want local or slurm`},
		{[]string{"survey", "--launcher", "slurm"}, "--out DIR is required"},
		{[]string{"survey", "--launcher", "slurm", "--out", done}, "is not empty and holds no run (survey.json found)"},
		{[]string{"survey", "--launcher", "slurm", "--out", filepath.Join(tmp, "d"), "--nodes", "0", "--workload", "cpu-stream"}, "--nodes 0: at least 1"},
		{[]string{"survey", "--launcher", "slurm", "--out", filepath.Join(tmp, "e"), "--workload", "nosuch"}, "nosuch"},
		{[]string{"survey", "--launcher", "slurm", "--out", filepath.Join(tmp, "f"), "--against", filepath.Join(tmp, "x")}, "--against: open " + filepath.Join(tmp, "x", "survey.json")},
	} {
		code, out := exitCode(t, c.args...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("heatsink %v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, out)
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 2 {
		t.Errorf("refused surveys left %d entries in %s, want only the fixtures", len(ents), tmp)
	}
}

// reportReadsTheSurvey checks heatsink report on a node's survey: it
// leads with the survey's verdict and judges on the survey's time scale
// (with the default rule the plants' 6 s loads are no episodes at all);
// copied without its survey.json, the survey is judged afresh alike.
func reportReadsTheSurvey(t *testing.T, bin, node string) {
	t.Helper()
	saved, err := analysis.ReadSurvey(node)
	if err != nil {
		t.Fatal(err)
	}
	bare := t.TempDir()
	for _, name := range []string{"run.json", "points.lp"} {
		b, err := os.ReadFile(filepath.Join(node, name))
		if err == nil {
			err = os.WriteFile(filepath.Join(bare, name), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{node, bare} {
		out, err := exec.Command(bin, "report", d, "--format", "json").Output()
		var rep analysis.Report
		if err != nil || json.Unmarshal(out, &rep) != nil {
			t.Fatalf("report %s: %v", d, err)
		}
		if rep.Survey == nil || rep.Survey.Status != saved.Status || len(rep.Survey.Flags) != len(saved.Flags) || len(rep.Verdicts) != len(saved.Verdicts) {
			t.Fatalf("report %s: survey %+v, %d verdicts; survey.json: %s, %d flags, %d verdicts", d, rep.Survey, len(rep.Verdicts), saved.Status, len(saved.Flags), len(saved.Verdicts))
		}
		for i, v := range saved.Verdicts {
			if r := rep.Verdicts[i]; r.Component != v.Component || r.Metric != v.Metric || r.Value != v.Value {
				t.Errorf("report %s: verdict %s %s = %v, survey.json %v", d, r.Component, r.Metric, r.Value, v.Value)
			}
		}
		text, err := exec.Command(bin, "report", d).Output()
		flat := strings.Join(strings.Fields(string(text)), " ") // undo the wrapping at 100 columns
		if err != nil || !strings.Contains(flat, "Survey of 2 GPUs: flagged: "+saved.Flags[0].Reason) {
			t.Errorf("report %s does not lead with the survey's flag %q: %v\n%.600s", d, saved.Flags[0].Reason, err, text)
		}
	}
	// An analysis option given is the user's: no survey scale.
	out, err := exec.Command(bin, "report", bare, "--format", "json", "--tolerance", "1").Output()
	if err != nil || strings.Contains(string(out), "judged on the survey's time scale") {
		t.Errorf("--tolerance given: the survey's scale still applied (%v)", err)
	}
}
