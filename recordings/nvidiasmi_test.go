package recordings

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A log without an index column names each GPU by what else tells them
// apart, and a log imported without --host is named after its file, so
// neither ends up as "gpu_core:" on host "unknown".
func TestNvidiaSMIWithoutIndexNamesGPUsAndHost(t *testing.T) {
	for _, tc := range []struct {
		file    string
		gpus    []string
		warning string
	}{
		{"gpu-node3.uuid.csv", []string{"GPU-6e1a2f3c-0b1d-4b7e-9a55-3c1e0f7d2a10", "GPU-9b0c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e"}, "named by their UUID"},
		{"gpu-node3.bus.csv", []string{"00000000:18:00.0", "00000000:2A:00.0"}, "named by their PCI bus id"},
		{"gpu-node3.bare.csv", []string{"0"}, "taken as GPU 0"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			pts, res := readAll(t, "testdata/"+tc.file, Options{Location: time.UTC})
			var gpus []string
			for _, p := range pts {
				if p.Tag("host") != "gpu-node3" {
					t.Errorf("host %q, want the file's name gpu-node3", p.Tag("host"))
				}
				if !slices.Contains(gpus, p.Tag("gpu")) {
					gpus = append(gpus, p.Tag("gpu"))
				}
			}
			if !slices.Equal(gpus, tc.gpus) {
				t.Errorf("gpus %q, want %q", gpus, tc.gpus)
			}
			w := strings.Join(res.Warnings, "\n")
			if !strings.Contains(w, tc.warning) || !strings.Contains(w, `named "gpu-node3" after the file`) {
				t.Errorf("warnings:\n%s", w)
			}
		})
	}
}
