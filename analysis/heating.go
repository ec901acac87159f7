package analysis

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// Peak returns the largest finite reading of v with from <= t <= to and the
// first time it was reached. t must be sorted.
func Peak(t, v []float64, from, to float64) (atS, peak float64, err error) {
	i, j := window(t, from, math.Nextafter(to, math.Inf(1)))
	peak, k := math.Inf(-1), -1
	for n := i; n < j; n++ {
		if x := v[n]; !math.IsNaN(x) && !math.IsInf(x, 0) && x > peak {
			peak, k = x, n
		}
	}
	if k < 0 {
		return 0, 0, fmt.Errorf("no readings between %.0f s and %.0f s", from, to)
	}
	return t[k], peak, nil
}

// HeatInterval returns the heat-accumulation interval in seconds per °C, the
// reference study's measure of how fast a component heats under a load:
//
//	(t_peak - load.Start) / (T_peak - idleMean)
//
// where T_peak is the largest reading during the load and t_peak the first
// time it was reached. It also returns t_peak and T_peak. A peak less than
// minRise °C above the idle mean is refused rather than turned into a huge,
// noise-driven interval; so is a peak reached at the very start of the load
// (a rise faster than the sampling resolves).
func HeatInterval(t, v []float64, load Span, idleMean, minRise float64) (sPerC, tPeak, peak float64, err error) {
	tPeak, peak, err = Peak(t, v, load.Start, load.End)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("load phase: %w", err)
	}
	rise := peak - idleMean
	if rise < minRise || rise <= 0 {
		return 0, tPeak, peak, fmt.Errorf("load-phase peak %.2f °C is only %.2f °C above the idle mean (minimum rise %.2g °C)", peak, rise, minRise)
	}
	if tPeak <= load.Start {
		return 0, tPeak, peak, errors.New("the load-phase peak is reached at the load's first reading: a rise faster than the sampling resolves")
	}
	return (tPeak - load.Start) / rise, tPeak, peak, nil
}

// SteepestRise returns the steepest sustained rise of v between from and to,
// as seconds per °C, with the start of the window where it occurs. Each
// window of length win seconds starting at a reading is fitted by least
// squares; a window counts only when its readings span at least 90 % of win,
// number at least three, and leave no gap longer than maxGap. The steepest
// rise is the inverse of the largest fitted slope; a series that never rises
// has none. v must hold finite readings and t be sorted.
func SteepestRise(t, v []float64, from, to, win, maxGap float64) (sPerC, atS float64, err error) {
	if win <= 0 {
		return 0, 0, fmt.Errorf("fit window %.3g s is not positive", win)
	}
	i0, j0 := window(t, from, math.Nextafter(to, math.Inf(1)))
	best, bestAt, windows := math.Inf(-1), 0.0, 0
	for i := i0; i < j0; i++ {
		end := t[i] + win
		if end > to+1e-9 {
			break
		}
		k := i
		ok := true
		for k+1 < j0 && t[k+1] <= end+1e-9 {
			if t[k+1]-t[k] > maxGap {
				ok = false
				break
			}
			k++
		}
		if !ok || k-i+1 < 3 || t[k]-t[i] < 0.9*win {
			continue
		}
		windows++
		if _, s := stat.LinearRegression(t[i:k+1], v[i:k+1], nil, false); s > best {
			best, bestAt = s, t[i]
		}
	}
	if windows == 0 {
		return 0, 0, fmt.Errorf("no %.0f s window between %.0f s and %.0f s is covered by readings without gaps", win, from, to)
	}
	if best <= 0 {
		return 0, bestAt, errors.New("the series never rises over a fit window")
	}
	return 1 / best, bestAt, nil
}
