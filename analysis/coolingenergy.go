package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Integral is the time integral of a series over a span, with how much of
// the span it rests on: GapS seconds of the span had no reading within
// maxGap (interpolated linearly across a gap inside the data, or not covered
// at all before the first or after the last reading).
type Integral struct {
	Value float64
	GapS  float64
}

// Integrate returns the integral over [from, to] of the piecewise-linear
// curve through the finite readings of v (the trapezoid rule, clipped at
// from and to), in the unit of v times seconds. Parts of the span outside
// the readings add nothing and count as gap; stretches between readings
// more than maxGap apart are bridged linearly and counted as gap. t must be
// sorted.
func Integrate(t, v []float64, from, to, maxGap float64) (Integral, error) {
	if to < from {
		return Integral{}, fmt.Errorf("span ends (%.0f s) before it starts (%.0f s)", to, from)
	}
	t, v = Finite(t, v)
	i, j := window(t, from, math.Nextafter(to, math.Inf(1)))
	// Include the readings just outside the span so edges interpolate.
	if i > 0 {
		i--
	}
	if j < len(t) {
		j++
	}
	if j-i < 2 {
		return Integral{}, fmt.Errorf("fewer than two readings around %.0f s to %.0f s", from, to)
	}
	var res Integral
	covered := 0.0
	for k := i; k+1 < j; k++ {
		t0, t1 := t[k], t[k+1]
		a, b := math.Max(t0, from), math.Min(t1, to)
		if b <= a {
			continue
		}
		lerp := func(x float64) float64 { return v[k] + (x-t0)/(t1-t0)*(v[k+1]-v[k]) }
		res.Value += (b - a) * (lerp(a) + lerp(b)) / 2
		covered += b - a
		if t1-t0 > maxGap {
			res.GapS += b - a
		}
	}
	res.GapS += (to - from) - covered
	return res, nil
}

// Unaccounted returns, at each reading of the node's power pNode (W), the
// node power that no component accounts for: pNode minus the sum of the
// component powers (GPUs, RAPL packages and DRAM) interpolated to its times.
// Where a component has no reading within maxGap the result is NaN rather
// than a sum that silently lost a term. partT[i] and partV[i] are the times
// and readings of component i.
func Unaccounted(tNode, pNode []float64, partT, partV [][]float64, maxGap float64) []float64 {
	out := make([]float64, len(pNode))
	for k, x := range pNode {
		for i := range partT {
			if math.IsNaN(x) {
				break
			}
			c, ok := interpolate(partT[i], partV[i], tNode[k], maxGap)
			if !ok || math.IsNaN(c) {
				x = math.NaN()
				break
			}
			x -= c
		}
		out[k] = x
	}
	return out
}

// Offset returns v - c element by element.
func Offset(v []float64, c float64) []float64 {
	out := make([]float64, len(v))
	for k, x := range v {
		out[k] = x - c
	}
	return out
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

// coolingEnergy integrates the energy spent on cooling from the start of the
// load until every component is back at idle.
func (a *analyzer) coolingEnergy() {
	ce := &a.rep.CoolingEnergy
	r, o := a.r, a.o
	tankCons := r.Find(schema.Tank, schema.FieldConsumptionW, nil)
	node := a.nodePower()
	cooling := a.cooling(len(node) > 0)
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
			if c.DidNotRise {
				continue // never left idle
			}
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
		for _, s := range append(r.Find(schema.GPU, schema.FieldPowerW, nil), r.Find(schema.RAPL, schema.FieldPowerW, func(s *Series) bool {
			z := s.Tag(schema.TagZone)
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
	all := a.r.Find(schema.PDU, schema.FieldPowerW, func(s *Series) bool { return s.CheckTimes() == nil })
	for _, pick := range []func(*Series) bool{
		func(s *Series) bool { return s.Tag(schema.TagOutlet) != "" },
		func(s *Series) bool {
			return s.Tag(schema.TagOutlet) == "" && s.Tag(schema.TagPhase) == "" && s.Tag(schema.TagBank) == ""
		},
		func(s *Series) bool { return s.Tag(schema.TagPhase) != "" },
		func(s *Series) bool { return s.Tag(schema.TagBank) != "" },
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

// cooling says how the run's machine was cooled: the --cooling option,
// else run.json's label cooling, else what was recorded: any reading of a
// tank (its coolant, its consumption) means the hardware sat in it, node
// power from a PDU without a tank means air.
func (a *analyzer) cooling(nodePower bool) string {
	for _, c := range []string{a.o.Cooling, a.r.Meta.Labels["cooling"]} {
		if c == "immersion" || c == "air" {
			return c
		}
	}
	for _, s := range a.r.Series {
		if s.Measurement == schema.Tank {
			return "immersion"
		}
	}
	if nodePower {
		return "air"
	}
	return "unknown"
}
