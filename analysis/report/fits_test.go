package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/analysis"
)

func TestTextShowsTheFitsWithTheirIntervals(t *testing.T) {
	rep := sample()
	c := &rep.Components[0]
	c.LoadFit = &analysis.LoadFit{Model: "two-exponential", ModelWeight: 0.8312, Models: make([]analysis.ModelFit, 2), TauS: 24.13, TauLoS: 21.47, TauHiS: 28.5, RiseC: 31.58, RiseLoC: 31.29,
		RiseHiC: 31.87, PlateauC: 70.58, TauFastS: f(3.36), FastShare: f(0.27), Level: 0.95, FitR2: 0.992, RMSC: 0.33}
	c.CooldownFit = &analysis.CoolFit{Model: "two-exponential", CoolTauS: 20.65, CoolTauLoS: 18.45, CoolTauHiS: 25.24,
		FastShare: f(0.2), AsymptoteC: 41, DropC: 17.7, Level: 0.95, FitR2: 0.995, RMSC: 0.27}
	c.HeatIntervalBand = &analysis.HeatIntervalBand{LoSPerC: 1.95, HiSPerC: 2.6}
	var buf bytes.Buffer
	// Wide: the narrow form leaves the band and the fast share out to fit
	// 100 columns (width_test.go).
	if err := Write(&buf, TextWide, rep, nil); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Fitted rise over the load", "two-exponential (w 0.83)", "24.1 [21.5, 28.5]", "31.6 [31.3, 31.9]", "3.4 (27 %)",
		"1.95–2.60", "Fitted cooldown", "20.6 [18.4, 25.2]", "< sampling (20 %)", "95 % confidence intervals"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	// The cooldown had one model admitted: no weight to show.
	if strings.Contains(out, "two-exponential (w 1.00)") {
		t.Errorf("a fit with one admitted model shows a weight:\n%s", out)
	}
}
