package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from what the commands print")

// heatsink sensors on each fixture machine prints the compact view: a
// block per chip and device, readings rounded with units and the limits the
// device reports, NVMe once (as the nvme source names it). nvml is turned
// off so that a machine with a GPU prints the same.
func TestSensorsCompactViewOfTheFixtureMachines(t *testing.T) {
	bin := heatsinkBinary(t)
	cfg := filepath.Join(t.TempDir(), "nogpu.yaml")
	if err := os.WriteFile(cfg, []byte("sources: {nvml: {disabled: true}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, machine := range []string{"intel-node", "amd-node", "bench-node"} {
		t.Run(machine, func(t *testing.T) {
			root := filepath.Join("../../sensors/testdata", machine)
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "sensors", "--config", cfg, "--sysfs-root", filepath.Join(root, "sys"), "--proc-root", filepath.Join(root, "proc"))
			cmd.Stderr = &stderr
			got, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			golden := filepath.Join("testdata", "sensors", machine+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./cmd/heatsink -run TestSensorsCompactView -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs (-update rewrites it; review the diff):\ngot:\n%s", golden, got)
			}
			if n := strings.Count(string(got), "Composite:"); n != 1 {
				t.Errorf("the NVMe drive's Composite sensor is listed %d times, want once", n)
			}
		})
	}
}

// A machine where no source reads a temperature (a VM: no hwmon, no NVMe,
// no GPU) exits 1 saying so, as lm-sensors does, after saying why each
// source is missing.
func TestSensorsWithoutATemperatureExitsOne(t *testing.T) {
	bin := heatsinkBinary(t)
	empty := t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "sensors", "--sysfs-root", empty)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "No sensors found!") {
		t.Errorf("stderr lacks No sensors found!: %q", stderr.String())
	}
	for _, src := range []string{"hwmon:", "nvme:", "rapl:"} {
		if !strings.Contains(stdout.String(), src) {
			t.Errorf("stdout does not say why %s is missing:\n%s", src, stdout.String())
		}
	}
}
