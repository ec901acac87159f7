package slurmtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// processesOf returns the pids whose environment names the cluster.
func processesOf(conf string) []int {
	marker := []byte("SLURM_CONF=" + conf + "\x00")
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); err == nil && bytes.Contains(env, marker) {
			if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && bytes.Contains(st, []byte(") Z ")) {
				continue // a zombie waiting for init to reap it: already dead
			}
			out = append(out, pid)
		}
	}
	return out
}

// Stop leaves no daemon and no job behind, even with a job step running.
func TestStopLeavesNothingRunning(t *testing.T) {
	if err := Available(); err != nil {
		t.Fatal(err)
	}
	if _, err := Launch(t.TempDir(), Options{}); err == nil || !bytes.Contains([]byte(err.Error()), []byte("not searchable")) {
		t.Errorf("a directory munged cannot reach: %v", err)
	}
	dir, err := os.MkdirTemp("", "slurmtest-stop-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	c, err := Launch(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	step := exec.Command("srun", "--nodes=1", "sleep", "300")
	step.Env = append(os.Environ(), c.Client.Env...)
	var stepErr bytes.Buffer
	step.Stderr = &stepErr
	if err := step.Start(); err != nil {
		c.Stop()
		t.Fatal(err)
	}
	defer step.Process.Kill()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-f", "(^|/)sleep 300$").Output()
		if len(bytes.TrimSpace(out)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			c.Stop()
			t.Fatalf("the job step never started; srun said: %s", stepErr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := len(processesOf(c.Conf)); n < 4 {
		t.Errorf("%d processes of the cluster while a step runs; want munged, slurmctld, slurmd, slurmstepd and the job", n)
	}
	c.Stop()
	step.Wait()
	if left := processesOf(c.Conf); len(left) > 0 {
		t.Errorf("processes left after Stop: %v", left)
	}
}
