// Command tuneslurm measures heatsink tune --launcher slurm on a loopback
// Slurm cluster (slurm/slurmtest: one slurmd per node on this host): the
// same tuning run at --parallel 1..nodes, its wall time, the evaluations'
// own time (run.json, start to end on the node), and what each evaluation
// costs beyond its job (srun, heatsink starting on the node, the records).
// It needs root and Debian's Slurm and munge packages, as the tests do.
// Usage: go run ./bench/tuneslurm -heatsink ./heatsink [-nodes 3 -budget 6 -iteration 1s]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

const space = `name: bench
task:
  - {name: n, min: 1, max: 100}
params:
  - {name: a, type: int, min: 1, max: 8}
  - {name: b, type: int, min: 1, max: 8}
`

func main() {
	bin := flag.String("heatsink", "./heatsink", "the heatsink binary")
	nodes := flag.Int("nodes", 3, "nodes of the cluster; --parallel runs 1..nodes")
	budget := flag.Int("budget", 6, "evaluations per tuning run")
	iteration := flag.Duration("iteration", time.Second, "how long the job's every iteration sleeps (each evaluation runs it 3 times)")
	fixture := flag.String("fixture", "sensors/testdata/intel-node", "fixture machine the nodes read (sys and proc)")
	flag.Parse()
	if err := run(*bin, *fixture, *nodes, *budget, *iteration); err != nil {
		log.Fatal(err)
	}
}

func run(bin, fixture string, nodes, budget int, iteration time.Duration) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	fixture, err = filepath.Abs(fixture)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tuneslurm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c, err := slurmtest.Launch(dir, slurmtest.Options{Nodes: nodes})
	if err != nil {
		return fmt.Errorf("start the loopback cluster: %w", err)
	}
	defer c.Stop()
	spacePath := filepath.Join(dir, "space.yaml")
	if err := os.WriteFile(spacePath, []byte(space), 0o644); err != nil {
		return err
	}
	fmt.Printf("heatsink tune --launcher slurm, %d evaluations of a job of 3 x %v (sleep), loopback cluster of %d nodes, %s\n\n",
		budget, iteration, nodes, time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Println("| --parallel | wall s | evaluation s (mean, on the node) | overhead s per evaluation | speed-up |")
	fmt.Println("|---|---|---|---|---|")
	var wall1 float64
	for p := 1; p <= nodes; p++ {
		out := filepath.Join(dir, "p"+strconv.Itoa(p))
		cmd := exec.Command(bin, "tune", "--space", spacePath, "--task", "n=1", "--out", out, "--method", "random",
			"--budget", strconv.Itoa(budget), "--baseline", "0", "--objective", "min:re:score: ([0-9]+)",
			"--sysfs-root", filepath.Join(fixture, "sys"), "--proc-root", filepath.Join(fixture, "proc"),
			"--launcher", "slurm", "--parallel", strconv.Itoa(p),
			"--", "sh", "-c", fmt.Sprintf("sleep %g; echo score: $(( {a} * {b} ))", iteration.Seconds()))
		cmd.Env = append(os.Environ(), c.Client.Env...)
		start := time.Now()
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("--parallel %d: %w\n%s", p, err, b)
		}
		wall := time.Since(start).Seconds()
		if p == 1 {
			wall1 = wall
		}
		var evalS float64
		for n := 1; n <= budget; n++ {
			m, err := rundir.ReadMeta(filepath.Join(out, fmt.Sprintf("eval-%03d", n)))
			if err != nil || m.End == nil {
				return fmt.Errorf("--parallel %d: eval-%03d: %v", p, n, err)
			}
			evalS += m.End.Sub(m.Start).Seconds()
		}
		evalS /= float64(budget)
		// Wall time spent per evaluation slot beyond the evaluations themselves.
		overhead := wall*float64(p)/float64(budget) - evalS
		fmt.Printf("| %d | %.1f | %.2f | %.2f | %.2f |\n", p, wall, evalS, overhead, wall1/wall)
	}
	return nil
}
