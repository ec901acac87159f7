package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	probeOnce sync.Once
	probePath string
	probeErr  error
)

// probeBinary is heatsink built with -tags heatsink_probe: with the probe
// source, analysis (and whatever else proves what adding one takes). One
// build serves every test, as heatsinkBinary's does.
func probeBinary(t *testing.T) string {
	t.Helper()
	probeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "heatsink-probe-bin")
		if err != nil {
			probeErr = err
			return
		}
		probePath = filepath.Join(dir, "heatsink-probe")
		if out, err := exec.Command("go", "build", "-tags", "heatsink_probe", "-o", probePath, ".").CombinedOutput(); err != nil {
			probeErr = &buildError{err, string(out)}
		}
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	return probePath
}
