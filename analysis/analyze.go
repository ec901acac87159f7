package analysis

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// ReportSchema is the version of the Report's JSON form (docs/report-schema.md).
// Fields may be added within a version; none is renamed or removed.
const ReportSchema = 1

// Report is everything `heatsink report` says about one run. Every number is
// either computed or nil with the reason in NotComputed (keyed by the JSON
// name of the field), so nothing is ever invented to fill a table.
type Report struct {
	Schema      int               `json:"schema"`
	Run         RunInfo           `json:"run"`
	Phases      Phases            `json:"phases"`
	Options     OptionsUsed       `json:"options"`
	Definitions []Definition      `json:"definitions"`
	Components  []ComponentResult `json:"components"`
	PumpCycles  []PumpCycle       `json:"pump_cycles"`
	// PumpCycleFit is heat removed per cycle regressed on the coolant
	// temperature at the cycle's start.
	PumpCycleFit  *PumpCycleFit    `json:"pump_cycle_fit"`
	CoolingEnergy CoolingEnergy    `json:"cooling_energy"`
	Slowdown      []SlowdownResult `json:"slowdown"`
	// NotComputed holds, for the top-level results (pump_cycles,
	// pump_cycle_fit, slowdown, phases), why they are missing.
	NotComputed map[string]string `json:"not_computed,omitempty"`
	// Notes are warnings about the input: skipped lines, odd phases.
	Notes []string `json:"notes,omitempty"`
}

// RunInfo identifies the run a report describes.
type RunInfo struct {
	ID       string            `json:"id"`
	Dir      string            `json:"dir"`
	Host     string            `json:"host,omitempty"`
	Start    time.Time         `json:"start"`
	EndS     float64           `json:"end_s"` // last reading, seconds after Start
	Status   string            `json:"status,omitempty"`
	Cooling  string            `json:"cooling"` // immersion, air or unknown
	Workload string            `json:"workload,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Points   int               `json:"points"`
	BadLines int               `json:"bad_lines"`
}

// OptionsUsed records the options in the units the report uses.
type OptionsUsed struct {
	ToleranceC                  float64 `json:"tolerance_c"`
	HoldS                       float64 `json:"hold_s"`
	WindowS                     float64 `json:"window_s"`
	MinRiseC                    float64 `json:"min_rise_c"`
	MaxGapS                     float64 `json:"max_gap_s"`
	OnsetFraction               float64 `json:"onset_fraction"`
	OnsetSmoothS                float64 `json:"onset_smooth_s"`
	AirCoolingFraction          float64 `json:"air_cooling_fraction"`
	PumpFlowLPM                 float64 `json:"pump_flow_threshold_lpm"`
	CoolantDensityKgPerL        float64 `json:"coolant_density_kg_per_l"`
	CoolantHeatCapacityKJPerKgK float64 `json:"coolant_heat_capacity_kj_per_kg_k"`
	Alpha                       float64 `json:"alpha"`
}

// Definition states how one reported quantity is computed.
type Definition struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// ComponentResult is the thermal behaviour of one component. Times (_at_s)
// are seconds since the run's start.
type ComponentResult struct {
	ID                string            `json:"id"`
	Kind              string            `json:"kind"`
	Host              string            `json:"host,omitempty"`
	Name              string            `json:"name,omitempty"`
	Sensors           int               `json:"sensors"`
	Readings          int               `json:"readings"`
	IdleMinC          *float64          `json:"idle_min_c"`
	IdleMeanC         *float64          `json:"idle_mean_c"`
	IdleMaxC          *float64          `json:"idle_max_c"`
	MaxC              *float64          `json:"max_c"`
	MaxAtS            *float64          `json:"max_at_s"`
	LoadPeakC         *float64          `json:"load_peak_c"`
	LoadPeakAtS       *float64          `json:"load_peak_at_s"`
	HeatIntervalSPerC *float64          `json:"heat_interval_s_per_c"`
	SteepestSPerC     *float64          `json:"steepest_s_per_c"`
	SteepestAtS       *float64          `json:"steepest_at_s"`
	ReturnToIdleS     *float64          `json:"return_to_idle_s"`
	CoolantDiffC      *float64          `json:"coolant_peak_diff_c"`
	CoolantDiffAtS    *float64          `json:"coolant_peak_diff_at_s"`
	CoolantLagS       *float64          `json:"coolant_lag_s"`
	NotComputed       map[string]string `json:"not_computed,omitempty"`
	// Series holds the readings, for plots; it is not part of the JSON.
	Series *Component `json:"-"`
}

// PumpCycle is one stretch of coolant circulation in a tank.
type PumpCycle struct {
	Tank      string  `json:"tank"`
	StartS    float64 `json:"start_s"`
	DurationS float64 `json:"duration_s"`
	// Complete is false when the cycle was already running at the start of
	// the recording or still running at its end.
	Complete         bool              `json:"complete"`
	Source           string            `json:"source"`
	StartCoolantC    *float64          `json:"start_coolant_c"`
	HeatRemovedKJ    *float64          `json:"heat_removed_kj"`
	HeatMethod       string            `json:"heat_method,omitempty"`
	PumpEnergyKJ     *float64          `json:"pump_energy_kj"`
	PumpEnergyMethod string            `json:"pump_energy_method,omitempty"`
	NotComputed      map[string]string `json:"not_computed,omitempty"`
}

// PumpCycleFit is heat removed (kJ) = intercept + slope × start coolant (°C)
// over the complete cycles.
type PumpCycleFit struct {
	N           int     `json:"n"`
	SlopeKJPerC float64 `json:"slope_kj_per_c"`
	InterceptKJ float64 `json:"intercept_kj"`
	R2          float64 `json:"r2"`
	PValue      float64 `json:"p_value"`
}

// CoolingEnergy is the energy spent on cooling from the start of the load
// until temperatures are back at idle.
type CoolingEnergy struct {
	Cooling  string   `json:"cooling"`
	Method   string   `json:"method"`
	EnergyKJ *float64 `json:"energy_kj"`
	FromS    *float64 `json:"from_s"`
	ToS      *float64 `json:"to_s"`
	// Normalised says whether every component was back at idle by ToS;
	// when false, ToS is the end of the recording and the energy a lower
	// bound.
	Normalised bool `json:"normalised"`
	// GapS is how much of the span had no readings (bridged linearly).
	GapS                 float64  `json:"gap_s"`
	Fraction             *float64 `json:"fraction,omitempty"`
	BaselineUnaccountedW *float64 `json:"baseline_unaccounted_w,omitempty"`
	NotComputed          string   `json:"not_computed,omitempty"`
	NotNormalised        []string `json:"not_normalised,omitempty"`
}

// SlowdownResult is one component's runtime-on-temperature regression.
type SlowdownResult struct {
	Component   string   `json:"component"`
	N           int      `json:"n"`
	SlopeSPerC  *float64 `json:"slope_s_per_c"`
	InterceptS  *float64 `json:"intercept_s"`
	R2          *float64 `json:"r2"`
	PValue      *float64 `json:"p_value"`
	Significant bool     `json:"significant"`
	NotComputed string   `json:"not_computed,omitempty"`
}

func ptr(v float64) *float64 { return &v }

// Analyze runs every analysis over r with options o, used as given (start
// from DefaultOptions and check with Options.Validate). It never fails: what
// cannot be computed is reported with the reason.
func Analyze(r *Run, o Options) *Report {
	rep := &Report{Schema: ReportSchema, NotComputed: map[string]string{}}
	endS := 0.0
	for _, s := range r.Series {
		for _, t := range s.T {
			endS = math.Max(endS, t)
		}
	}
	m := r.Meta
	rep.Run = RunInfo{ID: m.ID, Dir: r.Dir, Host: m.Host, Start: r.Start, EndS: endS, Status: m.Status,
		Labels: m.Labels, Points: r.Points, BadLines: r.BadLines}
	if m.Workload != nil {
		rep.Run.Workload = m.Workload.Name
	}
	if r.BadLines > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d lines of points.lp could not be decoded and were skipped; first: %s",
			r.BadLines, strings.Join(r.BadLineErrors, "; ")))
	}
	rep.Notes = append(rep.Notes, r.Notes...)
	if r.Points == 0 && len(r.Notes) == 0 {
		rep.Notes = append(rep.Notes, "the run recorded no points")
	}

	maxGap := o.MaxGap.Seconds()
	if maxGap == 0 {
		iv := m.IntervalS
		if iv <= 0 {
			iv = 1
		}
		maxGap = 5 * iv
	}
	rep.Options = OptionsUsed{
		ToleranceC: o.Tolerance, HoldS: o.Hold.Seconds(), WindowS: o.Window.Seconds(), MinRiseC: o.MinRise,
		MaxGapS: maxGap, OnsetFraction: o.OnsetFraction, OnsetSmoothS: o.OnsetSmooth.Seconds(),
		AirCoolingFraction: o.AirCoolingFraction, PumpFlowLPM: o.PumpFlowLPM,
		CoolantDensityKgPerL: o.CoolantDensityKgPerL, CoolantHeatCapacityKJPerKgK: o.CoolantHeatCapacityKJPerKgK,
		Alpha: o.Alpha,
	}
	rep.Definitions = definitions(rep.Options)

	recorded := m.Phases
	if len(recorded) == 0 && len(r.EventPhases) > 0 {
		recorded = r.EventPhases
		rep.Notes = append(rep.Notes, "run.json lists no phases; phases taken from the event points")
	}
	ph, notes := ResolvePhases(recorded, r.Start, endS)
	rep.Phases = ph
	rep.Notes = append(rep.Notes, notes...)
	switch {
	case ph.Baseline == nil && ph.Load == nil:
		rep.NotComputed["phases"] = "the run records neither a baseline nor a load phase (run.json phases or event points)"
	case ph.Baseline == nil:
		rep.NotComputed["phases"] = "the run records no baseline phase"
	case ph.Load == nil:
		rep.NotComputed["phases"] = "the run records no load phase"
	}
	if ph.Load != nil && ph.Load.Open {
		rep.Notes = append(rep.Notes, "the load phase has no recorded end; it is taken to last until the end of the recording")
	}

	a := analyzer{r: r, o: o, maxGap: maxGap, ph: ph, endS: endS, rep: rep}
	comps := Components(r)
	var coolantList []*Component
	for _, c := range comps {
		if c.Kind == KindCoolant && c.Err == nil && len(c.T) > 0 {
			coolantList = append(coolantList, c)
		}
	}
	for _, c := range comps {
		rep.Components = append(rep.Components, a.component(c, coolantList))
	}
	if len(comps) == 0 && r.Points > 0 {
		rep.Notes = append(rep.Notes, noTemperatureNotes(r)...)
	}
	a.pumps()
	a.coolingEnergy()
	a.slowdown()
	if len(rep.NotComputed) == 0 {
		rep.NotComputed = nil
	}
	rep.Notes = append(rep.Notes, DropNonFinite(rep)...)
	return rep
}

// ownMeasurements are heatsink's records of itself and of the job, not
// readings of the machine.
var ownMeasurements = map[string]bool{"event": true, "iteration": true, "alert": true,
	"collector_tick": true, "collector_source": true, "influx_sink": true}

// noTemperatureNotes explain a run without a single temperature, a VM's
// usual case: what it recorded instead, and why each source that could have
// given a temperature gave nothing, as run.json's sources say.
func noTemperatureNotes(r *Run) []string {
	var recorded []string
	seen := map[string]bool{}
	for _, s := range r.Series {
		if !ownMeasurements[s.Measurement] && !seen[s.Measurement] {
			seen[s.Measurement] = true
			recorded = append(recorded, s.Measurement)
		}
	}
	sort.Strings(recorded)
	note := "the run holds no temperature (GPU, CPU chip, NVMe, coolant or water), so nothing that needs one could be computed"
	if len(recorded) > 0 {
		note += "; it recorded only " + strings.Join(recorded, ", ")
	}
	notes := []string{note}
	for _, s := range r.Meta.Sources {
		if s.Error != "" {
			why := strings.TrimSuffix(strings.TrimPrefix(s.Error, "discover: "), ": "+errors.ErrUnsupported.Error())
			notes = append(notes, fmt.Sprintf("source %s was unavailable: %s", s.Name, why))
		}
	}
	return notes
}

type analyzer struct {
	r      *Run
	o      Options
	maxGap float64
	ph     Phases
	endS   float64
	rep    *Report
}

// component computes one component's table row.
func (a *analyzer) component(c *Component, coolants []*Component) ComponentResult {
	res := ComponentResult{ID: c.ID, Kind: c.Kind, Host: c.Host, Name: c.Name, Sensors: c.Sensors,
		Readings: len(c.T), Series: c, NotComputed: map[string]string{}}
	why := res.NotComputed
	all := []string{"idle_min_c", "idle_mean_c", "idle_max_c", "max_c", "load_peak_c", "heat_interval_s_per_c",
		"steepest_s_per_c", "return_to_idle_s", "coolant_peak_diff_c", "coolant_lag_s"}
	setAll := func(reason string, keys ...string) {
		for _, k := range keys {
			if _, done := why[k]; !done {
				why[k] = reason
			}
		}
	}
	if c.Err != nil {
		setAll(c.Err.Error(), all...)
		return res
	}
	if len(c.T) == 0 {
		setAll("no readings", all...)
		return res
	}
	ph := a.ph
	idleKeys := []string{"idle_min_c", "idle_mean_c", "idle_max_c"}
	var idle *IdleStats
	if ph.Baseline == nil {
		setAll("no baseline phase", idleKeys...)
	} else if st, err := Idle(c.T, c.V, ph.Baseline.Start, ph.Baseline.End); err != nil {
		setAll(err.Error(), idleKeys...)
	} else {
		idle = &st
		res.IdleMinC, res.IdleMeanC, res.IdleMaxC = ptr(st.Min), ptr(st.Mean), ptr(st.Max)
	}
	coolantKeys := []string{"coolant_peak_diff_c", "coolant_lag_s"}
	if ph.Load == nil {
		setAll("no load phase", "max_c", "load_peak_c", "heat_interval_s_per_c", "steepest_s_per_c", "return_to_idle_s")
		setAll("no load phase", coolantKeys...)
		return res
	}
	load := *ph.Load
	end := a.endS
	if ph.Cooldown != nil && !ph.Cooldown.Open {
		end = math.Max(load.End, ph.Cooldown.End)
	}
	if at, mx, err := Peak(c.T, c.V, load.Start, end); err != nil {
		why["max_c"] = "load and cooldown: " + err.Error()
	} else {
		res.MaxC, res.MaxAtS = ptr(mx), ptr(at)
	}
	if at, pk, err := Peak(c.T, c.V, load.Start, load.End); err != nil {
		why["load_peak_c"] = "load phase: " + err.Error()
	} else {
		res.LoadPeakC, res.LoadPeakAtS = ptr(pk), ptr(at)
	}
	if idle == nil {
		setAll("needs the idle statistics: "+why["idle_mean_c"], "heat_interval_s_per_c", "return_to_idle_s")
	} else {
		if hi, _, _, err := HeatInterval(c.T, c.V, load, idle.Mean, a.o.MinRise); err != nil {
			why["heat_interval_s_per_c"] = err.Error()
		} else {
			res.HeatIntervalSPerC = ptr(hi)
		}
		switch {
		case load.Open:
			why["return_to_idle_s"] = "the load phase never ended"
		default:
			if rt, err := ReturnToIdle(c.T, c.V, load.End, idle.Max, a.o.Tolerance, a.o.Hold.Seconds(), a.maxGap); err != nil {
				why["return_to_idle_s"] = err.Error()
			} else {
				res.ReturnToIdleS = ptr(rt)
			}
		}
	}
	if s, at, err := SteepestRise(c.T, c.V, load.Start, load.End, a.o.Window.Seconds(), a.maxGap); err != nil {
		why["steepest_s_per_c"] = err.Error()
	} else {
		res.SteepestSPerC, res.SteepestAtS = ptr(s), ptr(at)
	}
	a.coolantRelative(c, coolants, idle, load, end, &res)
	if len(why) == 0 {
		res.NotComputed = nil
	}
	return res
}

// coolantRelative fills the hardware-versus-coolant columns.
func (a *analyzer) coolantRelative(c *Component, coolants []*Component, idle *IdleStats, load Span, end float64, res *ComponentResult) {
	why := res.NotComputed
	keys := []string{"coolant_peak_diff_c", "coolant_lag_s"}
	set := func(reason string) {
		for _, k := range keys {
			why[k] = reason
		}
	}
	if c.Kind == KindCoolant || c.Kind == KindWater {
		set("not a hardware component")
		return
	}
	var cool *Component
	switch {
	case len(coolants) == 0:
		set("no tank coolant temperature recorded (not an immersed run)")
		return
	case len(coolants) == 1:
		cool = coolants[0]
	default:
		for _, k := range coolants {
			if k.Host == c.Host {
				cool = k
			}
		}
		if cool == nil {
			set("several tanks recorded and none shares this component's host")
			return
		}
	}
	if d, at, err := PeakDifference(c.T, c.V, cool.T, cool.V, load.Start, end, a.maxGap); err != nil {
		why["coolant_peak_diff_c"] = err.Error()
	} else {
		res.CoolantDiffC, res.CoolantDiffAtS = ptr(d), ptr(at)
	}
	if idle == nil || a.ph.Baseline == nil {
		why["coolant_lag_s"] = "needs the idle means of hardware and coolant: no baseline"
		return
	}
	ci, err := Idle(cool.T, cool.V, a.ph.Baseline.Start, a.ph.Baseline.End)
	if err != nil {
		why["coolant_lag_s"] = "coolant " + err.Error()
		return
	}
	lag, err := CoolantLag(c.T, c.V, cool.T, cool.V, load.Start, end, idle.Mean, ci.Mean,
		a.o.OnsetFraction, a.o.OnsetSmooth.Seconds(), a.o.MinRise)
	if err != nil {
		why["coolant_lag_s"] = err.Error()
		return
	}
	res.CoolantLagS = ptr(lag)
}

// tankSeries returns the series of field of tank, or nil.
func (a *analyzer) tankSeries(tank, field string) *Series {
	ss := a.r.Find("tank", field, func(s *Series) bool { return s.Tag("tank") == tank })
	if len(ss) == 0 || ss[0].CheckTimes() != nil {
		return nil
	}
	return ss[0]
}

// tanks returns the names of the tanks recorded.
func (a *analyzer) tanks() []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range a.r.Series {
		if s.Measurement == "tank" && !seen[s.Tag("tank")] {
			seen[s.Tag("tank")] = true
			out = append(out, s.Tag("tank"))
		}
	}
	sort.Strings(out)
	return out
}

// pumps finds the pump cycles of every tank and fits heat removed against
// the coolant temperature at each cycle's start.
func (a *analyzer) pumps() {
	rep := a.rep
	rep.PumpCycles = []PumpCycle{}
	tanks := a.tanks()
	if len(tanks) == 0 {
		rep.NotComputed["pump_cycles"] = "no tank recorded (no tank points)"
		rep.NotComputed["pump_cycle_fit"] = rep.NotComputed["pump_cycles"]
		return
	}
	var reasons []string
	for _, tank := range tanks {
		cycles, err := a.tankCycles(tank)
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("tank %s: %v", tank, err))
			continue
		}
		rep.PumpCycles = append(rep.PumpCycles, cycles...)
	}
	if len(rep.PumpCycles) == 0 {
		if len(reasons) == 0 {
			reasons = append(reasons, "the pumps never ran during the recording")
		}
		rep.NotComputed["pump_cycles"] = strings.Join(reasons, "; ")
	} else if len(reasons) > 0 {
		rep.Notes = append(rep.Notes, reasons...)
	}
	var x, y []float64
	for _, c := range rep.PumpCycles {
		if c.Complete && c.StartCoolantC != nil && c.HeatRemovedKJ != nil {
			x = append(x, *c.StartCoolantC)
			y = append(y, *c.HeatRemovedKJ)
		}
	}
	f, err := LinearFit(x, y)
	if err != nil {
		rep.NotComputed["pump_cycle_fit"] = "complete cycles with heat removed and start temperature: " + err.Error()
		return
	}
	rep.PumpCycleFit = &PumpCycleFit{N: f.N, SlopeKJPerC: f.Slope, InterceptKJ: f.Intercept, R2: f.R2, PValue: f.PValue}
}

func (a *analyzer) tankCycles(tank string) ([]PumpCycle, error) {
	fields := func(names ...string) []*Series {
		var out []*Series
		for _, n := range names {
			if s := a.tankSeries(tank, n); s != nil {
				out = append(out, s)
			}
		}
		return out
	}
	var t, active []float64
	var source string
	threshold := 0.0
	for _, cand := range []struct {
		src    string
		fields []string
		thr    float64
	}{
		{"pump rpm", []string{"pump1_rpm", "pump2_rpm"}, 0},
		{"pump status", []string{"pump1_on", "pump2_on"}, 0},
		{"coolant flow", []string{"coolant_flow_lpm"}, a.o.PumpFlowLPM},
	} {
		ss := fields(cand.fields...)
		if len(ss) == 0 {
			continue
		}
		vs := make([][]float64, len(ss))
		for i, s := range ss {
			vs[i] = s.V
		}
		t, active, source, threshold = ss[0].T, AnyAbove(vs...), cand.src, cand.thr
		break
	}
	if source == "" {
		return nil, fmt.Errorf("no pump rpm, pump status or coolant flow recorded")
	}

	// Heat removed, as kW at each reading.
	var heatKW []float64
	var heatT []float64
	var heatMethod, heatWhy string
	o := a.o
	if s := a.tankSeries(tank, "dissipation_kw"); s != nil {
		heatT, heatKW, heatMethod = s.T, s.V, "tank dissipation (dissipation_kw) integrated over the cycle"
	} else if s := a.tankSeries(tank, "dissipation_w"); s != nil {
		heatT, heatKW, heatMethod = s.T, scale(s.V, 1e-3), "tank dissipation (dissipation_w) integrated over the cycle"
	} else if in, out := a.tankSeries(tank, "water_in_c"), a.tankSeries(tank, "water_out_c"); in != nil && out != nil &&
		(a.tankSeries(tank, "water_flow_lpm") != nil || a.tankSeries(tank, "water_flow_m3h") != nil) {
		var flow []float64
		if f := a.tankSeries(tank, "water_flow_lpm"); f != nil {
			flow = f.V
		} else {
			flow = scale(a.tankSeries(tank, "water_flow_m3h").V, 1000.0/60)
		}
		heatT = in.T
		heatKW = FlowHeatKW(flow, Difference(out.V, in.V), WaterDensityKgPerL, WaterHeatCapacityKJPerKgK)
		heatMethod = fmt.Sprintf("facility water flow × (water_out_c − water_in_c) × %.3g kg/L × %.4g kJ/(kg·K)", WaterDensityKgPerL, WaterHeatCapacityKJPerKgK)
	} else if in, out, f := a.tankSeries(tank, "coolant_in_c"), a.tankSeries(tank, "coolant_out_c"), a.tankSeries(tank, "coolant_flow_lpm"); in != nil && out != nil && f != nil {
		heatT = in.T
		heatKW = FlowHeatKW(f.V, Difference(in.V, out.V), o.CoolantDensityKgPerL, o.CoolantHeatCapacityKJPerKgK)
		heatMethod = fmt.Sprintf("coolant flow × (coolant_in_c − coolant_out_c) × %.3g kg/L × %.3g kJ/(kg·K)", o.CoolantDensityKgPerL, o.CoolantHeatCapacityKJPerKgK)
	} else {
		heatWhy = "no dissipation, water flow with in/out temperatures, or coolant flow with in/out temperatures recorded"
	}

	cons := a.tankSeries(tank, "consumption_w")
	var offW float64
	var haveOff bool
	if cons != nil {
		offW, haveOff = OffMean(cons.V, active, threshold)
	}
	coolant := a.tankSeries(tank, "coolant_temp_c")
	var coolT, coolV []float64
	if coolant != nil {
		coolT, coolV = Finite(coolant.T, coolant.V)
	}

	var out []PumpCycle
	for _, iv := range ActiveIntervals(t, active, threshold) {
		pc := PumpCycle{Tank: tank, StartS: iv.Start, DurationS: iv.End - iv.Start, Complete: iv.Complete(),
			Source: source, NotComputed: map[string]string{}}
		if !iv.StartSeen {
			pc.NotComputed["start_coolant_c"] = "the pumps were already running when the recording began"
		} else if coolant == nil {
			pc.NotComputed["start_coolant_c"] = "no coolant temperature recorded"
		} else if v, ok := interpolate(coolT, coolV, iv.Start, a.maxGap); ok {
			pc.StartCoolantC = ptr(v)
		} else {
			pc.NotComputed["start_coolant_c"] = "no coolant reading at the cycle's start"
		}
		if heatWhy != "" {
			pc.NotComputed["heat_removed_kj"] = heatWhy
		} else if in, err := Integrate(heatT, heatKW, iv.Start, iv.End, a.maxGap); err != nil {
			pc.NotComputed["heat_removed_kj"] = err.Error()
		} else {
			pc.HeatRemovedKJ, pc.HeatMethod = ptr(in.Value), heatMethod
		}
		if cons == nil {
			pc.NotComputed["pump_energy_kj"] = "no tank consumption recorded"
		} else {
			v := cons.V
			method := "tank consumption integrated over the cycle (no reading with the pumps stopped to subtract)"
			if haveOff {
				v = Offset(cons.V, offW)
				method = fmt.Sprintf("tank consumption above its pumps-stopped mean (%.1f W) integrated over the cycle", offW)
			}
			if in, err := Integrate(cons.T, v, iv.Start, iv.End, a.maxGap); err != nil {
				pc.NotComputed["pump_energy_kj"] = err.Error()
			} else {
				pc.PumpEnergyKJ, pc.PumpEnergyMethod = ptr(in.Value/1000), method
			}
		}
		if len(pc.NotComputed) == 0 {
			pc.NotComputed = nil
		}
		out = append(out, pc)
	}
	return out, nil
}

func scale(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for k, x := range v {
		out[k] = x * f
	}
	return out
}

// coolingEnergy integrates the energy spent on cooling from the start of the
// load until every component is back at idle.
func (a *analyzer) coolingEnergy() {
	ce := &a.rep.CoolingEnergy
	r, o := a.r, a.o
	cooling := r.Meta.Labels["cooling"]
	tankCons := r.Find("tank", "consumption_w", nil)
	node := a.nodePower()
	if cooling != "immersion" && cooling != "air" {
		switch {
		case len(tankCons) > 0:
			cooling = "immersion"
		case len(node) > 0:
			cooling = "air"
		default:
			cooling = "unknown"
		}
	}
	ce.Cooling = cooling
	a.rep.Run.Cooling = cooling
	if a.ph.Load == nil {
		ce.NotComputed = "no load phase"
		return
	}
	from := a.ph.Load.Start
	to := a.endS
	ce.Normalised = false
	if !a.ph.Load.Open {
		latest, all := a.ph.Load.End, true
		for _, c := range a.rep.Components {
			if c.ReturnToIdleS == nil {
				all = false
				ce.NotNormalised = append(ce.NotNormalised, c.ID+": "+c.NotComputed["return_to_idle_s"])
				continue
			}
			latest = math.Max(latest, a.ph.Load.End+*c.ReturnToIdleS)
		}
		if all && len(a.rep.Components) > 0 {
			to, ce.Normalised = latest, true
		}
	} else {
		ce.NotNormalised = append(ce.NotNormalised, "the load phase never ended")
	}
	ce.FromS, ce.ToS = ptr(from), ptr(to)
	switch cooling {
	case "immersion":
		ce.Method = "tank consumption (consumption_w) integrated from the start of the load until every component is back at idle"
		if len(tankCons) == 0 {
			ce.NotComputed = "an immersion run without tank consumption readings"
			return
		}
		total := 0.0
		for _, s := range tankCons {
			if err := s.CheckTimes(); err != nil {
				ce.NotComputed = s.Key() + ": " + err.Error()
				return
			}
			in, err := Integrate(s.T, s.V, from, to, a.maxGap)
			if err != nil {
				ce.NotComputed = "tank consumption: " + err.Error()
				return
			}
			total += in.Value
			ce.GapS = math.Max(ce.GapS, in.GapS)
		}
		ce.EnergyKJ = ptr(total / 1000)
	case "air":
		ce.Fraction = ptr(o.AirCoolingFraction)
		ce.Method = fmt.Sprintf("%.3g %% of the node power no component accounts for (PDU power − GPU power − RAPL package and DRAM power), above its baseline mean, integrated from the start of the load until every component is back at idle", 100*o.AirCoolingFraction)
		if len(node) == 0 {
			ce.NotComputed = "an air-cooled run without node power from a PDU"
			return
		}
		if a.ph.Baseline == nil {
			ce.NotComputed = "needs the baseline phase for the idle unaccounted power"
			return
		}
		var partT, partV [][]float64
		for _, s := range append(r.Find("gpu", "power_w", nil), r.Find("rapl", "power_w", func(s *Series) bool {
			z := s.Tag("zone")
			return strings.HasPrefix(z, "package") || z == "dram"
		})...) {
			t, v := Finite(s.T, s.V)
			partT, partV = append(partT, t), append(partV, v)
		}
		nodeT, nodeV := sumAligned(node, a.maxGap)
		un := Unaccounted(nodeT, nodeV, partT, partV, a.maxGap)
		idle, err := Idle(nodeT, un, a.ph.Baseline.Start, a.ph.Baseline.End)
		if err != nil {
			ce.NotComputed = "unaccounted power: " + err.Error()
			return
		}
		base := idle.Mean
		ce.BaselineUnaccountedW = ptr(base)
		in, err := Integrate(nodeT, Offset(un, base), from, to, a.maxGap)
		if err != nil {
			ce.NotComputed = "unaccounted power: " + err.Error()
			return
		}
		ce.GapS = in.GapS
		ce.EnergyKJ = ptr(o.AirCoolingFraction * in.Value / 1000)
	default:
		ce.Method = "none"
		ce.NotComputed = "neither tank consumption nor PDU power recorded, and run.json has no cooling label"
	}
}

// nodePower returns the PDU series that measure the node: its outlets when
// the PDU reports per outlet, else the whole device, else its phases, else
// its banks.
func (a *analyzer) nodePower() []*Series {
	all := a.r.Find("pdu", "power_w", func(s *Series) bool { return s.CheckTimes() == nil })
	for _, pick := range []func(*Series) bool{
		func(s *Series) bool { return s.Tag("outlet") != "" },
		func(s *Series) bool { return s.Tag("outlet") == "" && s.Tag("phase") == "" && s.Tag("bank") == "" },
		func(s *Series) bool { return s.Tag("phase") != "" },
		func(s *Series) bool { return s.Tag("bank") != "" },
	} {
		var out []*Series
		for _, s := range all {
			if pick(s) {
				out = append(out, s)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// sumAligned sums several power series on the first one's times; a time
// where another has no reading within maxGap sums to NaN.
func sumAligned(ss []*Series, maxGap float64) (t, v []float64) {
	t, v = Finite(ss[0].T, ss[0].V)
	if len(ss) == 1 {
		return t, v
	}
	sum := append([]float64(nil), v...)
	for _, s := range ss[1:] {
		st, sv := Finite(s.T, s.V)
		for k := range sum {
			x, ok := interpolate(st, sv, t[k], maxGap)
			if !ok {
				sum[k] = math.NaN()
				continue
			}
			sum[k] += x
		}
	}
	return t, sum
}

// slowdown regresses per-iteration runtimes on each component's mean
// temperature during the iteration.
func (a *analyzer) slowdown() {
	rep := a.rep
	rep.Slowdown = []SlowdownResult{}
	w := a.r.Meta.Workload
	if w == nil || len(w.Iterations) == 0 {
		rep.NotComputed["slowdown"] = "run.json lists no workload iterations"
		return
	}
	if len(rep.Components) == 0 {
		rep.NotComputed["slowdown"] = "no temperature to regress the runtimes on"
		return
	}
	var its []struct{ from, to, rt float64 }
	for _, it := range w.Iterations {
		if it.ExitStatus != 0 || it.RuntimeS <= 0 || !it.End.After(it.Start) {
			continue
		}
		its = append(its, struct{ from, to, rt float64 }{it.Start.Sub(a.r.Start).Seconds(), it.End.Sub(a.r.Start).Seconds(), it.RuntimeS})
	}
	if len(its) < 3 {
		s := "s"
		if len(its) == 1 {
			s = ""
		}
		rep.NotComputed["slowdown"] = fmt.Sprintf("only %d successful iteration%s with a runtime; a regression needs at least 3", len(its), s)
		return
	}
	for _, cr := range rep.Components {
		c := cr.Series
		sr := SlowdownResult{Component: c.ID}
		if c.Kind == KindWater {
			continue
		}
		if c.Err != nil {
			sr.NotComputed = c.Err.Error()
			rep.Slowdown = append(rep.Slowdown, sr)
			continue
		}
		var x, y []float64
		for _, it := range its {
			if m, err := MeanOver(c.T, c.V, it.from, it.to); err == nil {
				x = append(x, m)
				y = append(y, it.rt)
			}
		}
		sr.N = len(x)
		f, err := Slowdown(x, y)
		if err != nil {
			sr.NotComputed = err.Error()
		} else {
			sr.SlopeSPerC, sr.InterceptS, sr.R2, sr.PValue = ptr(f.Slope), ptr(f.Intercept), ptr(f.R2), ptr(f.PValue)
			sr.Significant = f.PValue < a.o.Alpha && f.Slope > 0
		}
		rep.Slowdown = append(rep.Slowdown, sr)
	}
}

// definitions states how each reported quantity is computed, with the
// options in force.
func definitions(o OptionsUsed) []Definition {
	return []Definition{
		{"idle_min_c, idle_mean_c, idle_max_c", "minimum, mean and maximum of the readings during the baseline phase"},
		{"max_c", "maximum reading during the load and cooldown phases"},
		{"heat_interval_s_per_c", fmt.Sprintf("heat-accumulation interval (t_peak − t_load_start) / (T_peak − idle_mean), T_peak the load-phase maximum and t_peak the first time it is reached; not computed when T_peak is less than %.3g °C above the idle mean", o.MinRiseC)},
		{"steepest_s_per_c", fmt.Sprintf("steepest sustained rise: the inverse of the largest slope of a least-squares line fitted over every %.0f s window of the load phase (windows covered at least 90 %% with no gap over %.3g s)", o.WindowS, o.MaxGapS)},
		{"return_to_idle_s", fmt.Sprintf("seconds from the end of the load until the readings stay at or below idle_max + %.3g °C for %.0f s (a gap over %.3g s restarts the hold); \"not reached\" otherwise", o.ToleranceC, o.HoldS, o.MaxGapS)},
		{"coolant_peak_diff_c", "largest difference hardware − coolant during the load and cooldown (coolant interpolated to the hardware's readings)"},
		{"coolant_lag_s", fmt.Sprintf("coolant onset minus hardware onset, an onset being the first time after the start of the load that a series' %.0f s centred moving average reaches %.3g of its rise above its idle mean", o.OnsetSmoothS, o.OnsetFraction)},
		{"pump_cycles", fmt.Sprintf("stretches with any pump's rpm above 0, else any pump status on, else coolant flow above %.3g L/min; heat removed from the tank's dissipation, else facility water flow × ΔT × c_water, else coolant flow × ΔT × %.3g kg/L × %.3g kJ/(kg·K); pump energy is the tank's consumption above its pumps-stopped mean", o.PumpFlowLPM, o.CoolantDensityKgPerL, o.CoolantHeatCapacityKJPerKgK)},
		{"pump_cycle_fit", "least-squares line of heat removed (kJ) on coolant temperature at the cycle's start (°C), over complete cycles"},
		{"cooling_energy", fmt.Sprintf("immersion: the tank's consumption integrated; air: %.3g %% of the node power (PDU) not accounted for by GPU and RAPL power, above its baseline mean; from the start of the load until every component is back at idle (else to the end of the recording, a lower bound)", 100*o.AirCoolingFraction)},
		{"slowdown", fmt.Sprintf("per successful iteration, runtime regressed on the component's mean temperature during it; significant when the slope is positive with p < %.3g (two-sided t test)", o.Alpha)},
	}
}
