package analysis

import (
	"math"
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
