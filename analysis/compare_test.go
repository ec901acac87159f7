package analysis

import (
	"strings"
	"testing"
)

func fp(v float64) *float64 { return &v }

func comp(id, kind string, heat, steep, ret *float64, why map[string]string) ComponentResult {
	return ComponentResult{ID: id, Kind: kind, IdleMeanC: fp(35), MaxC: fp(70), HeatIntervalSPerC: heat, SteepestSPerC: steep, ReturnToIdleS: ret, NotComputed: why}
}

func TestCompareRatiosAgainstTheFirstRun(t *testing.T) {
	air := &Report{Run: RunInfo{ID: "air"}, CoolingEnergy: CoolingEnergy{Cooling: "air", EnergyKJ: fp(20)}, Components: []ComponentResult{
		comp("gpu_core:0", KindGPUCore, fp(10), fp(2), fp(300), nil),
		comp("gpu_core:1", KindGPUCore, fp(14), fp(3), fp(500), nil),
		comp("cpu:c0", KindCPU, fp(26), fp(4), fp(200), nil),
	}}
	imm := &Report{Run: RunInfo{ID: "immersion"}, CoolingEnergy: CoolingEnergy{Cooling: "immersion", EnergyKJ: fp(50)}, Components: []ComponentResult{
		comp("gpu_core:0", KindGPUCore, fp(20), fp(4), fp(600), nil),
		comp("gpu_core:1", KindGPUCore, fp(28), fp(5), nil, map[string]string{"return_to_idle_s": "not reached: ..."}),
		comp("cpu:c0", KindCPU, fp(20), fp(4), fp(100), nil),
		comp("coolant:pod", KindCoolant, fp(400), fp(300), fp(3000), nil),
	}}
	cmp := Compare([]*Report{air, imm})
	if strings.Join(cmp.Labels, "") != "AB" || len(cmp.Kinds) != 3 {
		t.Fatalf("labels %v, %d kinds", cmp.Labels, len(cmp.Kinds))
	}
	gpu := cmp.Kinds[0]
	if gpu.Kind != KindGPUCore || gpu.PerRun[0].Components != 2 {
		t.Fatalf("first kind %+v", gpu)
	}
	// Mean heat interval: A (10+14)/2 = 12, B (20+28)/2 = 24: B heats 2x slower.
	near(t, "A gpu heat interval", *gpu.PerRun[0].HeatIntervalSPerC, 12, 1e-12)
	near(t, "B gpu heat interval", *gpu.PerRun[1].HeatIntervalSPerC, 24, 1e-12)
	if q := gpu.Ratios[0]; q.Text != "GPU core accumulates heat 2.00x slower in B than in A" || *q.Value != 0.5 {
		t.Errorf("gpu heat ratio: %q (%v)", q.Text, *q.Value)
	}
	// One GPU of B never returned to idle, so B's GPUs as a kind did not.
	if r := gpu.PerRun[1]; r.ReturnToIdleS != nil || !strings.Contains(r.NotComputed["return_to_idle_s"], "gpu_core:1") {
		t.Errorf("B gpu return %v, %v", r.ReturnToIdleS, r.NotComputed)
	}
	near(t, "A gpu return (slowest)", *gpu.PerRun[0].ReturnToIdleS, 500, 0)
	if q := gpu.Ratios[1]; q.Value != nil || !strings.Contains(q.Text, "not reached or not computed in B") {
		t.Errorf("gpu return ratio: %q", q.Text)
	}
	cpu := cmp.Kinds[1]
	if q := cpu.Ratios[0]; q.Text != "CPU accumulates heat 1.30x faster in B than in A" {
		t.Errorf("cpu: %q", q.Text)
	}
	if q := cpu.Ratios[1]; q.Text != "CPU takes 0.50x as long to return to idle in B (100 s) as in A (200 s)" {
		t.Errorf("cpu return: %q", q.Text)
	}
	// The coolant exists only in B.
	cool := cmp.Kinds[2]
	if cool.PerRun[0].Components != 0 || cool.PerRun[0].HeatIntervalSPerC != nil || !strings.Contains(cool.Ratios[0].Text, "no heat interval for A") {
		t.Errorf("coolant: %+v %q", cool.PerRun[0], cool.Ratios[0].Text)
	}
	if q := cmp.CoolingEnergy[0]; *q.Value != 2.5 || !strings.HasPrefix(q.Text, "cooling took 2.50x the energy in B (immersion, 50.0 kJ) as in A (air, 20.0 kJ)") {
		t.Errorf("cooling: %q", q.Text)
	}
}

func TestCompareWithoutNumbers(t *testing.T) {
	a := &Report{Run: RunInfo{ID: "a"}, CoolingEnergy: CoolingEnergy{NotComputed: "no load phase"}}
	b := &Report{Run: RunInfo{ID: "b"}, CoolingEnergy: CoolingEnergy{EnergyKJ: fp(3)}}
	cmp := Compare([]*Report{a, b})
	if len(cmp.Kinds) != 0 || cmp.CoolingEnergy[0].Value != nil || !strings.Contains(cmp.CoolingEnergy[0].Text, "not computed for A") {
		t.Errorf("%+v", cmp)
	}
}
