package analysis

import (
	"fmt"
	"math"
)

// MeanOver returns the mean of the finite readings of v with from <= t <= to.
// t must be sorted.
func MeanOver(t, v []float64, from, to float64) (float64, error) {
	i, j := window(t, from, math.Nextafter(to, math.Inf(1)))
	sum, n := 0.0, 0
	for k := i; k < j; k++ {
		if x := v[k]; !math.IsNaN(x) && !math.IsInf(x, 0) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("no readings between %.0f s and %.0f s", from, to)
	}
	return sum / float64(n), nil
}

// Slowdown asks whether a workload runs slower when hot: it regresses each
// iteration's runtime (s) on the component's mean temperature during that
// iteration (°C). The fit's slope is in s/°C; a positive slope with a small
// p-value is a significant thermal slowdown.
func Slowdown(meanTempC, runtimeS []float64) (Fit, error) {
	f, err := LinearFit(meanTempC, runtimeS)
	if err != nil {
		return Fit{}, fmt.Errorf("runtime on temperature: %w", err)
	}
	return f, nil
}
