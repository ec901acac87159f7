package analysis

import (
	"path/filepath"
	"testing"
)

// settleAsItRuns feeds l's load readings to SettledTau as a survey does
// while the load runs (every 5 readings) and returns the first τ it
// reports and when, or ok false when the load ended first.
func settleAsItRuns(l realLoad) (tauS, atS float64, ok bool) {
	i, j := window(l.t, l.load.Start, l.load.End)
	var x, v []float64
	for k := i; k < j; k++ {
		x, v = append(x, l.t[k]-l.load.Start), append(v, l.v[k])
		if len(x)%5 != 0 {
			continue
		}
		if tau, err := SettledTau(x, v, l.idleMeanC); err == nil {
			return tau, x[len(x)-1], true
		}
	}
	return 0, 0, false
}

// TestSettledTauIsTheRealH100sSlowTimeConstant replays real H100 DGEMM
// loads reading by reading. Where the load is long enough, SettledTau
// reports the heatsink's τ (the full two-minute fit's 14-18 s), not the
// 10-12 s that the first 40-55 s give (the last survey sized its loads
// from that); on the 55 s loads of the 4-GPU node it never settles, and
// says so instead of guessing.
func TestSettledTauIsTheRealH100sSlowTimeConstant(t *testing.T) {
	for _, tc := range []struct {
		label, dir string
		wantS      [2]float64 // τ range; zero: must not settle
		byS        float64
	}{
		{"h100-dgemm", filepath.Join("testdata", "h100-dgemm"), [2]float64{14, 18}, 90},
		{"h100-pair-long dgemm", filepath.Join(untarTo(t, filepath.Join("testdata", "h100-pair-long", "recordings.tar.gz")), "run-dgemm"), [2]float64{14, 18}, 90},
	} {
		run, err := Load(tc.dir)
		if err != nil {
			t.Fatalf("%s: %v", tc.label, err)
		}
		core := realLoads(Analyze(run, DefaultOptions()), tc.label)[0]
		if core.name != tc.label+" gpu_core:0" {
			t.Fatalf("first load is %s, want the core's", core.name)
		}
		tau, at, ok := settleAsItRuns(core)
		if !ok || tau < tc.wantS[0] || tau > tc.wantS[1] || at > tc.byS {
			t.Errorf("%s: τ %.1f s settled at %.0f s (settled %v), want %.0f-%.0f s by %.0f s", tc.label, tau, at, ok, tc.wantS[0], tc.wantS[1], tc.byS)
		}
		t.Logf("%s core: τ_slow %.1f s, settled %.0f s into the load", tc.label, tau, at)
	}
	hs, _, _ := h100x4(t)
	for _, l := range realLoads(hs, "h100x4") {
		if l.name[len(l.name)-10:len(l.name)-2] != "gpu_core" {
			continue
		}
		if tau, at, ok := settleAsItRuns(l); ok {
			t.Errorf("%s: 55 s load settled at τ %.1f s after %.0f s; its readings cannot fix a τ of 14-18 s", l.name, tau, at)
		}
	}
	if _, err := SettledTau(nil, nil, 30); err == nil {
		t.Error("no readings: got a τ")
	}
	if _, err := SettledTau([]float64{0, 1, 2}, []float64{30, 30, 30}, 30); err == nil {
		t.Errorf("three flat readings: err %v", err)
	}
}
