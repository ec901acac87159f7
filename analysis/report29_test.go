package analysis

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/point"
)

// PoweredEnd trims a load only where the power shows the work ended: a
// tail near idle, at least minTrimS long and at most a tenth of the load.
func TestPoweredEndTrimsOnlyAnUnpoweredTail(t *testing.T) {
	load := Span{Start: 0, End: 240}
	for _, tc := range []struct {
		name   string
		power  func(s float64) float64
		wantOK bool
		wantS  float64
	}{
		{"80 W to 39 W 7 s before the end (the study's STREAM run)", func(s float64) float64 {
			if s >= 233 {
				return 39
			}
			return 80
		}, true, 233},
		{"steady to the end", func(float64) float64 { return 80 }, false, 0},
		{"a 2 s ramp-down is not the work ending", func(s float64) float64 {
			if s >= 238.5 {
				return 30
			}
			return 80
		}, false, 0},
		{"half power for the last third is a load in two parts", func(s float64) float64 {
			if s >= 160 {
				return 35
			}
			return 80
		}, false, 0},
		{"a dip in the middle", func(s float64) float64 {
			if s >= 100 && s < 110 {
				return 25
			}
			return 80
		}, false, 0},
		{"power at idle throughout: nothing to trim", func(float64) float64 { return 25 }, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ts, vs []float64
			for s := 0.0; s <= 240; s++ {
				ts, vs = append(ts, s), append(vs, tc.power(s))
			}
			end, ok := PoweredEnd(ts, vs, load, 25)
			if ok != tc.wantOK || ok && end != tc.wantS {
				t.Errorf("PoweredEnd = %v, %v; want %v, %v", end, ok, tc.wantS, tc.wantOK)
			}
		})
	}
}

// stepRun writes a GPU at 80 W through a 240 s load (61–301 s) whose power
// falls to 39 W for its last 7 s, its core rising 20 °C with τ 30 s while
// powered and cooling with τ 15 s after, and a tank coolant that rises
// 0.37 °C; the GPU records slowdown_c 60 °C and its clock event reasons
// (SW power cap while powered).
func stepRun(t *testing.T) *Run {
	b := newRun(t)
	b.phases(61, 240, 120)
	const loadStart, powerEnd = 61.0, 294.0
	temp := func(s float64) float64 {
		switch {
		case s < loadStart:
			return 40
		case s < powerEnd:
			return 40 + 20*(1-math.Exp(-(s-loadStart)/30))
		}
		top := 20 * (1 - math.Exp(-(powerEnd-loadStart)/30))
		return 40 + top*math.Exp(-(s-powerEnd)/15)
	}
	for s := 0.0; s <= 421; s++ {
		p, reasons := 25.0, int64(0)
		switch {
		case s >= loadStart && s < powerEnd:
			p, reasons = 80, 4
		case s >= powerEnd && s < 301:
			p = 39
		}
		g := gpuPoint(b.at(s), "0", math.Round(temp(s)), math.Round(temp(s)), p)
		g.AddFloat("slowdown_c", 60).AddFloat("mem_max_c", 95).AddInt("clock_event_reasons", reasons)
		tk := point.New("tank", b.at(s))
		tk.AddTag("host", "node1").AddTag("tank", "pod1")
		tk.AddFloat("coolant_temp_c", 20.5+0.37*math.Max(0, math.Min(s, powerEnd)-loadStart)/(powerEnd-loadStart)).AddFloat("setpoint_c", 35)
		b.write(g, tk)
	}
	return b.done()
}

// The study's case: the job ends before its phase. The load is trimmed to
// its powered span and said so; the fit is made (no false "the cooling
// changed"); the blind spot gives both rises over the same span and when
// the GPU came within 5 °C of its slowdown limit while the coolant never
// moved; the tank's readings make the run immersed.
func TestAnalyzeTrimsALoadWhoseWorkEndedEarlyAndStatesTheBlindSpot(t *testing.T) {
	rep := Analyze(stepRun(t), DefaultOptions())
	if l := rep.Phases.Load; l == nil || l.End != 294 || rep.Phases.LoadRecordedEndS == nil || *rep.Phases.LoadRecordedEndS != 301 {
		t.Fatalf("load %+v, recorded end %v; want trimmed to 61–294 s from 301 s", l, rep.Phases.LoadRecordedEndS)
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "7 s before the load phase ended") {
		t.Errorf("notes do not say the load was trimmed: %q", rep.Notes)
	}
	if rep.Run.Cooling != "immersion" {
		t.Errorf("cooling %q with a tank recorded, want immersion", rep.Run.Cooling)
	}
	core := component(t, rep, "gpu_core:0")
	if core.LoadFit == nil {
		t.Errorf("no load fit: %s", core.NotComputed["load_fit"])
	} else if math.Abs(core.LoadFit.TauS-30) > 3 {
		t.Errorf("τ = %.1f s, want about 30 s", core.LoadFit.TauS)
	}
	if core.Limit == nil || core.Limit.Field != "slowdown_c" || core.MarginC == nil || math.Abs(*core.MarginC-(60-60)) > 1.01 {
		t.Errorf("limit %+v margin %v; want slowdown_c 60 °C, margin about 0", core.Limit, core.MarginC)
	}
	if th := core.Throttle; th == nil || th.PowerS != 233 || th.ThermalS != 0 || th.Reasons["sw_power_cap"] != 233 {
		t.Errorf("throttle %+v; want 233 s of sw_power_cap, no thermal", core.Throttle)
	}
	if core.Rise63S == nil || math.Abs(*core.Rise63S-30) > 3 {
		t.Errorf("time to 63 %% = %v, want about τ = 30 s", core.Rise63S)
	}
	co := component(t, rep, "coolant:pod1")
	if !co.DidNotRise || co.ReturnToIdleS != nil {
		t.Errorf("coolant rising 0.37 °C: did_not_rise %v, return to idle %v", co.DidNotRise, co.ReturnToIdleS)
	}
	var b *BlindSpot
	for i := range rep.BlindSpot {
		if rep.BlindSpot[i].Component == "gpu_core:0" {
			b = &rep.BlindSpot[i]
		}
	}
	if b == nil {
		t.Fatalf("no blind spot for gpu_core:0: %+v (%s)", rep.BlindSpot, rep.NotComputed["blind_spot"])
	}
	if b.FromS != 61 || b.ToS != 294 || math.Abs(b.RiseC-20) > 0.6 || math.Abs(b.CoolantRiseC-0.37) > 0.01 {
		t.Errorf("blind spot %+v; want rises about 20 and 0.37 °C over 61–294 s", b)
	}
	// 55 °C (60 − 5) in whole degrees: 40 + 20·(1 − e^(−x/30)) reaches
	// 54.5 at x = 30·ln(20/5.5) = 38.7 s, read at the next second, 100 s.
	if b.NearLimitAtS == nil || *b.NearLimitAtS != 100 {
		t.Errorf("near limit at %v, want 100 s", ptrStr(b.NearLimitAtS))
	}
	if b.CoolantMovedAtS != nil || b.ControllerC == nil || *b.ControllerC != 35 || b.ControllerReachedAtS != nil {
		t.Errorf("coolant moved at %v, controller %v reached at %v; want never, 35 °C, never", b.CoolantMovedAtS, b.ControllerC, b.ControllerReachedAtS)
	}
	if s := b.Sentence(); !strings.Contains(s, "before the coolant had moved") || !strings.Contains(s, "rose 0.37 °C") {
		t.Errorf("sentence %q", s)
	}
	// The option overrides what the recording shows.
	o := DefaultOptions()
	o.Cooling = "air"
	if rep := Analyze(stepRun(t), o); rep.Run.Cooling != "air" {
		t.Errorf("--cooling air gives %q", rep.Run.Cooling)
	}
}

// A fit whose τ interval spans over a factor 10 is not a measurement.
func TestDeterminedRefusesAWideTimeConstant(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		ok     bool
	}{{31.2, 36.7, true}, {10, 100, true}, {28, 1610, false}, {0, 5, false}} {
		err := determined(tc.lo, tc.hi)
		if (err == nil) != tc.ok {
			t.Errorf("determined(%v, %v) = %v, want ok %v", tc.lo, tc.hi, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "not determined") {
			t.Errorf("reason %q does not say not determined", err)
		}
	}
}

// The effect size: 0.0011 s/°C on a 2.0 s iteration is +0.55 % per 10 °C.
func TestEffectGivesRuntimeChangePer10C(t *testing.T) {
	x := []float64{50, 55, 60, 65, 70}
	y := []float64{2.0 - 0.011 + 0.0001, 2.0 - 0.0055, 2.0, 2.0 + 0.0055 - 0.0001, 2.0 + 0.011}
	f, err := LinearFit(x, y)
	if err != nil {
		t.Fatal(err)
	}
	var sr SlowdownResult
	effect(&sr, f, x, y, 0.05)
	if sr.RuntimeChangePctPer10C == nil || math.Abs(*sr.RuntimeChangePctPer10C-0.55) > 0.01 {
		t.Fatalf("runtime change %v %%/10 °C, want 0.55", sr.RuntimeChangePctPer10C)
	}
	if !(*sr.RuntimeChangeLoPctPer10C < 0.55 && *sr.RuntimeChangeHiPctPer10C > 0.55) || *sr.TempSpanC != 20 {
		t.Errorf("interval [%v, %v], span %v", *sr.RuntimeChangeLoPctPer10C, *sr.RuntimeChangeHiPctPer10C, *sr.TempSpanC)
	}
}

// compare sets each workload metric's median side by side, with no
// temperature at all.
func TestCompareWorkloadsWithoutTemperatures(t *testing.T) {
	mk := func(name string, med float64) *Report {
		return &Report{Workload: WorkloadResult{Name: "cpu-stream", Metrics: []MetricSummary{{Name: name, N: 10, Median: med}}}}
	}
	cmp := Compare([]*Report{mk("triad_bytes_per_s", 20e9), mk("triad_bytes_per_s", 19e9)})
	if len(cmp.Workload) != 1 {
		t.Fatalf("workload comparison %+v", cmp.Workload)
	}
	mc := cmp.Workload[0]
	if mc.ChangePct[0] != nil || mc.ChangePct[1] == nil || math.Abs(*mc.ChangePct[1]+5) > 1e-9 {
		t.Errorf("change %v, want nil, -5 %%", mc.ChangePct)
	}
	if got := mc.Text(cmp.Labels, 1); !strings.Contains(got, "-5.0 % in B against A") {
		t.Errorf("text %q", got)
	}
}

func ptrStr(p *float64) string {
	if p == nil {
		return "never"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}
