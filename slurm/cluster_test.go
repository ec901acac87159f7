package slurm_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/agent/agenttest"
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
	// EpilogSlurmctld records the environment slurmctld gives it.
	ctldEpilog := filepath.Join(dir, "epilog-slurmctld.sh")
	os.WriteFile(ctldEpilog, []byte("#!/bin/sh\nenv > "+dir+"/ctld-env.$SLURM_JOB_ID.tmp && mv "+dir+"/ctld-env.$SLURM_JOB_ID.tmp "+dir+"/ctld-env.$SLURM_JOB_ID\n"), 0o755)
	c := slurmtest.Start(t, slurmtest.Options{Nodes: 2, Prolog: prolog, EpilogSlurmctld: ctldEpilog})
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
		j, err := jobDone(ctx, c.Client, a.Job.ID)
		if err != nil || j.End.IsZero() || j.End.Before(j.Start) || strings.HasPrefix(j.State, "RUNNING") {
			t.Errorf("released job %+v %v", j, err)
		}
	})

	t.Run("health check drains on a firing rule and resumes after cooling", func(t *testing.T) {
		var mu sync.Mutex
		var firing []agent.Rule
		// The agent serves the docs' recommended web config: TLS and basic auth.
		webConfig, authFile, err := agenttest.WebConfig(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		coll := collectors.New(collectors.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, nil, nil)
		srv := &http.Server{Handler: agent.Handler(agent.Options{Collector: coll, Alerts: func() []agent.Rule {
			mu.Lock()
			defer mu.Unlock()
			return firing
		}})}
		go agent.Serve(l, srv, webConfig, slog.New(slog.NewTextHandler(io.Discard, nil)))
		defer srv.Close()
		client, err := agent.NewClient(agent.ClientOptions{URL: "https://" + l.Addr().String(), WebConfig: webConfig, AuthFile: authFile})
		if err != nil {
			t.Fatal(err)
		}
		set := func(rules ...agent.Rule) { mu.Lock(); firing = rules; mu.Unlock() }
		v, th := 93.0, 85.0
		hot := agent.Rule{Name: "gpu_core_near_slowdown", Severity: "critical",
			Alerts: []agent.Alert{{Measurement: "gpu", Tags: map[string]string{"gpu": "3", "host": "n1"}, Firing: true, Value: &v, Threshold: &th}}}
		warm := agent.Rule{Name: "gpu_warm", Severity: "warning", Alerts: hot.Alerts}
		now := time.Now()
		hc := &slurm.HealthCheck{Client: c.Client, Node: "n1", Agent: client, CoolFor: time.Minute, UntrustedChecks: 2,
			StateFile: filepath.Join(dir, "hc-state"), Now: func() time.Time { return now }}
		step := func(want slurm.Action) slurm.Outcome {
			t.Helper()
			out, err := hc.Run(ctx)
			if err != nil || out.Action != want {
				t.Fatalf("check: %s (%v; %s), want %s", out.Action, err, out.Reason, want)
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

		// A user's process took the agent's port while it restarted and
		// answers all cool: the node drained for a critical rule stays
		// drained however long, and its reason is kept.
		hc.Node = "n1"
		set(hot)
		out = step(slurm.Drained)
		addr := freeAddr(t)
		im, err := agenttest.StartImpostor("tcp", addr, 65534, 65534)
		if err != nil {
			t.Fatal(err)
		}
		defer im.Stop()
		impostor, err := agent.NewClient(agent.ClientOptions{URL: "http://" + addr})
		if err != nil {
			t.Fatal(err)
		}
		hc.Agent = impostor
		for range 5 {
			now = now.Add(10 * time.Minute)
			if o := step(slurm.Untrusted); !strings.Contains(o.Reason, "uid 65534") {
				t.Errorf("untrusted reason %q does not name the impostor's uid", o.Reason)
			}
		}
		if n, _ := c.Client.Node(ctx, "n1"); !n.Drained() || n.Reason != out.Reason {
			t.Fatalf("with an impostor on the port: %+v, want still drained for %q", n, out.Reason)
		}

		// The agent back: cooled, resumed after the cool time, the
		// impostor's checks counting for nothing towards it.
		hc.Agent = client
		set()
		step(slurm.Cooling)
		now = now.Add(61 * time.Second)
		step(slurm.Resumed)

		// A node in service is drained once the agent is untrusted for
		// UntrustedChecks checks in a row (an agent's restart is one).
		hc.Agent = impostor
		if o := step(slurm.Untrusted); !strings.Contains(o.Reason, "check 1 of 2") {
			t.Errorf("first untrusted check: %q", o.Reason)
		}
		if n, _ := c.Client.Node(ctx, "n1"); n.Drained() {
			t.Fatalf("drained at the first untrusted check: %+v", n)
		}
		out = step(slurm.Drained)
		n, _ = c.Client.Node(ctx, "n1")
		if !n.Drained() || !strings.HasPrefix(n.Reason, slurm.ReasonPrefix+" agent not trusted: ") || !strings.Contains(n.Reason, "uid 65534") {
			t.Fatalf("after two untrusted checks: %+v", n)
		}
		// The agent gone altogether is no more trusted than an impostor.
		im.Stop()
		srv.Close()
		hc.Agent = client
		now = now.Add(10 * time.Minute)
		step(slurm.Untrusted)
		if n, _ := c.Client.Node(ctx, "n1"); !n.Drained() {
			t.Fatalf("resumed with the agent down: %+v", n)
		}
		c.Client.Resume(ctx, "n1")
	})

	t.Run("a job named like fields is read by its fields", func(t *testing.T) {
		hostileJobName(t, c, dir)
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

// hostileJobName submits, as a throwaway user, a job whose name poses as
// the fields that decide where root writes the job's summary; the job must
// be read with its real owner and working directory.
func hostileJobName(t *testing.T, c *slurmtest.Cluster, dir string) {
	ctx := context.Background()
	u := slurmtest.NewUser(t)
	work, err := os.MkdirTemp("", "heatsink-work-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
	os.Chown(work, u.UID, u.GID)
	const name = "x WorkDir=/tmp UserId=root(0)"
	sb := exec.Command("sbatch", "--parsable", "--uid="+u.Name, "--gid="+strconv.Itoa(u.GID), "--chdir="+work, "--job-name="+name, "--wrap=true")
	sb.Env = append(os.Environ(), c.Client.Env...)
	out, err := sb.CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v: %s", err, out)
	}
	id := strings.TrimSpace(string(out))
	envPath := filepath.Join(dir, "ctld-env."+id)
	deadline := time.Now().Add(60 * time.Second)
	for _, err := os.Stat(envPath); err != nil; _, err = os.Stat(envPath) {
		if time.Now().After(deadline) {
			t.Fatalf("job %s: no EpilogSlurmctld in 60 s", id)
		}
		time.Sleep(200 * time.Millisecond)
	}

	if _, err := jobDone(ctx, c.Client, id); err != nil {
		t.Fatal(err)
	}

	// What splitting scontrol's one-liner on spaces believed.
	line, err := c.Client.Run(ctx, "scontrol", "show", "job", "--oneliner", id)
	if err != nil {
		t.Fatal(err)
	}
	if kv := slurm.ParseRecord(string(line)); kv["WorkDir"] == "/tmp" && strings.HasPrefix(kv["UserId"], "root(0)") {
		t.Logf("scontrol's one-liner split on spaces says WorkDir=%s UserId=%s", kv["WorkDir"], kv["UserId"])
	}
	for _, read := range []struct {
		how string
		job func(slurm.Client, context.Context, string) (slurm.JobInfo, error)
	}{{"Job", slurm.Client.Job}, {"squeue --json", slurm.JobJSON}, {"squeue's text, field by field", slurm.JobText}} {
		j, err := read.job(c.Client, ctx, id)
		if err != nil {
			t.Errorf("%s: %v", read.how, err)
			continue
		}
		if j.UID != u.UID || j.User != u.Name || j.GID != u.GID || j.WorkDir != work || j.Name != name ||
			j.State != "COMPLETED" || j.Start.IsZero() || j.End.Before(j.Start) || len(j.Nodes) != 1 {
			t.Errorf("%s: %+v, want uid %d (%s) gid %d, WorkDir %s, name %q, completed on one node", read.how, j, u.UID, u.Name, u.GID, work, name)
		}
	}

	if got, err := c.Client.JobName(ctx, id); err != nil || got != name {
		t.Errorf("JobName: %q %v, want %q", got, err, name)
	}

	b, err := os.ReadFile(envPath)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			env[k] = v
		}
	}
	j, err := c.Client.Job(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.CheckEnv(func(k string) string { return env[k] }); err != nil {
		t.Errorf("the job against slurmctld's own EpilogSlurmctld environment: %v", err)
	}
	env["SLURM_JOB_UID"] = "0"
	if err := j.CheckEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "SLURM_JOB_UID is 0") {
		t.Errorf("a job record that disagrees with the environment: %v", err)
	}
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

// freeAddr is an address on 127.0.0.1 that nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// jobDone waits up to 30 s for job id to leave COMPLETING: the nodes read
// idle, and the EpilogSlurmctld runs, a moment before slurmctld records
// the job's end (under load CI once saw COMPLETING with no end time).
func jobDone(ctx context.Context, c slurm.Client, id string) (slurm.JobInfo, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := c.Job(ctx, id)
		if err != nil || !strings.HasPrefix(j.State, "COMPLETING") || time.Now().After(deadline) {
			return j, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}
