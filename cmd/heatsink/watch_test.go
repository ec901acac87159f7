package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// heatsink watch on each fixture machine prints three lines of readings
// under a header that names each column's component and unit, repeated
// every --header-every lines; the readings are the fixture's (a CPU chip's
// package sensor over its hotter cores, k10temp's hottest sensor, the
// drive's composite temperature, the memory in use) and RAPL power, which
// needs two samples, is "-" on the first line only.
func TestWatchPrintsALinePerTickUnderItsHeader(t *testing.T) {
	bin := heatsinkBinary(t)
	cfg := filepath.Join(t.TempDir(), "nogpu.yaml")
	if err := os.WriteFile(cfg, []byte("sources: {nvml: {disabled: true}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		machine string
		header  string            // the component line
		last    map[string]string // column (component unit): the third line's reading
	}{
		{"intel-node", "cpu0 pkg0 nvme0 cpus cpu mem", map[string]string{"cpu0 C": "46.0", "pkg0 W": "0.0", "nvme0 C": "38.9", "mem GiB": "6.2"}},
		{"amd-node", "amdgpu0 amdgpu0 cpu0 pkg0 nvme0 cpus cpu mem", map[string]string{"cpu0 C": "48.9", "amdgpu0 C": "48.0", "amdgpu0 W": "11.0", "nvme0 C": "35.9"}},
		{"bench-node", "cpu0 cpu1 pkg0 pkg1 nvme0 cpus cpu mem", map[string]string{"cpu0 C": "46.0", "cpu1 C": "47.0", "pkg1 W": "0.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.machine, func(t *testing.T) {
			root := filepath.Join("../../sensors/testdata", tt.machine)
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "watch", "--count", "3", "--header-every", "2", "--interval", "300ms", "--config", cfg,
				"--sysfs-root", filepath.Join(root, "sys"), "--proc-root", filepath.Join(root, "proc"))
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			// header, units, line 1, line 2, header, units, line 3
			if len(lines) != 7 || lines[4] != lines[0] || lines[5] != lines[1] {
				t.Fatalf("want the two header lines, two readings, the header again, one reading; got:\n%s", out)
			}
			names, units := strings.Fields(lines[0]), strings.Fields(lines[1])
			if got := strings.Join(names[2:], " "); names[0] != "#" || names[1] != "time" || got != tt.header {
				t.Errorf("header %q, want # time %s", lines[0], tt.header)
			}
			if len(units) != len(names)-1 {
				t.Fatalf("%d units for %d columns:\n%s", len(units)-1, len(names)-2, out)
			}
			rows := [][]string{strings.Fields(lines[2]), strings.Fields(lines[3]), strings.Fields(lines[6])}
			for i, row := range rows {
				if len(row) != len(names)-1 {
					t.Fatalf("line %d has %d fields, the header %d columns:\n%s", i+1, len(row)-1, len(names)-2, out)
				}
				if _, err := time.Parse("15:04:05", row[0]); err != nil {
					t.Errorf("line %d starts with %q, not a time", i+1, row[0])
				}
				for c, v := range row[1:] {
					col := names[c+2] + " " + units[c+1]
					_, err := strconv.ParseFloat(v, 64)
					rapl := units[c+1] == "W" && strings.HasPrefix(names[c+2], "pkg")
					// The fixture's /proc/stat never advances: no CPU use.
					cpuUse := col == "cpu %"
					switch {
					case v == "-" && rapl && i == 0:
					case v == "-" && cpuUse:
					case err != nil:
						t.Errorf("line %d, column %s: %q is no reading", i+1, col, v)
					case i == 2 && tt.last[col] != "" && v != tt.last[col]:
						t.Errorf("line 3, column %s: %s, want %s", col, v, tt.last[col])
					}
				}
			}
		})
	}
}
