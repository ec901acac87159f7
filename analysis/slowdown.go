package analysis

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
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

// SlowdownResult is one component's runtime-against-temperature
// regression. Its JSON keeps the names it had when the section was called
// thermal slowdown; "slowdown" to an engineer means NVIDIA's clock
// throttling, which this is not (the GPU's own reasons are Throttle).
type SlowdownResult struct {
	Component  string   `json:"component"`
	N          int      `json:"n"`
	SlopeSPerC *float64 `json:"slope_s_per_c"`
	InterceptS *float64 `json:"intercept_s"`
	R2         *float64 `json:"r2"`
	PValue     *float64 `json:"p_value"`
	// Significant says the slope is positive with p < alpha: iterations
	// ran longer when this component was hotter.
	Significant bool `json:"significant"`
	// RuntimeChangePctPer10C is the effect's size: the slope times 10 °C
	// as a percentage of the mean runtime, with its (1 − alpha) interval
	// from the slope's. A significant +0.02 % per 10 °C is real and
	// irrelevant; this says which.
	RuntimeChangePctPer10C   *float64 `json:"runtime_change_pct_per_10c"`
	RuntimeChangeLoPctPer10C *float64 `json:"runtime_change_lo_pct_per_10c"`
	RuntimeChangeHiPctPer10C *float64 `json:"runtime_change_hi_pct_per_10c"`
	// TempSpanC is the range of the iterations' mean temperatures: the
	// effect is measured only over it.
	TempSpanC   *float64 `json:"temp_span_c"`
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
	var its []struct {
		from, to, rt float64
		gpu          string
	}
	for _, it := range w.Iterations {
		if it.ExitStatus != 0 || it.RuntimeS <= 0 || !it.End.After(it.Start) {
			continue
		}
		its = append(its, struct {
			from, to, rt float64
			gpu          string
		}{it.Start.Sub(a.r.Start).Seconds(), it.End.Sub(a.r.Start).Seconds(), it.RuntimeS, it.Device})
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
		// A GPU's own iterations only, where they name their GPU (a
		// survey runs one job per GPU): another GPU's runtimes do not
		// depend on this one's temperature.
		gpu := ""
		if c.Kind == KindGPUCore || c.Kind == KindGPUMem {
			gpu = c.ID[strings.LastIndex(c.ID, ":")+1:]
		}
		var x, y []float64
		for _, it := range its {
			if it.gpu != "" && it.gpu != gpu {
				continue
			}
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
			effect(&sr, f, x, y, a.o.Alpha)
		}
		rep.Slowdown = append(rep.Slowdown, sr)
	}
}

// effect sizes a runtime-on-temperature fit: the runtime change per 10 °C
// as a percentage of the mean runtime, with its 1 − alpha interval.
func effect(sr *SlowdownResult, f Fit, tempC, runtimeS []float64, alpha float64) {
	mean := stat.Mean(runtimeS, nil)
	if mean <= 0 || f.N < 3 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range tempC {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	sr.TempSpanC = ptr(hi - lo)
	pct := func(slope float64) *float64 { return ptr(100 * 10 * slope / mean) }
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(f.N - 2)}.Quantile(1 - alpha/2)
	sr.RuntimeChangePctPer10C = pct(f.Slope)
	sr.RuntimeChangeLoPctPer10C = pct(f.Slope - tq*f.SlopeSE)
	sr.RuntimeChangeHiPctPer10C = pct(f.Slope + tq*f.SlopeSE)
}
