package main

import (
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
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/agent/agenttest"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

// A copy of this program started by agenttest.StartImpostor is the
// impostor, not the bench.
func init() { agenttest.RunImpostorIfAsked() }

// healthRule drains a node whose CPU package passes 90 °C.
const healthRule = `alerts:
  rules:
    - {name: cpu_package_hot, severity: critical, measurement: hwmon, field: temp_c, tags: {class: cpu_package}, threshold: {op: ">", value: 90, margin: 10}}
`

// healthImpostor: heatsink healthcheck drains a one-node Slurm cluster for a
// hot CPU; the agent stops (a restart) and a process of user nobody takes
// its port, answering "all cool" to every check. The node must stay drained
// for every check; the agent restarted meanwhile must fail naming the
// port's holder; once the impostor is gone and the agent back, cool, the
// node is resumed. Seconds are measured from the agent's return.
func (b *bench) healthImpostor() []row {
	const checks = 5
	r := row{fault: "impostor on the agent's port, " + fmt.Sprint(checks) + " checks", expected: -1, local: -1, delivered: -1,
		lostLocalS: -1, lostDeliveredS: -1, recoverLocalS: -1, recoverInfluxS: -1, orphans: -1}
	sdir, err := os.MkdirTemp("", "heatsink-faults-slurm-") // munged must reach it
	check(err)
	defer os.RemoveAll(sdir)
	cl, err := slurmtest.Launch(sdir, slurmtest.Options{Nodes: 1})
	check(err)
	defer cl.Stop()
	ctx, nodeName := context.Background(), cl.Nodes[0]
	host := "fault-health"
	sys := b.sysCopy(host)
	setCPU(sys, 95000)
	cfg := b.config(host, sys, healthRule)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	addr := l.Addr().String()
	l.Close()
	startAgent := func(n int, more ...string) (*exec.Cmd, func() string) {
		cmd, log := b.start(host, append([]string{"collect", "--config", cfg, "--listen", addr, "--out", filepath.Join(b.work, fmt.Sprintf("%s-run%d", host, n))}, more...)...)
		return cmd, log.String
	}
	state := filepath.Join(b.work, host+".state")
	healthcheck := func() string {
		cmd := exec.Command(b.bin, "healthcheck", "--agent", "http://"+addr, "--agent-socket", "", "--node", nodeName,
			"--cool-for", "1s", "--untrusted-checks", "2", "--state", state)
		cmd.Env = append(os.Environ(), cl.Client.Env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Sprintf("healthcheck: %v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	drained := func() bool {
		n, err := cl.Client.Node(ctx, nodeName)
		return err == nil && n.Drained()
	}

	ag, _ := startAgent(1)
	if !waitFiring(addr, 60*time.Second) {
		r.note = "the agent's rule never fired"
		return []row{r}
	}
	if out := healthcheck(); !drained() {
		r.note = "the hot node was not drained: " + out
		return []row{r}
	}
	ag.Process.Signal(syscall.SIGTERM)
	ag.Wait()
	im, err := agenttest.StartImpostor("tcp", addr, 65534, 65534)
	check(err)
	kept, last := 0, ""
	for range checks {
		time.Sleep(1500 * time.Millisecond)
		last = healthcheck()
		if drained() {
			kept++
		}
	}
	second, log := startAgent(2, "--duration", "10s")
	second.Wait()
	refused := "the restarted agent did not name the port's holder"
	for _, ln := range strings.Split(log(), "\n") {
		if strings.Contains(ln, "is taken by") {
			refused = strings.TrimSpace(ln)
		}
	}
	im.Stop()
	setCPU(sys, 40000)
	back := time.Now()
	ag, _ = startAgent(3)
	defer func() { ag.Process.Signal(syscall.SIGTERM); ag.Wait() }()
	for deadline := back.Add(90 * time.Second); time.Now().Before(deadline) && drained(); time.Sleep(time.Second) {
		healthcheck()
	}
	if !drained() {
		r.recoverLocalS = time.Since(back).Seconds()
	}
	r.note = fmt.Sprintf("node kept drained by %d of %d checks against the impostor (last: %s); agent restarted meanwhile: %s; resumed %.0f s after the agent came back, cool (--cool-for 1s)",
		kept, checks, last, refused, r.recoverLocalS)
	return []row{r}
}

// setCPU sets every coretemp sensor of a sysfs copy to milliC.
func setCPU(sys string, milliC int) {
	files, _ := filepath.Glob(filepath.Join(sys, "devices/platform/coretemp.0/hwmon/hwmon1/temp*_input"))
	for _, f := range files {
		check(os.WriteFile(f, []byte(fmt.Sprintf("%d\n", milliC)), 0o644))
	}
}

// waitFiring polls the agent's /alerts until a rule fires.
func waitFiring(addr string, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/alerts")
		if err != nil {
			continue
		}
		var rules []agent.Rule
		json.NewDecoder(resp.Body).Decode(&rules)
		resp.Body.Close()
		for _, ru := range rules {
			for _, a := range ru.Alerts {
				if a.Firing {
					return true
				}
			}
		}
	}
	return false
}
