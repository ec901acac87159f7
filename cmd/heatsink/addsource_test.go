package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
)

// Adding a source is its package and one import line: internal/probe,
// imported by node/probe_source.go when built with -tags heatsink_probe.
// With nothing else edited, the source is in heatsink sensors, in the
// loader's strict errors, in run.json and in /metrics; without the line,
// heatsink knows no such section.
func TestAddingASourceTakesOnePackageAndOneImport(t *testing.T) {
	t.Parallel()
	plain := heatsinkBinary(t)
	bin := probeBinary(t)
	dir := t.TempDir()
	probes, _ := filepath.Abs("../../internal/probe/testdata/temps")
	cfg := writeFile(t, dir, "node.yaml", "interval: 250ms\nsources:\n  nvml: {disabled: true}\n  probe:\n    file: "+probes+"\n")

	out, err := exec.Command(bin, "sensors", "--raw", "--config", cfg, "--sysfs-root", "../../sensors/testdata/intel-node/sys").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "probe      2 readings") || !regexp.MustCompile(`probe=inlet +temp_c=21.5`).MatchString(string(out)) {
		t.Errorf("sensors --raw: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "sensors", "--config", cfg, "--sysfs-root", "../../sensors/testdata/intel-node/sys").CombinedOutput()
	if err != nil || !regexp.MustCompile(`probe probe=inlet\ntemp_c: +\+21\.5°C`).MatchString(string(out)) {
		t.Errorf("sensors: %v\n%s", err, out)
	}

	bad := writeFile(t, dir, "bad.yaml", "sources:\n  probe:\n    fil: x\n")
	for _, tc := range []struct{ bin, want string }{
		{bin, "bad.yaml:3: unknown key sources.probe.fil"},
		{plain, "bad.yaml:2: unknown key sources.probe"},
	} {
		if out, err := exec.Command(tc.bin, "sensors", "--config", bad).CombinedOutput(); err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s sensors --config bad.yaml: %v %s, want %q", filepath.Base(tc.bin), err, out, tc.want)
		}
	}
	empty := writeFile(t, dir, "empty.yaml", "sources:\n  nvml: {disabled: true}\n  probe:\n    file: \"\"\n")
	if out, err := exec.Command(bin, "sensors", "--config", empty).CombinedOutput(); err == nil || !strings.Contains(string(out), "empty.yaml:4: sources.probe.file: missing") {
		t.Errorf("empty file: %v %s", err, out)
	}

	addr, run := freeAddr(t), filepath.Join(dir, "run")
	cmd := ownState(t, exec.Command(bin, "collect", "--config", cfg, "--out", run, "--listen", addr, "--duration", "20s"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var metrics string
	eventually(t, 15*time.Second, "the probe in /metrics", func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		metrics = string(b)
		return strings.Contains(metrics, `heatsink_probe_`) && strings.Contains(metrics, `probe="outlet"`)
	})
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("collect: %v\n%s", err, stderr.String())
	}
	m, err := rundir.ReadMeta(run)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, s := range m.Sources {
		found = found || (s.Name == "probe" && len(s.Devices) == 1 && strings.HasPrefix(s.Devices[0], "2 probes: inlet, outlet"))
	}
	if !found {
		t.Errorf("run.json sources %+v", m.Sources)
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
