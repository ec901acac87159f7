package workloads

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The secrets heatsink read from its environment ({env: NAME}) are not
// passed on to the job; the rest of the environment is.
func TestCommandDoesNotInheritTheSecretsHeatsinkRead(t *testing.T) {
	t.Setenv("HS_TEST_TOKEN", "hunter2")
	t.Setenv("HS_TEST_OTHER", "kept")
	c := newTestCommand(t, `echo "${HS_TEST_TOKEN-unset} $HS_TEST_OTHER"`)
	c.DropEnv = []string{"HS_TEST_TOKEN"}
	var out strings.Builder
	c.Stdout = &out
	if r := waitRun(t, startRun(c)); r.status != 0 || out.String() != "unset kept\n" {
		t.Errorf("status %d, the job saw %q, want %q", r.status, out.String(), "unset kept\n")
	}
}

// TestHelperHeatsinkRunningAJob is the heatsink process of
// TestKill9OfHeatsinkKillsTheJob: it runs a job that records its pid and
// sleeps, and waits.
func TestHelperHeatsinkRunningAJob(t *testing.T) {
	pidFile := os.Getenv("HS_TEST_PDEATH_PIDFILE")
	if pidFile == "" {
		t.Skip("a helper process of TestKill9OfHeatsinkKillsTheJob")
	}
	// A shell job with a background child, which Pdeathsig alone misses.
	c, err := NewCommand([]string{"sh", "-c", `sleep 300 & echo $! > "$0.child" && echo $$ > "$0.tmp" && mv "$0.tmp" "$0" && wait`, pidFile})
	if err != nil {
		t.Fatal(err)
	}
	c.Run(context.Background(), nil)
}

// kill -9 of heatsink gives it no chance to stop the job: the kernel must
// (Pdeathsig on the leader, and the guard for what the job started), or the
// job heats the node unguarded and unrecorded.
func TestKill9OfHeatsinkKillsTheJob(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "job.pid")
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperHeatsinkRunningAJob$")
	helper.Env = append(os.Environ(), "HS_TEST_PDEATH_PIDFILE="+pidFile)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var job int
	for deadline := time.Now().Add(30 * time.Second); job == 0; {
		if b, err := os.ReadFile(pidFile); err == nil {
			job, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			helper.Process.Kill()
			t.Fatal("the helper's job did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, err := os.ReadFile(pidFile + ".child")
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	t.Cleanup(func() { syscall.Kill(job, syscall.SIGKILL); syscall.Kill(child, syscall.SIGKILL) })
	helper.Process.Signal(syscall.SIGKILL)
	helper.Wait()
	for _, p := range []struct {
		what string
		pid  int
	}{{"job", job}, {"the job's background child", child}} {
		for deadline := time.Now().Add(5 * time.Second); alive(p.pid); {
			if time.Now().After(deadline) {
				t.Fatalf("%s (pid %d) still runs 5 s after heatsink was killed", p.what, p.pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// alive reports whether pid is a process that has not exited (a zombie
// awaiting its reaper counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
