package sim

import (
	"math"
	"strings"
	"testing"
	"time"
)

func newModel(t *testing.T, p Params, seed uint64) *Model {
	t.Helper()
	m, err := New(p, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The energy books: over hours of changing load, pump cycles, chilled water
// connected and disconnected and a spell of demo mode, the heat that went in
// minus the heat that went out equals m·c·ΔT of the coolant, with m·c
// computed here from volume, density and specific heat.
func TestEnergyBalance(t *testing.T) {
	p := DefaultParams()
	p.SetpointC = 30
	m := newModel(t, p, 1)
	prof, err := ParseProfile(strings.NewReader("0 500\n1h 6000\n3h 0\n4h 3000\n"))
	if err != nil {
		t.Fatal(err)
	}
	m.FollowProfile(prof)
	mc := p.VolumeL / 1000 * p.DensityKgM3 * p.SpecificHeatJKgK
	t0 := m.Truth().CoolantC
	var in, out float64
	h := p.Step.Seconds()
	for m.Time() < 6*time.Hour {
		switch m.Time() {
		case 2 * time.Hour:
			m.SetChilledWater(false)
		case 4 * time.Hour:
			m.SetDemo(true)
		case 5 * time.Hour:
			m.SetDemo(false)
			m.SetChilledWater(true)
		}
		m.Advance(p.Step)
		tr := m.Truth()
		in += (tr.QITW + tr.QPumpW) * h
		out += (tr.QHXW + tr.QAmbientW) * h
	}
	tr := m.Truth()
	stored := mc * (tr.CoolantC - t0)
	if math.Abs(stored) < 1e6 {
		t.Fatalf("scenario too tame: stored only %.3g J", stored)
	}
	rel := math.Abs((in-out)-stored) / math.Abs(stored)
	t.Logf("heat in %.6g J - out %.6g J vs m·c·ΔT %.6g J: %.2g%% apart", in, out, stored, 100*rel)
	if rel > 0.01 {
		t.Errorf("heat in %.6g J - out %.6g J = %.6g J, but m·c·ΔT = %.6g J (%.3g%% off)", in, out, in-out, stored, 100*rel)
	}
	// Every term took part.
	if tr.EnergyHXJ <= 0 || tr.EnergyPumpJ <= 0 || tr.EnergyAmbientJ == 0 {
		t.Errorf("a term stayed idle: %+v", tr)
	}
}

// With no way out for heat (water disconnected, no wall losses, pumps off),
// the coolant warms at exactly P/(m·c).
func TestAdiabaticHeatingRate(t *testing.T) {
	p := DefaultParams()
	p.AmbientUAWK = 0
	p.MinCirculationFor = 0
	p.SetpointC = 99
	p.LoadW = 2400
	m := newModel(t, p, 1)
	m.SetChilledWater(false)
	m.Advance(2 * time.Hour)
	mc := p.VolumeL / 1000 * p.DensityKgM3 * p.SpecificHeatJKgK
	want := p.InitialC + 2400*7200/mc
	if got := m.Truth().CoolantC; math.Abs(got-want) > 0.01*(want-p.InitialC) {
		t.Errorf("after 2 h at 2.4 kW: %.4f °C, want %.4f °C", got, want)
	}
}

// In steady state with the pumps running, the water carries away what the
// load and pumps put in, less the wall losses: C_w·(T_w,out − T_w,in) read
// from the pod's display matches within 2 %.
func TestSteadyStateWaterSideBalance(t *testing.T) {
	p := DefaultParams()
	p.SetpointC = 0 // pumps always on
	p.HysteresisC = 0
	p.WaterInDriftC = 0
	p.LoadW = 8000
	m := newModel(t, p, 3)
	m.Advance(24 * time.Hour)
	tr := m.Truth()
	rt := m.RealTime().Data
	cw := p.WaterFlowLpm / 60000 * 1000 * 4186
	fromWater := cw * (rt.WTO - rt.WTI)
	want := tr.QITW + tr.QPumpW - tr.QAmbientW
	if math.Abs(fromWater-want) > 0.02*want {
		t.Errorf("water side %.0f W (wti %.1f, wto %.1f), heat in less losses %.0f W", fromWater, rt.WTI, rt.WTO, want)
	}
	if math.Abs(rt.DissipationW-want) > 0.02*want {
		t.Errorf("dissipationW %.0f, want about %.0f", rt.DissipationW, want)
	}
}

// The pumps start at the setpoint and stop at setpoint − hysteresis.
func TestSetpointHysteresis(t *testing.T) {
	p := DefaultParams()
	p.SetpointC, p.HysteresisC = 30, 2
	p.InitialC = 29
	p.LoadW = 4000
	p.MinCirculationFor = 0
	m := newModel(t, p, 1)
	running := m.Truth().PumpsRunning
	starts, stops := 0, 0
	for m.Time() < 6*time.Hour {
		before := m.Truth().CoolantC
		m.Advance(p.Step)
		tr := m.Truth()
		if tr.PumpsRunning != running {
			if tr.PumpsRunning {
				starts++
				if before < 30-0.05 {
					t.Errorf("pumps started at %.2f °C, below the 30 °C setpoint", before)
				}
			} else {
				stops++
				if before > 28+0.05 {
					t.Errorf("pumps stopped at %.2f °C, above setpoint − hysteresis (28 °C)", before)
				}
			}
			running = tr.PumpsRunning
		}
		if tr.CoolantC > 30.5 || (m.Time() > time.Hour && tr.CoolantC < 27.5) {
			t.Fatalf("coolant at %.2f °C escaped the 28-30 °C band at %v", tr.CoolantC, m.Time())
		}
	}
	if starts < 3 || stops < 3 {
		t.Errorf("%d starts and %d stops in 6 h, want a cycling controller", starts, stops)
	}
}

// Idle and cool, the pumps still run 5 min in every 30.
func TestMinimumCirculation(t *testing.T) {
	p := DefaultParams()
	m := newModel(t, p, 1) // 25 °C, setpoint 40, no load
	var runs []time.Duration
	var on time.Duration
	prev := false
	for m.Time() < 2*time.Hour+2*time.Minute { // runs start at 25, 55, 85 and 115 min
		m.Advance(p.Step)
		tr := m.Truth()
		if tr.PumpsRunning && !prev {
			on = m.Time()
		}
		if !tr.PumpsRunning && prev {
			runs = append(runs, on, m.Time()-on)
		}
		if tr.PumpsRunning && !tr.MinCirculation {
			t.Fatalf("pumps on demand at %.1f °C below a 40 °C setpoint", tr.CoolantC)
		}
		prev = tr.PumpsRunning
	}
	if len(runs) != 8 {
		t.Fatalf("runs (start, length) %v: want 4 in 2 h 2 min", runs)
	}
	for i := 0; i < len(runs); i += 2 {
		if d := runs[i+1]; d < 5*time.Minute-p.Step || d > 5*time.Minute+p.Step {
			t.Errorf("run %d lasted %v, want 5m", i/2, d)
		}
		if i > 0 {
			if gap := runs[i] - runs[i-2]; gap < 30*time.Minute-p.Step || gap > 30*time.Minute+p.Step {
				t.Errorf("runs %d and %d start %v apart, want 30m", i/2-1, i/2, gap)
			}
		}
	}
}

// Demo mode: the display shows pumps running, flow and mode normal; nothing
// circulates, so the coolant heats while a normal pod would hold it.
func TestDemoModeStopsCirculationBehindANormalDisplay(t *testing.T) {
	p := DefaultParams()
	p.SetpointC = 30
	p.InitialC = 35
	p.LoadW = 5000
	normal := newModel(t, p, 1)
	demo := newModel(t, p, 1)
	demo.SetDemo(true)
	normal.Advance(time.Hour)
	demo.Advance(time.Hour)
	d := demo.RealTime().Data
	if d.Pump1Status != 1 || d.Pump2Status != 1 || d.Pump1RPM < 2000 || d.CF < 100 || d.Mode != "normal" || !d.Demo {
		t.Errorf("demo display does not look normal: %+v", d)
	}
	if tr := demo.Truth(); tr.PumpsRunning || !tr.PumpsCommanded {
		t.Errorf("demo truth: running %v commanded %v, want stopped but commanded", tr.PumpsRunning, tr.PumpsCommanded)
	}
	tn, td := normal.Truth().CoolantC, demo.Truth().CoolantC
	if !(td > 35+5 && tn < 31) {
		t.Errorf("after 1 h at 5 kW: demo pod %.1f °C, normal pod %.1f °C; want the demo pod hot and the normal one held", td, tn)
	}
	if d.DissipationW > 100 {
		t.Errorf("demo pod dissipates %.0f W with no circulation", d.DissipationW)
	}
}

func TestSeedMakesRunsReproducible(t *testing.T) {
	run := func(seed uint64) RealTimeData {
		m := newModel(t, DefaultParams(), seed)
		m.SetLoad(3000)
		m.Advance(90 * time.Minute)
		return m.RealTime().Data
	}
	a, b, c := run(7), run(7), run(8)
	if a.Temperature != b.Temperature || a.WTI != b.WTI || a.CPU0Temp != b.CPU0Temp || a.Pump1RPM != b.Pump1RPM {
		t.Errorf("same seed, different pods:\n%+v\n%+v", a, b)
	}
	if a.WTI == c.WTI && a.Temperature == c.Temperature && a.CPU0Temp == c.CPU0Temp {
		t.Errorf("seeds 7 and 8 gave identical pods: %+v", a)
	}
}

func TestWaterInletStaysInItsBand(t *testing.T) {
	m := newModel(t, DefaultParams(), 42)
	for m.Time() < 12*time.Hour {
		m.Advance(time.Minute)
		if w := m.Truth().WaterInC; w < 10 || w > 12 {
			t.Fatalf("water inlet %.2f °C left 10-12 °C at %v", w, m.Time())
		}
	}
}

func TestParamsRefused(t *testing.T) {
	for name, mut := range map[string]func(*Params){
		"volume":   func(p *Params) { p.VolumeL = 0 },
		"fraction": func(p *Params) { p.PumpHeatFraction = 2 },
		"step":     func(p *Params) { p.Step = 0 },
		"nan":      func(p *Params) { p.UAWK = math.NaN() },
		"unit":     func(p *Params) { p.WaterFlowUnit = "gpm" },
		"circ":     func(p *Params) { p.MinCirculationFor = time.Hour },
	} {
		p := DefaultParams()
		mut(&p)
		if _, err := New(p, 1); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestEffectiveness(t *testing.T) {
	// Balanced streams: ε = NTU/(1+NTU); one stream infinite: ε = 1 − e^−NTU.
	if e := effectiveness(1000, 1000, 1000); math.Abs(e-0.5) > 1e-9 {
		t.Errorf("balanced NTU 1: %v", e)
	}
	if e := effectiveness(1000, 1000, 1e12); math.Abs(e-(1-math.Exp(-1))) > 1e-6 {
		t.Errorf("Cr→0 NTU 1: %v", e)
	}
	if e := effectiveness(1000, 0, 1000); e != 0 {
		t.Errorf("no flow: %v", e)
	}
}
