package analysis

import (
	"strings"
	"testing"
)

// The H200s' fans react within a load: the core peaked 19.7-21.7 °C over
// idle 15-25 s into each 35 s load and fell over 2 °C by its end at steady
// power (10 s means; the last 9 s of the load, the end's bound, lie
// 1.3-1.5 °C under the peak), so no load fit exists. The fingerprint says so (cooling_reacted)
// and takes the peak of 10 s means, the larger of the two lower bounds,
// keeping the end of the load's beside it; the memory, which fits, keeps
// its fit.
func TestAReactingCoolingGivesTheBoundFromThePeak(t *testing.T) {
	r := loadH200Survey(t, "clean")
	s := JudgeSurveyRun(r, Analyze(r, DefaultOptions().Scaled(25.0/40)), nil, DefaultSurveyRule())
	if len(s.GPUs) != 2 {
		t.Fatalf("%d GPUs judged: %v", len(s.GPUs), s.NotComputed)
	}
	for _, g := range s.GPUs {
		core, mem := g.AloneCore, g.AloneMem
		if core == nil || core.ThermalResistanceCPerW == nil || mem == nil || mem.ThermalResistanceCPerW == nil {
			t.Fatalf("GPU %s: no °C/W alone", g.Index)
		}
		t.Logf("GPU %s core: %.4f °C/W (%s), end of load %v; memory %.4f (%s)", g.Index, *core.ThermalResistanceCPerW,
			core.ThermalResistanceFrom, deref(core.EndOfLoadCPerW), *mem.ThermalResistanceCPerW, mem.ThermalResistanceFrom)
		if !core.CoolingReacted || !strings.HasPrefix(core.ThermalResistanceFrom, "lower bound: the peak of 10 s means") ||
			core.ThermalResistanceHiCPerW != nil || core.ThermalResistanceLoCPerW == nil || *core.ThermalResistanceLoCPerW != *core.ThermalResistanceCPerW {
			t.Errorf("GPU %s core: reacted %v, from %q, lo %v, hi %v: want the peak's lower bound, marked", g.Index, core.CoolingReacted,
				core.ThermalResistanceFrom, deref(core.ThermalResistanceLoCPerW), deref(core.ThermalResistanceHiCPerW))
		}
		dp := *core.PowerW - *core.IdlePowerW
		if core.EndOfLoadCPerW == nil || *core.EndOfLoadCPerW > *core.ThermalResistanceCPerW-1/dp {
			t.Errorf("GPU %s core: end of load %v against the peak's %.4f: want it 1 °C or more lower", g.Index, deref(core.EndOfLoadCPerW), *core.ThermalResistanceCPerW)
		}
		if mem.CoolingReacted || mem.ThermalResistanceFrom != "load_fit" || mem.EndOfLoadCPerW != nil {
			t.Errorf("GPU %s memory: reacted %v, from %q: want its load fit", g.Index, mem.CoolingReacted, mem.ThermalResistanceFrom)
		}
	}
}

// Drift compares a GPU with its last survey read the same way: where one
// load's cooling reacted (its value the peak's bound) and the other's was
// the end of the load's bound (a survey judged before the peak's bound
// existed), the reacted one's end-of-load bound is compared. A peak read
// against an end would otherwise be a drift of however far the fans
// brought the temperature back (10 °C on the 7-minute H100 load).
func TestDriftComparesAReactedLoadWithLikeReadings(t *testing.T) {
	const dp = 600.0
	reacted := func(peak, end float64) *Fingerprint {
		return &Fingerprint{ThermalResistanceCPerW: &peak, ThermalResistanceLoCPerW: &peak, CoolingReacted: true, EndOfLoadCPerW: &end,
			ThermalResistanceFrom: "lower bound: the peak of 10 s means, 25 s into the load, before the cooling reacted (no load fit: ...)",
			PowerW:                ptr(dp + 80), IdlePowerW: ptr(80.0)}
	}
	endOnly := func(v float64) *Fingerprint {
		return &Fingerprint{ThermalResistanceCPerW: &v, ThermalResistanceLoCPerW: &v,
			ThermalResistanceFrom: "lower bound: mean of the last 9 s of the load (no load fit: the temperature peaked ...)",
			PowerW:                ptr(dp + 80), IdlePowerW: ptr(80.0)}
	}
	for _, tc := range []struct {
		name        string
		now, before *Fingerprint
		drift       bool
	}{
		{"reacted now, end bound before, same card", reacted(0.050, 0.040), endOnly(0.040), false},
		{"end bound now, reacted before, same card", endOnly(0.040), reacted(0.050, 0.040), false},
		{"reacted now, end bound before, the end 20 % higher", reacted(0.056, 0.048), endOnly(0.040), true},
		{"reacted both times, the peak 25 % higher", reacted(0.050, 0.045), reacted(0.040, 0.036), true},
		{"reacted both times, same card", reacted(0.050, 0.040), reacted(0.050, 0.041), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gpu := func(fp *Fingerprint) []SurveyGPU {
				return []SurveyGPU{{Index: "0", UUID: "GPU-x", AloneCore: fp}}
			}
			flags, why := driftFlags(gpu(tc.now), gpu(tc.before), DefaultSurveyRule())
			if why != "" || (len(flags) > 0) != tc.drift {
				t.Errorf("flags %+v (%s), want drift %v", flags, why, tc.drift)
			}
		})
	}
}
