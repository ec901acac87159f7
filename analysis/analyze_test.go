package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// The immersed scenario: 600 s baseline, 1800 s load, 3600 s cooldown at
// 1 Hz, two GPUs, a CPU chip, an NVMe drive and a tank whose pumps run on a
// fixed schedule. Every expected number below comes from the closed forms of
// the models, not from the code under test.
const (
	baseS = 600.0
	loadS = 1800.0
	coolS = 3600.0
	endS  = baseS + loadS + coolS
)

var (
	gpu0Core = firstOrder{T0: 35, DT: 40, Tau: 120, LoadS: loadS}
	gpu0Mem  = firstOrder{T0: 40, DT: 30, Tau: 200, LoadS: loadS}
	gpu1Core = firstOrder{T0: 36, DT: 38, Tau: 150, LoadS: loadS}
	cpuBase  = firstOrder{T0: 40, DT: 30, Tau: 300, LoadS: loadS}
	nvmeM    = firstOrder{T0: 30, DT: 10, Tau: 300, LoadS: loadS}
	coolant  = firstOrder{T0: 30, DT: 6, Tau: 900, LoadS: loadS, Delay: 30}
	// Pump cycles [start, end) in seconds; the last is still running at the
	// end of the recording. Heat removed per cycle is a + b·T_start.
	cycles       = [][2]float64{{300, 500}, {1000, 1300}, {2000, 2400}, {3000, 3300}, {4200, 4800}, {5900, 7000}}
	heatA, heatB = -500.0, 40.0 // kJ, kJ/°C
)

// rel converts a model's time (seconds since the load start) to run time.
func rel(m firstOrder) func(float64) float64 {
	return func(s float64) float64 { return m.at(s - baseS) }
}

func pumpOn(s float64) (on bool, start, dur float64) {
	for _, c := range cycles {
		if s >= c[0] && s < c[1] {
			return true, c[0], math.Min(c[1], endS+1) - c[0]
		}
	}
	return false, 0, 0
}

type scenario struct {
	noBaseline, noTank, air, gap, backwards bool
}

func buildScenario(t *testing.T, sc scenario) *Run {
	b := newRun(t)
	if sc.noBaseline {
		b.phases(0, 0, 0)
		end := b.at(baseS + loadS)
		cEnd := b.at(endS)
		b.meta.Phases = []rundir.Phase{{Name: "load", Start: b.at(baseS), End: &end}, {Name: "cooldown", Start: end, End: &cEnd}}
	} else {
		b.phases(baseS, loadS, coolS)
	}
	b.meta.Workload = &rundir.Workload{Name: "dgemm"}
	rng := rand.New(rand.NewPCG(21, 22))
	for it := 0; it < 18; it++ {
		from, to := baseS+100*float64(it), baseS+100*float64(it+1)
		rt := 90 + 0.02*gpu0Core.at((from+to)/2-baseS) + 0.01*rng.NormFloat64()
		b.meta.Workload.Iterations = append(b.meta.Workload.Iterations,
			rundir.Iteration{N: it, Start: b.at(from), End: b.at(to), RuntimeS: rt})
	}
	if sc.air {
		b.meta.Labels = map[string]string{"cooling": "air"}
	}
	for s := 0.0; s <= endS; s++ {
		if sc.gap && s >= 1000 && s < 1045 {
			continue
		}
		ts := b.at(s)
		if sc.backwards && s == 3000 {
			ts = b.at(2990)
		}
		core0 := math.Floor(rel(gpu0Core)(s)) // NVML reads whole degrees
		g0 := gpuPoint(ts, "0", core0, rel(gpu0Mem)(s), 100+200*boolf(s >= baseS && s < baseS+loadS))
		g1 := point.New("gpu", ts) // GPU 1 has no memory sensor
		g1.AddTag("host", "node1").AddTag("gpu", "1").AddTag("uuid", "GPU-1").AddTag("model", "NVIDIA H100 80GB HBM3")
		g1.AddFloat("temp_c", rel(gpu1Core)(s)+0.3*(2*rng.Float64()-1)).AddFloat("power_w", 90)
		b.write(g0, g1)
		cpu := rel(cpuBase)(s)
		for i, off := range []float64{-1.5, -0.5, 0.5, 1.5} {
			b.write(hwmonPoint(ts, "platform_coretemp_0", "temp"+strconv.Itoa(i+2), "Core "+strconv.Itoa(i), "cpu_core", cpu+off))
		}
		if int(s)%10 != 0 { // a flaky sensor at the mean: its absence must not move the mean
			b.write(hwmonPoint(ts, "platform_coretemp_0", "temp9", "Core 7", "cpu_core", cpu))
		}
		b.write(hwmonPoint(ts, "platform_coretemp_0", "temp1", "Package id 0", "cpu_package", cpu+3))
		nv := point.New("nvme", ts)
		nv.AddTag("host", "node1").AddTag("device", "nvme0").AddTag("model", "Samsung PM9A3").AddTag("sensor", "Composite")
		nv.AddFloat("temp_c", rel(nvmeM)(s))
		b.write(nv)
		if !sc.noTank {
			on, start, dur := pumpOn(s)
			tk := point.New("tank", ts)
			tk.AddTag("host", "node1").AddTag("tank", "pod1").AddTag("vendor", "submer")
			tk.AddFloat("coolant_temp_c", coolant.at(s-baseS)).AddFloat("water_in_c", 12).AddFloat("water_out_c", 12)
			rpm, diss, cons := 0.0, 0.0, 50.0
			if on {
				rpm, cons = 1500, 350
				diss = (heatA + heatB*coolant.at(start-baseS)) / (dur - 0.5)
			}
			tk.AddFloat("pump1_rpm", rpm).AddFloat("pump2_rpm", 0).AddFloat("dissipation_kw", diss).AddFloat("consumption_w", cons)
			tk.AddString("mode", "normal")
			b.write(tk)
		}
		if sc.air {
			extra := 150 + 100*boolf(s >= baseS && s < baseS+loadS) // fans: unaccounted by any component
			rapl := 80 + 40*boolf(s >= baseS && s < baseS+loadS)
			rp := point.New("rapl", ts)
			rp.AddTag("host", "node1").AddTag("zone", "package-0").AddTag("zone_id", "intel-rapl:0")
			rp.AddFloat("power_w", rapl)
			core := point.New("rapl", ts) // a subzone of the package: must not be subtracted twice
			core.AddTag("host", "node1").AddTag("zone", "core").AddTag("zone_id", "intel-rapl:0:0")
			core.AddFloat("power_w", rapl/2)
			pdu := point.New("pdu", ts)
			pdu.AddTag("host", "node1").AddTag("pdu", "rack1")
			pdu.AddFloat("power_w", 100+200*boolf(s >= baseS && s < baseS+loadS)+90+rapl+extra)
			b.write(rp, core, pdu)
		}
	}
	return b.done()
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func component(t *testing.T, rep *Report, id string) ComponentResult {
	t.Helper()
	for _, c := range rep.Components {
		if c.ID == id {
			return c
		}
	}
	var ids []string
	for _, c := range rep.Components {
		ids = append(ids, c.ID)
	}
	t.Fatalf("no component %s; have %v", id, ids)
	return ComponentResult{}
}

func val(t *testing.T, c ComponentResult, name string, p *float64) float64 {
	t.Helper()
	if p == nil {
		t.Fatalf("%s %s not computed: %s", c.ID, name, c.NotComputed[name])
	}
	return *p
}

func TestAnalyzeImmersedRunMatchesClosedForms(t *testing.T) {
	rep := Analyze(buildScenario(t, scenario{}), DefaultOptions())
	if len(rep.NotComputed) != 0 || len(rep.Notes) != 0 {
		t.Errorf("not computed %v, notes %v", rep.NotComputed, rep.Notes)
	}
	var ids []string
	for _, c := range rep.Components {
		ids = append(ids, c.ID)
	}
	if got := strings.Join(ids, " "); got != "gpu_core:0 gpu_core:1 gpu_mem:0 cpu:platform_coretemp_0 nvme:nvme0 coolant:pod1 water_in:pod1 water_out:pod1" {
		t.Errorf("components = %s", got)
	}

	// GPU 0 core, whole degrees.
	c := component(t, rep, "gpu_core:0")
	for _, f := range []struct {
		name string
		p    *float64
	}{{"idle_min_c", c.IdleMinC}, {"idle_mean_c", c.IdleMeanC}, {"idle_max_c", c.IdleMaxC}} {
		near(t, "gpu0 "+f.name, val(t, c, f.name, f.p), 35, 0)
	}
	top := math.Floor(gpu0Core.peak())
	tStar := math.Ceil(-gpu0Core.Tau * math.Log(1-(top-35)/40))
	near(t, "gpu0 max_c", val(t, c, "max_c", c.MaxC), top, 0)
	near(t, "gpu0 heat interval", val(t, c, "heat_interval_s_per_c", c.HeatIntervalSPerC), tStar/(top-35), 1e-9)
	// Cooling from the peak reading: back at or below 35 + 1 when
	// floor(T0 + A e^(-t/τ)) <= 36, i.e. T < 37.
	a := gpu0Core.peak() - 35
	near(t, "gpu0 return to idle", val(t, c, "return_to_idle_s", c.ReturnToIdleS), math.Ceil(gpu0Core.Tau*math.Log(a/2)), 1)

	// GPU 0 memory, exact readings.
	m := component(t, rep, "gpu_mem:0")
	near(t, "mem heat interval", val(t, m, "heat_interval_s_per_c", m.HeatIntervalSPerC), loadS/(gpu0Mem.peak()-40), 1e-9)
	want := 1 / lsSlopeExp(gpu0Mem.DT, gpu0Mem.Tau, 60)
	near(t, "mem steepest", val(t, m, "steepest_s_per_c", m.SteepestSPerC), want, want*0.01)
	near(t, "mem steepest at", val(t, m, "steepest_at_s", m.SteepestAtS), baseS, 0)
	near(t, "mem return", val(t, m, "return_to_idle_s", m.ReturnToIdleS), math.Ceil(gpu0Mem.Tau*math.Log((gpu0Mem.peak()-40)/1)), 0)
	wantLag := onsetTime(coolant, 0.1) - onsetTime(gpu0Mem, 0.1)
	near(t, "mem coolant lag", val(t, m, "coolant_lag_s", m.CoolantLagS), wantLag, 3)
	peakDiff := math.Inf(-1)
	for x := baseS; x <= endS; x++ {
		peakDiff = math.Max(peakDiff, rel(gpu0Mem)(x)-coolant.at(x-baseS))
	}
	near(t, "mem coolant peak difference", val(t, m, "coolant_peak_diff_c", m.CoolantDiffC), peakDiff, 1e-9)

	// The CPU chip: mean of the cores (offsets cancel, the flaky sensor
	// sits at the mean) with a ±1.5 °C band; the package sensor is left out.
	cp := component(t, rep, "cpu:platform_coretemp_0")
	if cp.Sensors != 5 {
		t.Errorf("cpu averages %d sensors, want 5 cores", cp.Sensors)
	}
	near(t, "cpu idle mean", val(t, cp, "idle_mean_c", cp.IdleMeanC), 40, 1e-9)
	near(t, "cpu heat interval", val(t, cp, "heat_interval_s_per_c", cp.HeatIntervalSPerC), loadS/(cpuBase.peak()-40), 1e-6)
	s := cp.Series
	k := 1234
	near(t, "cpu band low", s.Min[k], rel(cpuBase)(s.T[k])-1.5, 1e-9)
	near(t, "cpu band high", s.Max[k], rel(cpuBase)(s.T[k])+1.5, 1e-9)

	// GPU 1 has noise ±0.3 and saturates long before the end of the load:
	// its noisy maximum may come as soon as the curve is within 0.6 °C of
	// the top, at -τ ln(0.6/ΔT) after the load start. The study's definition
	// is that sensitive to noise on a plateau; the bounds say how much.
	g1 := component(t, rep, "gpu_core:1")
	hi := val(t, g1, "heat_interval_s_per_c", g1.HeatIntervalSPerC)
	lo, up := -gpu1Core.Tau*math.Log(0.6/gpu1Core.DT)/(gpu1Core.DT+0.35), loadS/(gpu1Core.DT-0.35)
	if hi < lo || hi > up {
		t.Errorf("gpu1 heat interval = %.2f s/°C, want within [%.2f, %.2f]", hi, lo, up)
	}

	// The coolant itself: heating delayed by 30 s; still rising at the end of the load.
	co := component(t, rep, "coolant:pod1")
	near(t, "coolant heat interval", val(t, co, "heat_interval_s_per_c", co.HeatIntervalSPerC), loadS/(coolant.at(loadS)-30), 1e-9)
	if co.NotComputed["coolant_lag_s"] != "not a hardware component" {
		t.Errorf("coolant lag against itself: %q", co.NotComputed["coolant_lag_s"])
	}
	w := component(t, rep, "water_in:pod1")
	if w.HeatIntervalSPerC != nil || !strings.Contains(w.NotComputed["heat_interval_s_per_c"], "above the idle mean") {
		t.Errorf("flat water: heat interval %v, reason %q", w.HeatIntervalSPerC, w.NotComputed["heat_interval_s_per_c"])
	}

	// Pump cycles.
	if len(rep.PumpCycles) != len(cycles) {
		t.Fatalf("%d pump cycles, want %d: %+v", len(rep.PumpCycles), len(cycles), rep.PumpCycles)
	}
	for i, pc := range rep.PumpCycles {
		start, end := cycles[i][0], math.Min(cycles[i][1], endS)
		near(t, "cycle start", pc.StartS, start, 0)
		near(t, "cycle duration", pc.DurationS, end-start, 0)
		if pc.Complete != (i < len(cycles)-1) {
			t.Errorf("cycle %d complete = %v", i, pc.Complete)
		}
		tStart := coolant.at(start - baseS)
		if pc.StartCoolantC == nil || pc.HeatRemovedKJ == nil || pc.PumpEnergyKJ == nil {
			t.Fatalf("cycle %d: %+v", i, pc)
		}
		near(t, "cycle start coolant", *pc.StartCoolantC, tStart, 1e-9)
		if pc.Complete {
			// Piecewise linear through 1 Hz readings: (D - 0.5) s at full value.
			near(t, "cycle heat", *pc.HeatRemovedKJ, heatA+heatB*tStart, 1e-6)
			near(t, "cycle pump energy", *pc.PumpEnergyKJ, 0.3*(end-start-0.5), 1e-9)
		}
	}
	f := rep.PumpCycleFit
	if f == nil || f.N != len(cycles)-1 {
		t.Fatalf("fit = %+v (%s)", f, rep.NotComputed["pump_cycle_fit"])
	}
	near(t, "fit slope", f.SlopeKJPerC, heatB, 1e-6)
	near(t, "fit intercept", f.InterceptKJ, heatA, 1e-4)
	near(t, "fit r2", f.R2, 1, 1e-9)

	// Cooling energy: the tank's consumption from the start of the load
	// until the slowest component (the coolant) is back at idle.
	ce := rep.CoolingEnergy
	if ce.Cooling != "immersion" || !ce.Normalised || ce.EnergyKJ == nil || ce.ToS == nil {
		t.Fatalf("cooling energy = %+v", ce)
	}
	latest := 0.0
	for _, c := range rep.Components {
		if c.DidNotRise {
			// The flat water never left idle: it has no return to time.
			if c.ReturnToIdleS != nil || !strings.Contains(c.NotComputed["return_to_idle_s"], "did not rise") {
				t.Errorf("%s did not rise but returns to idle %v (%q)", c.ID, c.ReturnToIdleS, c.NotComputed["return_to_idle_s"])
			}
			continue
		}
		latest = math.Max(latest, val(t, c, "return_to_idle_s", c.ReturnToIdleS))
	}
	near(t, "cooling until", *ce.ToS, baseS+loadS+latest, 0)
	coRet := coolant.Delay + coolant.Tau*math.Log((coolant.at(loadS+coolant.Delay)-30)/1)
	near(t, "slowest return is the coolant's", latest, coRet, 2)
	// Independent: the consumption schedule integrated second by second.
	wantJ := 0.0
	for x := *ce.FromS; x < *ce.ToS; x++ {
		c0, c1 := 50.0, 50.0
		if on, _, _ := pumpOn(x); on {
			c0 = 350
		}
		if on, _, _ := pumpOn(x + 1); on {
			c1 = 350
		}
		wantJ += (c0 + c1) / 2
	}
	near(t, "cooling energy", *ce.EnergyKJ, wantJ/1000, 1e-9)

	// Thermal slowdown: runtime = 90 + 0.02 T(mid) + noise.
	var sd *SlowdownResult
	for i := range rep.Slowdown {
		if rep.Slowdown[i].Component == "gpu_core:0" {
			sd = &rep.Slowdown[i]
		}
	}
	if sd == nil || sd.SlopeSPerC == nil || !sd.Significant || sd.N != 18 {
		t.Fatalf("slowdown = %+v", sd)
	}
	near(t, "slowdown slope", *sd.SlopeSPerC, 0.02, 0.004)
}

func TestAnalyzeWithoutBaselineSaysWhy(t *testing.T) {
	rep := Analyze(buildScenario(t, scenario{noBaseline: true}), DefaultOptions())
	if rep.NotComputed["phases"] != "the run records no baseline phase" {
		t.Errorf("phases: %q", rep.NotComputed["phases"])
	}
	c := component(t, rep, "gpu_mem:0")
	if c.IdleMeanC != nil || c.NotComputed["idle_mean_c"] != "no baseline phase" {
		t.Errorf("idle mean %v, reason %q", c.IdleMeanC, c.NotComputed["idle_mean_c"])
	}
	if c.HeatIntervalSPerC != nil || !strings.Contains(c.NotComputed["heat_interval_s_per_c"], "no baseline phase") {
		t.Errorf("heat interval %v, reason %q", c.HeatIntervalSPerC, c.NotComputed["heat_interval_s_per_c"])
	}
	if c.CoolantLagS != nil || !strings.Contains(c.NotComputed["coolant_lag_s"], "no baseline") {
		t.Errorf("lag %v, reason %q", c.CoolantLagS, c.NotComputed["coolant_lag_s"])
	}
	// What needs no baseline is still there.
	near(t, "max_c", val(t, c, "max_c", c.MaxC), gpu0Mem.peak(), 1e-9)
	if c.SteepestSPerC == nil || c.CoolantDiffC == nil {
		t.Errorf("steepest %v, coolant difference %v: both need no baseline", c.SteepestSPerC, c.CoolantDiffC)
	}
	ce := rep.CoolingEnergy
	if ce.Normalised || ce.EnergyKJ == nil || *ce.ToS != endS || len(ce.NotNormalised) == 0 {
		t.Errorf("cooling energy without return-to-idle times: %+v", ce)
	}
}

func TestAnalyzeAirCooledRunWithoutTank(t *testing.T) {
	rep := Analyze(buildScenario(t, scenario{noTank: true, air: true}), DefaultOptions())
	if rep.NotComputed["pump_cycles"] != "no tank recorded (no tank points)" || len(rep.PumpCycles) != 0 {
		t.Errorf("pump cycles %v: %q", rep.PumpCycles, rep.NotComputed["pump_cycles"])
	}
	c := component(t, rep, "gpu_core:0")
	if c.CoolantDiffC != nil || !strings.Contains(c.NotComputed["coolant_peak_diff_c"], "not an immersed run") {
		t.Errorf("coolant difference %v: %q", c.CoolantDiffC, c.NotComputed["coolant_peak_diff_c"])
	}
	ce := rep.CoolingEnergy
	if ce.Cooling != "air" || ce.EnergyKJ == nil {
		t.Fatalf("cooling energy = %+v", ce)
	}
	near(t, "baseline unaccounted", *ce.BaselineUnaccountedW, 150, 1e-9)
	// 100 W of fans above idle for the load, from its first reading to the
	// last (1799 s at full value plus a half second ramp down), at 2 %.
	near(t, "air cooling energy", *ce.EnergyKJ, 0.02*(100*1799+50)/1000, 1e-9)
}

func TestAnalyzeGaps(t *testing.T) {
	rep := Analyze(buildScenario(t, scenario{gap: true}), DefaultOptions())
	m := component(t, rep, "gpu_mem:0")
	// A 45 s hole in the load: the heat interval does not care, the
	// steepest rise is still the first window (the hole is at 1000 s).
	near(t, "heat interval across a gap", val(t, m, "heat_interval_s_per_c", m.HeatIntervalSPerC), loadS/(gpu0Mem.peak()-40), 1e-9)
	if m.SteepestSPerC == nil {
		t.Errorf("steepest: %s", m.NotComputed["steepest_s_per_c"])
	}
	if rep.CoolingEnergy.GapS < 45 {
		t.Errorf("cooling energy gap %v s, want the 45 s hole counted", rep.CoolingEnergy.GapS)
	}
}

func TestAnalyzeBackwardsClock(t *testing.T) {
	rep := Analyze(buildScenario(t, scenario{backwards: true}), DefaultOptions())
	// At 3000 s every series stepped back 10 s: nothing is computed on a
	// clock that went backwards, and the reason says so.
	m := component(t, rep, "gpu_mem:0")
	if m.IdleMeanC != nil || !strings.Contains(m.NotComputed["idle_mean_c"], "timestamps go backwards 1 times") {
		t.Errorf("backwards clock: idle %v, reason %q", m.IdleMeanC, m.NotComputed["idle_mean_c"])
	}
}

func TestAnalyzeBadRuns(t *testing.T) {
	opts := DefaultOptions()
	t.Run("empty", func(t *testing.T) {
		b := newRun(t)
		b.phases(60, 60, 60)
		rep := Analyze(b.done(), opts)
		if len(rep.Components) != 0 || len(rep.Notes) != 1 || rep.Notes[0] != "the run recorded no points" {
			t.Errorf("components %v notes %v", rep.Components, rep.Notes)
		}
		if rep.NotComputed["pump_cycles"] == "" || rep.CoolingEnergy.NotComputed == "" || rep.CoolingEnergy.EnergyKJ != nil {
			t.Errorf("empty run: not computed %v, cooling %+v", rep.NotComputed, rep.CoolingEnergy)
		}
	})
	t.Run("no load phase", func(t *testing.T) {
		b := newRun(t)
		b.phases(600, 0, 0)
		for s := 0.0; s <= 900; s++ {
			b.write(gpuPoint(b.at(s), "0", 40, 50, 100))
		}
		rep := Analyze(b.done(), opts)
		c := component(t, rep, "gpu_core:0")
		near(t, "idle mean without load", val(t, c, "idle_mean_c", c.IdleMeanC), 40, 0)
		for _, k := range []string{"max_c", "heat_interval_s_per_c", "steepest_s_per_c", "return_to_idle_s"} {
			if c.NotComputed[k] != "no load phase" {
				t.Errorf("%s: %q, want \"no load phase\"", k, c.NotComputed[k])
			}
		}
		if rep.CoolingEnergy.NotComputed != "no load phase" || rep.NotComputed["phases"] != "the run records no load phase" {
			t.Errorf("cooling %q, phases %q", rep.CoolingEnergy.NotComputed, rep.NotComputed["phases"])
		}
	})
	t.Run("no phases, load never ended", func(t *testing.T) {
		b := newRun(t)
		b.meta.Phases = []rundir.Phase{{Name: "baseline", Start: b.at(0)}, {Name: "load", Start: b.at(60)}}
		for s := 0.0; s <= 300; s++ {
			b.write(gpuPoint(b.at(s), "0", rel(gpu0Core)(s+540), 50, 100))
		}
		rep := Analyze(b.done(), opts)
		c := component(t, rep, "gpu_core:0")
		if c.NotComputed["return_to_idle_s"] != "the load phase never ended" || rep.Phases.Load == nil || !rep.Phases.Load.Open {
			t.Errorf("open load: %q, phases %+v", c.NotComputed["return_to_idle_s"], rep.Phases)
		}
		if c.HeatIntervalSPerC == nil {
			t.Errorf("heat interval of an open load: %s", c.NotComputed["heat_interval_s_per_c"])
		}
	})
	t.Run("NaN and garbage lines", func(t *testing.T) {
		b := newRun(t)
		b.phases(60, 60, 60)
		for s := 0.0; s <= 180; s++ {
			b.write(gpuPoint(b.at(s), "0", 40+boolf(s >= 70)*10, 50, 100))
		}
		b.done()
		f, err := os.OpenFile(filepath.Join(b.dir, rundir.PointsFile), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		ts := strconv.FormatInt(b.at(200).UnixNano(), 10)
		fmt.Fprintf(f, "gpu,gpu=0,host=node1 temp_c=NaN %s\n\x00\x01\ngpu,gpu=0,host=node1 temp_c=\"hot\" %s\n", ts, ts)
		f.Close()
		r, err := Load(b.dir)
		if err != nil {
			t.Fatal(err)
		}
		rep := Analyze(r, opts)
		if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "2 lines of points.lp could not be decoded") {
			t.Errorf("notes = %v", rep.Notes)
		}
		// The good readings are analysed as before.
		c := component(t, rep, "gpu_core:0")
		near(t, "heat interval beside bad lines", val(t, c, "heat_interval_s_per_c", c.HeatIntervalSPerC), 10.0/10, 1e-9)
	})
}

// An AMD chip (k10temp) has no per-core sensors: its mean is over the CCD
// sensors, never the offset Tctl.
func TestCPUChipK10tempAveragesCCDs(t *testing.T) {
	b := newRun(t)
	b.phases(60, 60, 60)
	for s := 0.0; s <= 180; s++ {
		heat := 10 * boolf(s >= 60 && s < 120)
		for _, r := range []struct {
			sensor, label string
			c             float64
		}{{"temp1", "Tctl", 77}, {"temp2", "Tdie", 50}, {"temp3", "Tccd1", 48}, {"temp4", "Tccd2", 52}} {
			p := point.New("hwmon", b.at(s))
			p.AddTag("chip", "pci0000:00_0000:00:18.3").AddTag("chip_name", "k10temp").AddTag("sensor", r.sensor).AddTag("label", r.label).AddTag("class", "cpu")
			p.AddFloat("temp_c", r.c+heat)
			b.write(p)
		}
	}
	rep := Analyze(b.done(), DefaultOptions())
	c := component(t, rep, "cpu:pci0000:00_0000:00:18.3")
	if c.Sensors != 2 {
		t.Errorf("averaged %d sensors, want the 2 CCDs", c.Sensors)
	}
	near(t, "idle mean", val(t, c, "idle_mean_c", c.IdleMeanC), 50, 0)
	near(t, "band low", c.Series.Min[0], 48, 0)
	near(t, "band high", c.Series.Max[0], 52, 0)
}
