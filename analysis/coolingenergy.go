package analysis

import (
	"fmt"
	"math"
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
