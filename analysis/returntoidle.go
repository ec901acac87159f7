package analysis

import (
	"fmt"
	"math"
)

// ReturnToIdle returns the seconds from loadEnd until v is back at idle: the
// first reading from which every reading stays at or below idleMax+tolerance
// for at least hold seconds. Cooling below the idle maximum counts as idle.
// A gap longer than maxGap inside the hold breaks it (what happened in the
// gap is unknown), and so does a NaN reading. If v is already idle at
// loadEnd the answer is 0. When the hold is never completed before the end
// of the recording the error says "not reached" and how long was watched.
// t must be sorted.
func ReturnToIdle(t, v []float64, loadEnd, idleMax, tolerance, hold, maxGap float64) (float64, error) {
	if tolerance < 0 || hold < 0 {
		return 0, fmt.Errorf("tolerance %.3g °C and hold %.3g s must not be negative", tolerance, hold)
	}
	i, _ := window(t, loadEnd, loadEnd)
	if i == len(t) {
		return 0, fmt.Errorf("not reached: no readings after the end of the load (%.0f s)", loadEnd)
	}
	limit := idleMax + tolerance
	cand := -1 // first reading of the current run of idle readings
	prev := loadEnd
	for k := i; k < len(t); k++ {
		x := v[k]
		idle := !math.IsNaN(x) && x <= limit
		if cand >= 0 && t[k]-prev > maxGap {
			cand = -1 // the gap breaks the hold
		}
		prev = t[k]
		if !idle {
			cand = -1
			continue
		}
		if cand < 0 {
			cand = k
		}
		if t[k]-t[cand] >= hold {
			return t[cand] - loadEnd, nil
		}
	}
	if watched := t[len(t)-1] - loadEnd; watched < hold {
		// Too short to tell: a run cut after its load (a hold, a survey's
		// last GPU) says so in one phrase, not as a failure to cool.
		return 0, fmt.Errorf("not reached: only %.0f s recorded after the load, under the %.0f s a return to idle must hold", watched, hold)
	}
	return 0, fmt.Errorf("not reached: not back within %.3g °C of the idle maximum %.2f °C for %.0f s in the %.0f s recorded after the load",
		tolerance, idleMax, hold, t[len(t)-1]-loadEnd)
}
