package slurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The state file of an earlier heatsink (one time: cool since) is still
// read; a torn one is an error naming the file, never a fresh start that
// would forget how often the agent was untrusted.
func TestHealthCheckStateFiles(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		file    string
		want    checkState
		wantErr string
	}{
		{"earlier-format.cool", checkState{CoolSince: t0}, ""},
		{"both.cool", checkState{CoolSince: t0, UntrustedChecks: 1}, ""},
		{"missing.cool", checkState{}, ""},
		{"torn.cool", checkState{}, "torn.cool"},
	} {
		h := &HealthCheck{StateFile: filepath.Join("testdata", "hcstate", tc.file)}
		got, err := h.loadState()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want an error naming %s", tc.file, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !got.CoolSince.Equal(tc.want.CoolSince) || got.UntrustedChecks != tc.want.UntrustedChecks {
			t.Errorf("%s: %+v %v, want %+v", tc.file, got, err, tc.want)
		}
	}
}

// What is saved is read back; nothing to remember removes the file.
func TestHealthCheckStateRoundTrip(t *testing.T) {
	h := &HealthCheck{StateFile: filepath.Join(t.TempDir(), "sub", "hc.cool")}
	st := checkState{CoolSince: time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC), UntrustedChecks: 3}
	if err := h.saveState(st); err != nil {
		t.Fatal(err)
	}
	if got, err := h.loadState(); err != nil || !got.CoolSince.Equal(st.CoolSince) || got.UntrustedChecks != 3 {
		t.Fatalf("read back %+v %v, want %+v", got, err, st)
	}
	if err := h.saveState(checkState{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.StateFile); !os.IsNotExist(err) {
		t.Errorf("an empty state left its file: %v", err)
	}
}
