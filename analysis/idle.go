package analysis

import (
	"fmt"
	"math"
)

// IdleStats describes a series at rest: its minimum, mean and maximum over
// the baseline phase, and how many readings they rest on.
type IdleStats struct {
	Min, Mean, Max float64
	N              int
}

// Idle returns the statistics of the finite readings of v with
// from <= t < to. The mean is the plain mean of the readings, which at a
// fixed sampling interval is the time average; gaps simply contribute no
// readings. t must be sorted.
func Idle(t, v []float64, from, to float64) (IdleStats, error) {
	i, j := window(t, from, to)
	st := IdleStats{Min: math.Inf(1), Max: math.Inf(-1)}
	sum := 0.0
	for k := i; k < j; k++ {
		x := v[k]
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		st.N++
		sum += x
		st.Min = math.Min(st.Min, x)
		st.Max = math.Max(st.Max, x)
	}
	if st.N == 0 {
		return IdleStats{}, fmt.Errorf("no readings in the baseline (%.0f s to %.0f s)", from, to)
	}
	st.Mean = sum / float64(st.N)
	return st, nil
}
