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

// SlowdownResult is one component's runtime-on-temperature regression.
type SlowdownResult struct {
	Component   string   `json:"component"`
	N           int      `json:"n"`
	SlopeSPerC  *float64 `json:"slope_s_per_c"`
	InterceptS  *float64 `json:"intercept_s"`
	R2          *float64 `json:"r2"`
	PValue      *float64 `json:"p_value"`
	Significant bool     `json:"significant"`
	NotComputed string   `json:"not_computed,omitempty"`
}

// slowdown regresses per-iteration runtimes on each component's mean
// temperature during the iteration.
func (a *analyzer) slowdown() {
	rep := a.rep
	rep.Slowdown = []SlowdownResult{}
	w := a.r.Meta.Workload
	if w == nil || len(w.Iterations) == 0 {
		rep.NotComputed["slowdown"] = "run.json lists no workload iterations"
		return
	}
	if len(rep.Components) == 0 {
		rep.NotComputed["slowdown"] = "no temperature to regress the runtimes on"
		return
	}
	var its []struct{ from, to, rt float64 }
	for _, it := range w.Iterations {
		if it.ExitStatus != 0 || it.RuntimeS <= 0 || !it.End.After(it.Start) {
			continue
		}
		its = append(its, struct{ from, to, rt float64 }{it.Start.Sub(a.r.Start).Seconds(), it.End.Sub(a.r.Start).Seconds(), it.RuntimeS})
	}
	if len(its) < 3 {
		s := "s"
		if len(its) == 1 {
			s = ""
		}
		rep.NotComputed["slowdown"] = fmt.Sprintf("only %d successful iteration%s with a runtime; a regression needs at least 3", len(its), s)
		return
	}
	for _, cr := range rep.Components {
		c := cr.Series
		sr := SlowdownResult{Component: c.ID}
		if c.Kind == KindWater {
			continue
		}
		if c.Err != nil {
			sr.NotComputed = c.Err.Error()
			rep.Slowdown = append(rep.Slowdown, sr)
			continue
		}
		var x, y []float64
		for _, it := range its {
			if m, err := MeanOver(c.T, c.V, it.from, it.to); err == nil {
				x = append(x, m)
				y = append(y, it.rt)
			}
		}
		sr.N = len(x)
		f, err := Slowdown(x, y)
		if err != nil {
			sr.NotComputed = err.Error()
		} else {
			sr.SlopeSPerC, sr.InterceptS, sr.R2, sr.PValue = ptr(f.Slope), ptr(f.Intercept), ptr(f.R2), ptr(f.PValue)
			sr.Significant = f.PValue < a.o.Alpha && f.Slope > 0
		}
		rep.Slowdown = append(rep.Slowdown, sr)
	}
}
