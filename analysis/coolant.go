package analysis

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// PeakDifference returns the largest difference hardware minus coolant between
// from and to, and when it occurred. The coolant reading at each hardware
// reading's time is interpolated linearly between the coolant readings around
// it; a hardware reading with no coolant reading within maxGap on both sides
// is skipped. Inputs must hold finite readings with sorted times.
func PeakDifference(th, vh, tc, vc []float64, from, to, maxGap float64) (diffC, atS float64, err error) {
	i, j := window(th, from, math.Nextafter(to, math.Inf(1)))
	best, at, n := math.Inf(-1), 0.0, 0
	for k := i; k < j; k++ {
		c, ok := interpolate(tc, vc, th[k], maxGap)
		if !ok {
			continue
		}
		n++
		if d := vh[k] - c; d > best {
			best, at = d, th[k]
		}
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("no coolant readings alongside the hardware's between %.0f s and %.0f s", from, to)
	}
	return best, at, nil
}

// interpolate returns v at time x, linear between the readings around x,
// provided they are at most maxGap apart (or one of them is at x).
func interpolate(t, v []float64, x, maxGap float64) (float64, bool) {
	k := sort.SearchFloat64s(t, x)
	if k < len(t) && t[k] == x {
		return v[k], true
	}
	if k == 0 || k == len(t) || t[k]-t[k-1] > maxGap {
		return 0, false
	}
	f := (x - t[k-1]) / (t[k] - t[k-1])
	return v[k-1] + f*(v[k]-v[k-1]), true
}

// Onset returns the first time between from and to at which v, smoothed by a
// centred moving average over smooth seconds, reaches base + fraction of the
// way to its smoothed peak over the same span: the time a series can be said
// to have started responding. A smoothed peak less than minRise above base
// is no response. Inputs must be finite with sorted times.
func Onset(t, v []float64, from, to, base, fraction, smooth, minRise float64) (float64, error) {
	i, j := window(t, from, math.Nextafter(to, math.Inf(1)))
	if j-i == 0 {
		return 0, fmt.Errorf("no readings between %.0f s and %.0f s", from, to)
	}
	sm := movingAverage(t[i:j], v[i:j], smooth)
	peak := math.Inf(-1)
	for _, x := range sm {
		peak = math.Max(peak, x)
	}
	if peak-base < minRise || peak <= base {
		return 0, fmt.Errorf("rises only %.2f °C above its idle mean %.2f °C (minimum rise %.2g °C)", peak-base, base, minRise)
	}
	level := base + fraction*(peak-base)
	for k, x := range sm {
		if x >= level {
			return t[i+k], nil
		}
	}
	return 0, errors.New("never reaches its onset level") // unreachable: the peak does
}

// movingAverage returns the mean of the readings within smooth/2 seconds
// either side of each reading.
func movingAverage(t, v []float64, smooth float64) []float64 {
	out := make([]float64, len(v))
	h := smooth / 2
	lo, hi, sum := 0, 0, 0.0
	for k := range t {
		for hi < len(t) && t[hi] <= t[k]+h {
			sum += v[hi]
			hi++
		}
		for t[lo] < t[k]-h {
			sum -= v[lo]
			lo++
		}
		out[k] = sum / float64(hi-lo)
	}
	return out
}

// CoolantLag returns how many seconds the coolant's response trails the
// hardware's rise: the difference of their Onset times after from (the start
// of the load), each measured against its own idle mean. A positive lag means
// the coolant, which is all a tank's controller sees, reacts later than the
// hardware heats.
func CoolantLag(th, vh, tc, vc []float64, from, to, hwIdle, coolIdle, fraction, smooth, minRise float64) (lagS float64, err error) {
	h, err := Onset(th, vh, from, to, hwIdle, fraction, smooth, minRise)
	if err != nil {
		return 0, fmt.Errorf("hardware: %w", err)
	}
	c, err := Onset(tc, vc, from, to, coolIdle, fraction, smooth, minRise)
	if err != nil {
		return 0, fmt.Errorf("coolant: %w", err)
	}
	return c - h, nil
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
