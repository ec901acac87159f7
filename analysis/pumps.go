package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Interval is a stretch of a run in seconds since its start. StartSeen and
// EndSeen say whether the switching on and off were both observed: a pump
// already running when the recording began, or still running when it
// ended, has a cycle whose true length is unknown.
type Interval struct {
	Start, End         float64
	StartSeen, EndSeen bool
}

// Complete reports whether both edges of the interval were observed.
func (iv Interval) Complete() bool { return iv.StartSeen && iv.EndSeen }

// ActiveIntervals returns the stretches during which v exceeds threshold:
// each starts at the first reading above it and ends at the first reading
// back at or below it (or at the last reading, with EndSeen false). NaN
// readings say nothing and leave the state as it was. t must be sorted.
func ActiveIntervals(t, v []float64, threshold float64) []Interval {
	var out []Interval
	on, known := false, false
	var cur Interval
	last := math.NaN()
	for k, x := range v {
		if math.IsNaN(x) {
			continue
		}
		last = t[k]
		now := x > threshold
		switch {
		case now && !on:
			cur = Interval{Start: t[k], StartSeen: known}
		case !now && on:
			cur.End, cur.EndSeen = t[k], true
			out = append(out, cur)
		}
		on, known = now, true
	}
	if on {
		cur.End = last
		out = append(out, cur)
	}
	return out
}

// AnyAbove combines several readings taken at the same times (the pumps of
// one tank) into one: at each time the largest finite reading, NaN where
// none is finite. All slices must have the same length.
func AnyAbove(vs ...[]float64) []float64 {
	if len(vs) == 0 {
		return nil
	}
	out := make([]float64, len(vs[0]))
	for k := range out {
		m := math.NaN()
		for _, v := range vs {
			if x := v[k]; !math.IsNaN(x) && (math.IsNaN(m) || x > m) {
				m = x
			}
		}
		out[k] = m
	}
	return out
}

// Specific heat capacity and density of water, for heat carried by the
// facility water loop.
const (
	WaterHeatCapacityKJPerKgK = 4.186
	WaterDensityKgPerL        = 0.998
)

// FlowHeatKW returns the heat carried by a liquid loop at each reading:
// flow (L/min) × temperature difference (°C) × density (kg/L) × specific heat
// (kJ/(kg·K)) / 60, in kW. A NaN in any input gives NaN.
func FlowHeatKW(flowLPM, deltaC []float64, densityKgPerL, heatCapacityKJPerKgK float64) []float64 {
	out := make([]float64, len(flowLPM))
	for k := range out {
		out[k] = flowLPM[k] * deltaC[k] * densityKgPerL * heatCapacityKJPerKgK / 60
	}
	return out
}

// Difference returns a - b element by element.
func Difference(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for k := range out {
		out[k] = a[k] - b[k]
	}
	return out
}

// OffMean returns the mean of the finite readings of v taken while active
// (readings at the same times) was at or below threshold: a tank's own draw
// with its pumps stopped. ok is false when there is none.
func OffMean(v, active []float64, threshold float64) (mean float64, ok bool) {
	sum, n := 0.0, 0
	for k, x := range v {
		if math.IsNaN(x) || math.IsNaN(active[k]) || active[k] > threshold {
			continue
		}
		sum += x
		n++
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
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

// tankSeries returns the series of field of tank, or nil.
func (a *analyzer) tankSeries(tank, field string) *Series {
	ss := a.r.Find(schema.Tank, field, func(s *Series) bool { return s.Tag(schema.TagTank) == tank })
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
		if s.Measurement == schema.Tank && !seen[s.Tag(schema.TagTank)] {
			seen[s.Tag(schema.TagTank)] = true
			out = append(out, s.Tag(schema.TagTank))
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

// tankCycles finds one tank's pump cycles, with the heat each removed and
// the energy its pumps used, from the best signals the tank recorded.
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
		{"pump rpm", []string{schema.FieldPump1RPM, schema.FieldPump2RPM}, 0},
		{"pump status", []string{schema.FieldPump1On, schema.FieldPump2On}, 0},
		{"coolant flow", []string{schema.FieldCoolantFlowLPM}, a.o.PumpFlowLPM},
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
	if s := a.tankSeries(tank, schema.FieldDissipationKW); s != nil {
		heatT, heatKW, heatMethod = s.T, s.V, "tank dissipation (dissipation_kw) integrated over the cycle"
	} else if s := a.tankSeries(tank, schema.FieldDissipationW); s != nil {
		heatT, heatKW, heatMethod = s.T, scale(s.V, 1e-3), "tank dissipation (dissipation_w) integrated over the cycle"
	} else if in, out := a.tankSeries(tank, schema.FieldWaterInC), a.tankSeries(tank, schema.FieldWaterOutC); in != nil && out != nil &&
		(a.tankSeries(tank, schema.FieldWaterFlowLPM) != nil || a.tankSeries(tank, "water_flow_m3h") != nil) {
		var flow []float64
		if f := a.tankSeries(tank, schema.FieldWaterFlowLPM); f != nil {
			flow = f.V
		} else {
			flow = scale(a.tankSeries(tank, "water_flow_m3h").V, 1000.0/60)
		}
		heatT = in.T
		heatKW = FlowHeatKW(flow, Difference(out.V, in.V), WaterDensityKgPerL, WaterHeatCapacityKJPerKgK)
		heatMethod = fmt.Sprintf("facility water flow × (water_out_c − water_in_c) × %.3g kg/L × %.4g kJ/(kg·K)", WaterDensityKgPerL, WaterHeatCapacityKJPerKgK)
	} else if in, out, f := a.tankSeries(tank, schema.FieldCoolantInC), a.tankSeries(tank, schema.FieldCoolantOutC), a.tankSeries(tank, schema.FieldCoolantFlowLPM); in != nil && out != nil && f != nil {
		heatT = in.T
		heatKW = FlowHeatKW(f.V, Difference(in.V, out.V), o.CoolantDensityKgPerL, o.CoolantHeatCapacityKJPerKgK)
		heatMethod = fmt.Sprintf("coolant flow × (coolant_in_c − coolant_out_c) × %.3g kg/L × %.3g kJ/(kg·K)", o.CoolantDensityKgPerL, o.CoolantHeatCapacityKJPerKgK)
	} else {
		heatWhy = "no dissipation, water flow with in/out temperatures, or coolant flow with in/out temperatures recorded"
	}

	cons := a.tankSeries(tank, schema.FieldConsumptionW)
	var offW float64
	var haveOff bool
	if cons != nil {
		offW, haveOff = OffMean(cons.V, active, threshold)
	}
	coolant := a.tankSeries(tank, schema.FieldCoolantTempC)
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
