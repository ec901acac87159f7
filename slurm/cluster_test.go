package slurm_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

// One two-node cluster serves every subtest: starting Slurm takes seconds.
func TestAgainstRealSlurm(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	// The Prolog and Epilog record jobs as the node agents' jobs
	// directories expect them, one directory per node.
	prolog := filepath.Join(dir, "prolog.sh")
	os.WriteFile(prolog, []byte("#!/bin/sh\nmkdir -p "+dir+"/jobs/$SLURMD_NODENAME && env > "+dir+"/jobs/$SLURMD_NODENAME/prolog-env.$SLURM_JOB_ID\n"), 0o755)
	c := slurmtest.Start(t, slurmtest.Options{Nodes: 2, Prolog: prolog})
	ctx := context.Background()

	t.Run("hostnames and node state", func(t *testing.T) {
		got, err := c.Client.Hostnames(ctx, "n[1-2]")
		if err != nil || strings.Join(got, ",") != "n1,n2" {
			t.Fatalf("hostnames %v %v", got, err)
		}
		n, err := c.Client.Node(ctx, "n2")
		if err != nil || n.Name != "n2" || n.State != "IDLE" || n.Drained() {
			t.Fatalf("node %+v %v", n, err)
		}
		if _, err := c.Client.Node(ctx, "n9"); err == nil {
			t.Error("an unknown node was described")
		}
	})

	t.Run("allocation held across srun steps, then released", func(t *testing.T) {
		a, err := c.Client.Allocate(ctx, slurm.AllocOptions{Nodes: 2, Name: slurm.RunPrefix + "run-x"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(a.Job.Nodes, ",") != "n1,n2" || a.Job.State != "RUNNING" || a.Job.Name != "heatsink-run-x" || a.Job.Start.IsZero() || !a.Job.End.IsZero() {
			t.Errorf("allocation %+v", a.Job)
		}
		// The Prolog ran at allocation on both nodes, before any step.
		for _, n := range c.Nodes {
			if _, err := os.Stat(filepath.Join(dir, "jobs", n, "prolog-env."+a.Job.ID)); err != nil {
				t.Errorf("no Prolog on %s at allocation: %v", n, err)
			}
		}
		for i := 0; i < 2; i++ {
			argv := a.Srun([]string{"sh", "-c", "echo $SLURMD_NODENAME $SLURM_JOB_ID"})
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), c.Client.Env...)
			// Only the tasks' stdout is compared: srun writes its own notes
			// ("step creation temporarily disabled, retrying") to stderr.
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v: %s%s", argv, err, out, stderr.String())
			}
			lines := strings.Fields(string(out))
			if len(lines) != 4 || !strings.Contains(string(out), "n1 "+a.Job.ID) || !strings.Contains(string(out), "n2 "+a.Job.ID) {
				t.Errorf("step %d ran as %q, want once on n1 and n2 in job %s", i, out, a.Job.ID)
			}
		}
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitIdle(60 * time.Second); err != nil {
			t.Fatal(err)
		}
		j, err := c.Client.Job(ctx, a.Job.ID)
		if err != nil || j.End.IsZero() || j.End.Before(j.Start) || strings.HasPrefix(j.State, "RUNNING") {
			t.Errorf("released job %+v %v", j, err)
		}
	})

	t.Run("health check drains on a firing rule and resumes after cooling", func(t *testing.T) {
		var mu sync.Mutex
		var firing []agent.Rule
		coll := collectors.New(collectors.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, nil, nil)
		srv := httptest.NewServer(agent.Handler(agent.Options{Collector: coll, Alerts: func() []agent.Rule {
			mu.Lock()
			defer mu.Unlock()
			return firing
		}}))
		defer srv.Close()
		set := func(rules ...agent.Rule) { mu.Lock(); firing = rules; mu.Unlock() }
		v, th := 93.0, 85.0
		hot := agent.Rule{Name: "gpu_core_near_slowdown", Severity: "critical",
			Alerts: []agent.Alert{{Measurement: "gpu", Tags: map[string]string{"gpu": "3", "host": "n1"}, Firing: true, Value: &v, Threshold: &th}}}
		warm := agent.Rule{Name: "gpu_warm", Severity: "warning", Alerts: hot.Alerts}
		now := time.Now()
		hc := &slurm.HealthCheck{Client: c.Client, Node: "n1", Agent: srv.URL, CoolFor: time.Minute,
			StateFile: filepath.Join(dir, "hc-state"), Now: func() time.Time { return now }}
		step := func(want slurm.Action) slurm.Outcome {
			t.Helper()
			out, err := hc.Run(ctx)
			if err != nil || out.Action != want {
				t.Fatalf("check: %s (%v), want %s", out.Action, err, want)
			}
			return out
		}
		set(warm)
		step(slurm.Healthy) // a warning does not drain
		set(hot, warm)
		out := step(slurm.Drained)
		if !strings.HasPrefix(out.Reason, slurm.ReasonPrefix) || !strings.Contains(out.Reason, "gpu_core_near_slowdown") || !strings.Contains(out.Reason, "gpu 3") {
			t.Errorf("reason %q", out.Reason)
		}
		n, _ := c.Client.Node(ctx, "n1")
		if !n.Drained() || n.Reason != out.Reason {
			t.Fatalf("after the drain: %+v, want drained with %q", n, out.Reason)
		}
		step(slurm.StillHot)
		set()
		step(slurm.Cooling) // cool, but not yet for a minute
		now = now.Add(30 * time.Second)
		set(hot) // hot again: the cool time starts over
		step(slurm.StillHot)
		set()
		step(slurm.Cooling)
		now = now.Add(59 * time.Second)
		step(slurm.Cooling)
		now = now.Add(2 * time.Second)
		step(slurm.Resumed)
		if n, _ := c.Client.Node(ctx, "n1"); n.Drained() {
			t.Fatalf("after the resume: %+v", n)
		}

		// A node an administrator drained is never resumed by heatsink,
		// and keeps the administrator's reason.
		if err := c.Client.Drain(ctx, "n2", "bad DIMM, ticket 1234"); err != nil {
			t.Fatal(err)
		}
		hc.Node = "n2"
		step(slurm.NotOurs)
		set(hot)
		step(slurm.NotOurs)
		if n, _ := c.Client.Node(ctx, "n2"); n.Reason != "bad DIMM, ticket 1234" {
			t.Errorf("admin reason replaced: %q", n.Reason)
		}
		c.Client.Resume(ctx, "n2")

		// With the agent gone, nothing is done and the error says so.
		srv.Close()
		if out, err := hc.Run(ctx); err == nil || out.Action != slurm.Unknown {
			t.Errorf("agent down: %s %v", out.Action, err)
		}
	})

	t.Run("job records from the Prolog environment", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(dir, "jobs", "n1", "prolog-env."+firstJob(t, dir)))
		if err != nil {
			t.Fatal(err)
		}
		envs := map[string]string{}
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				envs[k] = v
			}
		}
		j, err := slurm.JobFromEnv(func(k string) string { return envs[k] })
		if err != nil || j.User != "root" || j.Partition != "debug" {
			t.Errorf("job from the real Prolog environment: %+v %v", j, err)
		}
	})
}

var envFile = regexp.MustCompile(`^prolog-env\.([0-9]+)$`)

func firstJob(t *testing.T, dir string) string {
	ents, _ := os.ReadDir(filepath.Join(dir, "jobs", "n1"))
	for _, e := range ents {
		if m := envFile.FindStringSubmatch(e.Name()); m != nil {
			return m[1]
		}
	}
	t.Fatal("no Prolog environment recorded")
	return ""
}
