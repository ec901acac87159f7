package analysis

import (
	"strings"
	"testing"
)

func TestDifferSaysWhenWithinTheNoise(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   Estimate
		diff   float64
		hw     float64
		within bool
	}{
		{"overlapping H100 recordings", Estimate{21.40, 19.45, 23.84}, Estimate{24.40, 20.82, 30.42}, 3.0, 4.33, true},
		{"clearly apart", Estimate{10, 9, 11}, Estimate{20, 19, 21}, 10, 1.414, false},
		{"lower, asymmetric intervals", Estimate{20, 18, 30}, Estimate{15, 14, 16}, -5, 2.236, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Differ(tc.a, tc.b)
			near(t, "difference", d.Value, tc.diff, 1e-9)
			near(t, "half-width", d.HalfWidth, tc.hw, 0.01)
			if d.WithinNoise != tc.within {
				t.Errorf("within the noise = %v, want %v", d.WithinNoise, tc.within)
			}
		})
	}
}

func TestCompareStatesFittedDifferences(t *testing.T) {
	rep := func(tau, lo, hi float64) *Report {
		return &Report{Components: []ComponentResult{{ID: "gpu_core:0", Kind: KindGPUCore,
			LoadFit: &LoadFit{TauS: tau, TauLoS: lo, TauHiS: hi, RiseC: 30, RiseLoC: 29.5, RiseHiC: 30.5}}}}
	}
	cmp := Compare([]*Report{rep(20, 18, 22), rep(21, 19, 23), rep(30, 28, 32)})
	texts := map[string][]string{}
	for _, r := range cmp.Kinds[0].Ratios {
		texts[r.Quantity] = append(texts[r.Quantity], r.Text)
	}
	if got := texts["tau_s"]; len(got) != 2 || !strings.Contains(got[0], "within the noise") || strings.Contains(got[1], "within the noise") || !strings.Contains(got[1], "1.50x") {
		t.Errorf("tau_s ratios %q: want B within the noise of A, C 1.50x A", got)
	}
	if got := texts["cool_tau_s"]; len(got) != 2 || !strings.Contains(got[0], "not compared: no fit in A and B") {
		t.Errorf("cool_tau_s ratios %q: want not compared", got)
	}
}
