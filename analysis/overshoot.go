package analysis

import (
	"fmt"
	"math"
)

// overshootWindowS is the width of the means a load's readings are
// smoothed into before looking for a peak the temperature falls back from:
// wide enough that whole-degree readings and their noise (about ±0.3 °C on
// an H100) do not make a fall, narrow enough to place the peak.
const overshootWindowS = 10

// loadOvershoot returns an error when a component's temperature peaked
// during the load and then fell back, at the steady power gpuPowerSteady
// has already checked, by more than max(2 °C, 10 % of its rise). A
// first-order system under constant power never falls back: when it does,
// the cooling changed during the load (fans ramping up, a coolant loop's
// controller reacting), and neither one time constant nor two describes
// the rise. Measured on an H100 under DGEMM at its 700 W cap for 420 s:
// the core peaked 30 °C over idle after 45 s and fell 10 °C over the next
// six minutes while the server's fans caught up.
func loadOvershoot(t, v []float64, load Span, idleMean float64) error {
	o, ok := overshootOf(t, v, load, idleMean)
	if !ok {
		return nil
	}
	return fmt.Errorf("the temperature peaked %.1f °C over idle %.0f s into the load and fell %.1f °C by its end at steady power: the cooling changed during the load (fans or a coolant controller reacting), so no time constant describes the rise",
		o.peakC-idleMean, o.peakAtS-load.Start, o.fallC)
}

// overshoot is where a load's 10 s means peaked (peakC at peakAtS, the
// middle of that mean) and how far they fell from there by the load's end.
type overshoot struct {
	peakC, peakAtS, fallC float64
}

// overshootOf finds the load's peak of 10 s means and says whether the
// temperature fell back from it as loadOvershoot describes.
func overshootOf(t, v []float64, load Span, idleMean float64) (overshoot, bool) {
	i, j := window(t, load.Start, load.End)
	if j-i < 3*overshootWindowS {
		return overshoot{}, false
	}
	var mt, mv []float64
	for lo := load.Start; lo < load.End; lo += overshootWindowS {
		a, b := window(t, lo, math.Min(lo+overshootWindowS, load.End))
		if b-a == 0 {
			continue
		}
		var s float64
		for _, x := range v[a:b] {
			s += x
		}
		mt, mv = append(mt, lo+overshootWindowS/2), append(mv, s/float64(b-a))
	}
	if len(mv) < 3 {
		return overshoot{}, false
	}
	peak := 0
	for k := range mv {
		if mv[k] > mv[peak] {
			peak = k
		}
	}
	o := overshoot{peakC: mv[peak], peakAtS: mt[peak], fallC: mv[peak] - mv[len(mv)-1]}
	rise := mv[peak] - idleMean
	return o, rise > 0 && o.fallC > math.Max(2, 0.1*rise)
}
