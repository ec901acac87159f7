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
