package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
)

// stateDirs are the tests' own state directories, one per test.
var stateDirs sync.Map // *testing.T: string

// ownState gives cmd the test's own state directory (HEATSINK_STATE_DIR:
// the run ledger, the default spool root). The ledger is otherwise
// machine-wide: a run another test killed would be found cut off by this
// test's run and recorded among its events, and this test's killed runs
// by the next test's.
func ownState(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	dir, ok := stateDirs.Load(t)
	if !ok {
		dir, _ = stateDirs.LoadOrStore(t, t.TempDir())
		t.Cleanup(func() { stateDirs.Delete(t) })
	}
	cmd.Env = append(cmd.Environ(), influx.StateDirEnv+"="+dir.(string))
	return cmd
}

// HEATSINK_STATE_DIR moves the run ledger: a run killed with SIGKILL is
// found cut off by the next run that shares its state directory, and not
// by one with another.
func TestStateDirMovesTheRunLedger(t *testing.T) {
	bin := heatsinkBinary(t)
	tmp := t.TempDir()
	stateA, stateB := filepath.Join(tmp, "state-a"), filepath.Join(tmp, "state-b")
	collect := func(state, out string, args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"collect", "--interval", "200ms", "--out", out}, args...)...)
		cmd.Env = append(os.Environ(), influx.StateDirEnv+"="+state)
		return cmd
	}
	killed := filepath.Join(tmp, "killed")
	cmd := collect(stateA, killed)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The ledger entry is written before run.json: a kill between the
		// two leaves no run to mark (the suite once caught that gap).
		_, err := os.Stat(filepath.Join(killed, "run.json"))
		if ents, _ := filepath.Glob(filepath.Join(stateA, "runs", "*.run")); len(ents) == 1 && err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no ledger entry under %s/runs, or no run.json, after 30 s", stateA)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	status := func() string {
		b, err := os.ReadFile(filepath.Join(killed, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var meta struct{ Status string }
		if err := json.Unmarshal(b, &meta); err != nil {
			t.Fatal(err)
		}
		return meta.Status
	}
	if out, err := collect(stateB, filepath.Join(tmp, "other"), "--duration", "400ms").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s := status(); s != "running" {
		t.Errorf("a run under another state directory changed the killed run's status to %q", s)
	}
	if out, err := collect(stateA, filepath.Join(tmp, "next"), "--duration", "400ms").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s := status(); s != "cut_off" {
		t.Errorf("the next run under the same state directory left the killed run's status %q, want cut_off", s)
	}
}
