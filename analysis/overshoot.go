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
	i, j := window(t, load.Start, load.End)
	if j-i < 3*overshootWindowS {
		return nil
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
		return nil
	}
	peak := 0
	for k := range mv {
		if mv[k] > mv[peak] {
			peak = k
		}
	}
	end := mv[len(mv)-1]
	rise, fall := mv[peak]-idleMean, mv[peak]-end
	if rise <= 0 || fall <= math.Max(2, 0.1*rise) {
		return nil
	}
	return fmt.Errorf("the temperature peaked %.1f °C over idle %.0f s into the load and fell %.1f °C by its end at steady power: the cooling changed during the load (fans or a coolant controller reacting), so no time constant describes the rise",
		rise, mt[peak]-load.Start, fall)
}
