package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
)

// The CLI tests run the real binary as a real process (signals, exit codes,
// process groups), built once per test run.
var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	// The tests' runs keep their ledger out of the machine's state
	// directory; ownState gives a test one of its own.
	state, err := os.MkdirTemp("", "heatsink-state")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(influx.StateDirEnv, state)
	code := m.Run()
	os.RemoveAll(state)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if probePath != "" {
		os.RemoveAll(filepath.Dir(probePath))
	}
	if gpusimPath != "" {
		os.RemoveAll(filepath.Dir(gpusimPath))
	}
	os.Exit(code)
}

// heatsinkBinary returns the path of a heatsink binary built from this package.
func heatsinkBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "heatsink-bin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "heatsink")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = &buildError{err, string(out)}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// clusterDir is a directory a test's loopback Slurm cluster shares:
// readable by all (t.TempDir's parent is not, and the cluster's daemons
// and jobs read it), and kept when the test fails so that its logs can be
// read.
func clusterDir(t *testing.T, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(dir)
		}
	})
	return dir
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }
