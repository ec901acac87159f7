package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

// Three node agents (`heatsink collect`, built with the simulated GPUs),
// one per node of the loopback cluster, each with sinks.slurm_headroom on
// and two GPUs idling at 80, 65 and 50 °C (n1, n2, n3): the agents set
// their own nodes' weights through scontrol, and three single-node jobs,
// each submitted once the one before runs, land coolest first.
func TestHeadroomAgentsOnRealSlurm(t *testing.T) {
	began := time.Now()
	bin := gpusimBinary(t)
	built := time.Now()
	dir := clusterDir(t, "heatsink-headroom-")
	cluster := slurmtest.Start(t, slurmtest.Options{Nodes: 3})
	t.Logf("heatsink built in %.1f s, cluster up in %.1f s", built.Sub(began).Seconds(), time.Since(built).Seconds())
	agents := time.Now()
	empty := filepath.Join(dir, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, node := range cluster.Nodes {
		idle := []int{80, 65, 50}[i]
		loads := filepath.Join(dir, "load-"+node)
		if err := os.MkdirAll(loads, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "host: %s\ninterval: 200ms\nsysfs_root: %s\nprocfs_root: %s\nsources:\n  nvml: {disabled: true}\n", node, empty, empty)
		fmt.Fprintf(&b, "  gpusim:\n    load_dir: %s\n    noise_c: 0.3\n    seed: %d\n    gpus:\n", loads, i+1)
		for g := range 2 {
			fmt.Fprintf(&b, "      - {uuid: GPU-%s-%d, model: SIM-H100, idle_w: 70, load_w: 700, idle_c: %d, mem_idle_c: 38, core_c_per_w: 0.04, mem_c_per_w: 0.03, tau_s: 1}\n",
				node, g, idle-5*g)
		}
		// The simulated GPUs report no slowdown limit: an H100's.
		fmt.Fprintf(&b, "sinks:\n  slurm_headroom: {enabled: true, node: %s, slowdown_c: 92, hold: 2s, every: 250ms}\n", node)
		cfg := writeFile(t, dir, node+".yaml", b.String())
		cmd := exec.Command(bin, "collect", "--config", cfg)
		cmd.Env = append(os.Environ(), cluster.Client.Env...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
			if t.Failed() {
				t.Logf("agent %s:\n%s", node, out.String())
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	want := map[string]string{"n1": "3", "n2": "2", "n3": "1"}
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := map[string]string{}
		for _, n := range cluster.Nodes {
			info, err := cluster.Client.Node(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			got[n] = info.Weight
		}
		if fmt.Sprint(got) == fmt.Sprint(want) {
			t.Logf("weights %v set %.1f s after the agents started", got, time.Since(agents).Seconds())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("weights %v after 60 s, want %v", got, want)
		}
		time.Sleep(250 * time.Millisecond)
	}
	var landed []string
	for range 3 {
		out, err := cluster.Client.Run(ctx, "sbatch", "--parsable", "--nodes=1", "--ntasks=1", "--output=/dev/null", "--wrap=sleep 600")
		if err != nil {
			t.Fatal(err)
		}
		id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
		for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
			out, err := cluster.Client.Run(ctx, "squeue", "--noheader", "--jobs="+id, "--format=%T %N")
			if f := strings.Fields(string(out)); err == nil && len(f) == 2 && f[0] == "RUNNING" {
				landed = append(landed, f[1])
				break
			}
			if time.Since(start) > 30*time.Second {
				t.Fatalf("job %s not running after 30 s: %q %v", id, out, err)
			}
		}
	}
	if got := strings.Join(landed, ","); got != "n3,n2,n1" {
		t.Errorf("jobs landed on %s, want coolest first n3,n2,n1", got)
	}
}
