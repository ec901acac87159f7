// Package sim is a physical model of a single-phase immersion cooling (SPLIC)
// tank and an HTTP server that presents it through the Submer SmartPod
// /api/realTime API, for tests, demos and what-if studies (`heatsink
// tank-sim`).
//
// # Model
//
// The coolant is one lumped thermal mass at a uniform temperature T (a
// well-stirred bath; the pod's own display shows one "temperature"):
//
//	C = V·ρ·c                                       heat capacity, J/K
//	C·dT/dt = Q_it + Q_pump − Q_hx − Q_amb          energy balance, W
//
// with
//
//	Q_it   = P_it                                   the immersed IT load (all of it becomes heat)
//	Q_pump = f_p · n_run · P_pump                   pump work dissipated in the coolant, only
//	                                                while the pumps physically run
//	Q_hx   = ε · C_min · (T − T_w,in)               the plate heat exchanger to facility
//	                                                chilled water, while coolant circulates and
//	                                                the water is connected (else 0)
//	Q_amb  = UA_amb · (T − T_amb)                   losses through the tank's walls and lid
//
// The heat exchanger is counter-flow, rated by the ε-NTU method with the
// coolant stream C_c = ṁ_c·c (ṁ_c from the running pumps' flow) and the
// water stream C_w = ṁ_w·c_w:
//
//	C_min = min(C_c, C_w), C_r = C_min / C_max, NTU = UA / C_min
//	ε = (1 − exp(−NTU(1 − C_r))) / (1 − C_r·exp(−NTU(1 − C_r)))   (C_r < 1)
//	ε = NTU / (1 + NTU)                                             (C_r = 1)
//
// so the water leaves at T_w,out = T_w,in + Q_hx/C_w and the coolant comes
// back from the exchanger at T − Q_hx/C_c.
//
// Between changes of the inputs (one integration step), the balance is the
// linear equation dT/dt = a − b·T with b = (k + UA_amb)/C, k = ε·C_min (or 0),
// and a = (Q_it + Q_pump + k·T_w,in + UA_amb·T_amb)/C. It is integrated
// exactly, T(t+h) = T∞ + (T − T∞)·exp(−b·h) with T∞ = a/b, and the heat each
// term moved in the step is its exact integral, so the energy books close:
// ∫(Q_in − Q_out)dt = C·ΔT to rounding.
//
// # Controller
//
// The pumps run on demand when T ≥ setpoint and stop when T ≤ setpoint −
// hysteresis. When they have been idle for MinCirculationEvery −
// MinCirculationFor, the controller runs them for MinCirculationFor anyway
// (the vendor's minimum circulation, 5 min every 30 min by default).
//
// Demo mode reproduces the failure the reference study found: the pumps stop
// physically, but the controller's display (the API) still shows pump status,
// rpm, coolant flow and consumption as commanded, and mode "normal"; only the
// demo flag and the physics (rising coolant, no dissipation) give it away.
package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Physical constants of water, the facility side of the heat exchanger.
const (
	waterDensity      = 1000.0 // kg/m³
	waterSpecificHeat = 4186.0 // J/(kg·K)
)

// Params are the tank's physical constants and its controller's settings.
// Zero fields take the defaults of DefaultParams.
type Params struct {
	VolumeL          float64 // coolant volume, L
	DensityKgM3      float64 // coolant density, kg/m³
	SpecificHeatJKgK float64 // coolant specific heat, J/(kg·K)

	UAWK          float64 // heat exchanger conductance, W/K
	WaterInC      float64 // mean chilled-water inlet temperature, °C (drifts ±WaterInDriftC)
	WaterInDriftC float64 // bound of the inlet's slow random drift, K
	WaterFlowLpm  float64 // chilled-water flow while connected, L/min

	Pumps            int     // number of pumps (run together)
	PumpFlowLpm      float64 // coolant flow per running pump, L/min
	PumpPowerW       float64 // electrical power per running pump, W
	PumpHeatFraction float64 // share of pump power that ends as heat in the coolant
	PumpRPM          float64 // speed shown for a running pump

	SetpointC           float64       // pumps start at or above this, °C
	HysteresisC         float64       // and stop at or below setpoint − this, K
	AlarmC              float64       // alarm threshold shown by the API, °C
	MinCirculationEvery time.Duration // minimum-circulation period
	MinCirculationFor   time.Duration // minimum-circulation run length

	AmbientC    float64 // room temperature, °C
	AmbientUAWK float64 // tank walls' conductance to the room, W/K
	ControllerW float64 // the pod's own electronics, W (part of consumption)

	InitialC float64       // coolant temperature at t = 0, °C
	LoadW    float64       // IT load at t = 0, W
	Step     time.Duration // integration step

	// WaterFlowUnit is how the API reports wf: "L/min" or "m3/h" (firmware
	// versions differ).
	WaterFlowUnit string
}

// DefaultParams describe a SmartPod-sized tank of a synthetic (PAO-based)
// dielectric coolant: 600 L at 830 kg/m³ and 2.2 kJ/(kg·K), about 1.1 MJ/K.
func DefaultParams() Params {
	return Params{
		VolumeL: 600, DensityKgM3: 830, SpecificHeatJKgK: 2200,
		UAWK: 1500, WaterInC: 11, WaterInDriftC: 1, WaterFlowLpm: 30,
		Pumps: 2, PumpFlowLpm: 60, PumpPowerW: 180, PumpHeatFraction: 0.8, PumpRPM: 2900,
		SetpointC: 40, HysteresisC: 2, AlarmC: 55,
		MinCirculationEvery: 30 * time.Minute, MinCirculationFor: 5 * time.Minute,
		AmbientC: 22, AmbientUAWK: 15, ControllerW: 50,
		InitialC: 25, LoadW: 0, Step: 500 * time.Millisecond,
		WaterFlowUnit: "L/min",
	}
}

// validate refuses parameters the model cannot run with. Zero is meaningful
// for many of them (no drift, no ambient loss, no load), so there are no
// implicit defaults: callers start from DefaultParams and change fields.
func (p *Params) validate() error {
	type check struct {
		name string
		v    float64
		ok   bool
	}
	checks := []check{
		{"volume", p.VolumeL, p.VolumeL > 0},
		{"density", p.DensityKgM3, p.DensityKgM3 > 0},
		{"specific heat", p.SpecificHeatJKgK, p.SpecificHeatJKgK > 0},
		{"UA", p.UAWK, p.UAWK >= 0},
		{"water flow", p.WaterFlowLpm, p.WaterFlowLpm >= 0},
		{"water inlet drift", p.WaterInDriftC, p.WaterInDriftC >= 0},
		{"pumps", float64(p.Pumps), p.Pumps >= 0},
		{"pump flow", p.PumpFlowLpm, p.PumpFlowLpm >= 0},
		{"pump power", p.PumpPowerW, p.PumpPowerW >= 0},
		{"pump heat fraction", p.PumpHeatFraction, p.PumpHeatFraction >= 0 && p.PumpHeatFraction <= 1},
		{"hysteresis", p.HysteresisC, p.HysteresisC >= 0},
		{"ambient UA", p.AmbientUAWK, p.AmbientUAWK >= 0},
		{"load", p.LoadW, p.LoadW >= 0 && p.LoadW <= MaxLoadW},
		{"step (s)", p.Step.Seconds(), p.Step > 0 && p.Step <= time.Minute},
		{"minimum circulation period (s)", p.MinCirculationEvery.Seconds(), p.MinCirculationEvery >= p.MinCirculationFor && p.MinCirculationFor >= 0},
	}
	for _, c := range checks {
		if !c.ok || math.IsNaN(c.v) || math.IsInf(c.v, 0) {
			return fmt.Errorf("tank-sim: %s %g is out of range", c.name, c.v)
		}
	}
	switch p.WaterFlowUnit {
	case "L/min", "m3/h":
	default:
		return fmt.Errorf("tank-sim: water flow unit %q is not L/min or m3/h", p.WaterFlowUnit)
	}
	return nil
}

// HeatCapacity returns C = V·ρ·c of the coolant, J/K.
func (p Params) HeatCapacity() float64 {
	return p.VolumeL / 1000 * p.DensityKgM3 * p.SpecificHeatJKgK
}

// Model is the tank's state. It is not safe for concurrent use; Server
// serialises access.
type Model struct {
	p   Params
	rng *rand.Rand
	c   float64 // heat capacity, J/K

	t    time.Duration // simulated time since start
	temp float64       // bulk coolant temperature, °C

	load           float64
	profile        *Profile
	profileStart   time.Duration
	waterConnected bool
	demo           bool
	mode           string
	setpoint       float64

	demand      bool          // thermal demand (hysteresis state)
	forced      bool          // in a minimum-circulation run
	forcedStart time.Duration // when it began
	idleSince   time.Duration // when the pumps last stopped (or t = 0)

	// Rates over the last step, W (Q_hx and Q_amb are step averages).
	qIT, qPump, qHX, qAmb float64
	// Heat moved since t = 0, J.
	eIT, ePump, eHX, eAmb float64
	startTemp             float64

	// Displayed sensor values (lagged, noisy), °C.
	cti, cto, wti, wto  float64
	drift               float64 // water inlet drift, K
	noise               float64 // current display noise on temperature, K
	noiseRPM, noiseFlow float64 // current display noise on pump speed and flows, fraction
	cpu0, cpu1          float64
}

// New returns a model at t = 0. The seed fixes every random draw (sensor
// noise, water inlet drift), so a run is reproducible.
func New(p Params, seed uint64) (*Model, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	m := &Model{
		p: p, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), c: p.HeatCapacity(),
		temp: p.InitialC, startTemp: p.InitialC, load: p.LoadW, waterConnected: true, mode: "normal",
		setpoint: p.SetpointC,
	}
	m.cti, m.cto = p.InitialC, p.InitialC
	m.wti, m.wto = p.WaterInC, p.WaterInC
	m.cpu0, m.cpu1 = 58, 58
	return m, nil
}

// Time returns the simulated time since the start.
func (m *Model) Time() time.Duration { return m.t }

// MaxLoadW bounds the IT load: far beyond any tank, but finite.
const MaxLoadW = 10e6

// SetLoad sets the IT load and stops following a profile.
func (m *Model) SetLoad(w float64) error {
	if !(w >= 0 && w <= MaxLoadW) {
		return fmt.Errorf("load %g W: must be from 0 to %g", w, MaxLoadW)
	}
	m.load, m.profile = w, nil
	return nil
}

// FollowProfile makes the IT load follow prof, its offsets counted from now.
func (m *Model) FollowProfile(prof *Profile) {
	m.profile, m.profileStart = prof, m.t
	m.load = prof.At(0)
}

// SetChilledWater connects or disconnects the facility chilled water.
func (m *Model) SetChilledWater(connected bool) { m.waterConnected = connected }

// SetDemo switches the controller's demo mode.
func (m *Model) SetDemo(on bool) { m.demo = on }

// SetMode sets the controller mode shown by the API ("normal", "maintenance",
// ...); it changes nothing physical, so alerts on it can be tested.
func (m *Model) SetMode(mode string) error {
	if mode == "" || len(mode) > 32 {
		return fmt.Errorf("mode %q: give a short word", mode)
	}
	m.mode = mode
	return nil
}

// SetSetpoint changes the controller's setpoint.
func (m *Model) SetSetpoint(c float64) error {
	if math.IsNaN(c) || c < -20 || c > 100 {
		return fmt.Errorf("setpoint %g °C is out of range", c)
	}
	m.setpoint = c
	return nil
}

// AdvanceTo steps the model until its time reaches t (to the step below).
func (m *Model) AdvanceTo(t time.Duration) {
	for m.t+m.p.Step <= t {
		m.step()
	}
}

// Advance steps the model by d.
func (m *Model) Advance(d time.Duration) { m.AdvanceTo(m.t + d) }

// commanded reports whether the controller runs the pumps.
func (m *Model) commanded() bool { return m.demand || m.forced }

// circulating reports whether coolant physically flows.
func (m *Model) circulating() bool { return m.commanded() && !m.demo && m.p.Pumps > 0 }

func (m *Model) step() {
	h := m.p.Step.Seconds()
	if m.profile != nil {
		m.load = m.profile.At(m.t - m.profileStart)
	}
	m.control()

	// Inputs held for the step.
	run := m.circulating()
	twIn := m.waterInlet()
	m.qIT = m.load
	m.qPump = 0
	k := 0.0
	cc, cw := 0.0, 0.0
	if run {
		m.qPump = m.p.PumpHeatFraction * float64(m.p.Pumps) * m.p.PumpPowerW
		cc = float64(m.p.Pumps) * m.p.PumpFlowLpm / 60000 * m.p.DensityKgM3 * m.p.SpecificHeatJKgK
	}
	if m.waterConnected {
		cw = m.p.WaterFlowLpm / 60000 * waterDensity * waterSpecificHeat
	}
	if run && m.waterConnected {
		k = effectiveness(m.p.UAWK, cc, cw) * math.Min(cc, cw)
	}
	ua := m.p.AmbientUAWK

	// Exact solution of C·dT/dt = Q_it + Q_pump − k(T − T_w) − UA(T − T_amb).
	t0 := m.temp
	b := (k + ua) / m.c
	var t1, meanT float64
	if b == 0 {
		t1 = t0 + (m.qIT+m.qPump)*h/m.c
		meanT = (t0 + t1) / 2
	} else {
		tInf := (m.qIT + m.qPump + k*twIn + ua*m.p.AmbientC) / (k + ua)
		decay := math.Exp(-b * h)
		t1 = tInf + (t0-tInf)*decay
		meanT = tInf + (t0-tInf)*(1-decay)/(b*h) // time-average of T over the step
	}
	m.temp = t1
	m.qHX = k * (meanT - twIn)
	m.qAmb = ua * (meanT - m.p.AmbientC)
	m.eIT += m.qIT * h
	m.ePump += m.qPump * h
	m.eHX += m.qHX * h
	m.eAmb += m.qAmb * h
	m.t += m.p.Step

	m.sensors(h, run, twIn, cc, cw)
}

// control applies the setpoint with hysteresis and the minimum circulation.
func (m *Model) control() {
	was := m.commanded()
	switch {
	case m.temp >= m.setpoint:
		m.demand = true
	case m.temp <= m.setpoint-m.p.HysteresisC:
		m.demand = false
	}
	if m.forced && m.t-m.forcedStart >= m.p.MinCirculationFor {
		m.forced = false
	}
	if was && !m.commanded() {
		m.idleSince = m.t
	}
	if !m.commanded() && m.p.MinCirculationFor > 0 && m.t-m.idleSince >= m.p.MinCirculationEvery-m.p.MinCirculationFor {
		m.forced, m.forcedStart = true, m.t
	}
}

// waterInlet returns the chilled water's inlet temperature: the facility
// supply with a slow bounded random drift.
func (m *Model) waterInlet() float64 {
	return m.p.WaterInC + m.drift
}

// effectiveness of a counter-flow exchanger by the ε-NTU method.
func effectiveness(ua, c1, c2 float64) float64 {
	cmin, cmax := math.Min(c1, c2), math.Max(c1, c2)
	if cmin <= 0 || ua <= 0 {
		return 0
	}
	ntu := ua / cmin
	cr := cmin / cmax
	if math.Abs(1-cr) < 1e-9 {
		return ntu / (1 + ntu)
	}
	e := math.Exp(-ntu * (1 - cr))
	return (1 - e) / (1 - cr*e)
}

// sensors moves the displayed values: pipe sensors follow their stream with
// a 10 s lag while it flows and drift toward their surroundings over 10 min
// when it stands; the water inlet drifts slowly within its bound.
func (m *Model) sensors(h float64, run bool, twIn, cc, cw float64) {
	lag := func(cur, target, tau float64) float64 { return target + (cur-target)*math.Exp(-h/tau) }
	const tauFlow, tauStill = 10.0, 600.0
	// Ornstein-Uhlenbeck drift of the inlet, reverting over an hour.
	if m.p.WaterInDriftC > 0 {
		sigma := m.p.WaterInDriftC / 3
		m.drift += -m.drift*h/3600 + sigma*math.Sqrt(2*h/3600)*m.rng.NormFloat64()
		m.drift = math.Max(-m.p.WaterInDriftC, math.Min(m.p.WaterInDriftC, m.drift))
	}
	if m.waterConnected {
		m.wti = lag(m.wti, twIn, tauFlow)
		m.wto = lag(m.wto, twIn+m.qHX/cw, tauFlow)
	} else {
		m.wti = lag(m.wti, m.p.AmbientC, 4*tauStill)
		m.wto = lag(m.wto, m.p.AmbientC, 4*tauStill)
	}
	if run {
		m.cto = lag(m.cto, m.temp, tauFlow)
		m.cti = lag(m.cti, m.temp-m.qHX/cc, tauFlow)
	} else {
		still := m.p.AmbientC
		if m.waterConnected {
			still = m.wti // the exchanger side sits at the water's temperature
		}
		m.cti = lag(m.cti, still, tauStill)
		m.cto = lag(m.cto, m.p.AmbientC, tauStill)
	}
	m.noise = 0.03 * m.rng.NormFloat64()
	m.noiseRPM = 0.004 * m.rng.NormFloat64()
	m.noiseFlow = 0.01 * m.rng.NormFloat64()
	m.cpu0 = lag(m.cpu0, 57+0.3*(m.p.AmbientC-22)+m.rng.NormFloat64(), 60)
	m.cpu1 = lag(m.cpu1, 57+0.3*(m.p.AmbientC-22)+m.rng.NormFloat64(), 60)
}

// Truth is the model's real state, which the pod's API does not show
// (served at /sim/state for tests and what-if studies).
type Truth struct {
	TimeS           float64 `json:"time_s"`
	CoolantC        float64 `json:"coolant_c"`
	StartC          float64 `json:"start_c"`
	HeatCapacityJK  float64 `json:"heat_capacity_j_per_k"`
	LoadW           float64 `json:"load_w"`
	PumpsCommanded  bool    `json:"pumps_commanded"`
	PumpsRunning    bool    `json:"pumps_running"`
	MinCirculation  bool    `json:"min_circulation"`
	WaterConnected  bool    `json:"chilled_water"`
	Demo            bool    `json:"demo"`
	Mode            string  `json:"mode"`
	SetpointC       float64 `json:"setpoint_c"`
	FollowsProfile  bool    `json:"follows_profile"`
	WaterInC        float64 `json:"water_in_c"`
	QITW            float64 `json:"q_it_w"`
	QPumpW          float64 `json:"q_pump_w"`
	QHXW            float64 `json:"q_hx_w"`
	QAmbientW       float64 `json:"q_ambient_w"`
	EnergyITJ       float64 `json:"energy_it_j"`
	EnergyPumpJ     float64 `json:"energy_pump_j"`
	EnergyHXJ       float64 `json:"energy_hx_j"`
	EnergyAmbientJ  float64 `json:"energy_ambient_j"`
	StoredEnergyJ   float64 `json:"stored_energy_j"` // C·(T − T_start)
	ConsumptionW    float64 `json:"consumption_w"`   // real, metered
	DisplayedPowerW float64 `json:"displayed_consumption_w"`
}

// Truth returns the model's real state.
func (m *Model) Truth() Truth {
	return Truth{
		TimeS: m.t.Seconds(), CoolantC: m.temp, StartC: m.startTemp, HeatCapacityJK: m.c,
		LoadW: m.load, PumpsCommanded: m.commanded(), PumpsRunning: m.circulating(), MinCirculation: m.forced && !m.demand,
		WaterConnected: m.waterConnected, Demo: m.demo, Mode: m.mode, SetpointC: m.setpoint,
		FollowsProfile: m.profile != nil, WaterInC: m.waterInlet(),
		QITW: m.qIT, QPumpW: m.qPump, QHXW: m.qHX, QAmbientW: m.qAmb,
		EnergyITJ: m.eIT, EnergyPumpJ: m.ePump, EnergyHXJ: m.eHX, EnergyAmbientJ: m.eAmb,
		StoredEnergyJ:   m.c * (m.temp - m.startTemp),
		ConsumptionW:    m.consumption(m.circulating()),
		DisplayedPowerW: m.consumption(m.commanded()),
	}
}

func (m *Model) consumption(pumps bool) float64 {
	w := m.p.ControllerW
	if pumps {
		w += float64(m.p.Pumps) * m.p.PumpPowerW
	}
	return w
}
