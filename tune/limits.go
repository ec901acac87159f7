package tune

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/rundir"
)

// Limits are the constraints every evaluation is checked against: thermal
// ones and floors and ceilings on metrics. An evaluation that breaks one is
// recorded with why and never recommended.
type Limits struct {
	NoThrottle bool    // no thermal or power throttling
	MarginC    float64 // peak temperature at least this far below the slowdown limit (0: no check)
	// Bounds are floors and ceilings on metrics (score>=0.62): a quality a
	// fast configuration must keep.
	Bounds []Bound
}

// Bound is a floor or ceiling on a metric: the mean over the measured
// iterations of a metric the workload reports, or one of the evaluation's
// own measurements (peak_temp_c, peak_power_w, energy_j, min_margin_c,
// energy_per_work_j).
type Bound struct {
	Spec   string // as given: score>=0.62
	Metric string
	Op     string // >=, <=, > or <
	Value  float64
}

var boundRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*)\s*(>=|<=|>|<)\s*(\S+)$`)

// ParseLimits parses --constraint values: no-throttle, margin_c=N, or a
// floor or ceiling METRIC>=X, METRIC<=X, METRIC>X, METRIC<X.
func ParseLimits(specs []string) (Limits, error) {
	var l Limits
	for _, s := range specs {
		if m := boundRE.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
			v, err := strconv.ParseFloat(m[3], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return l, fmt.Errorf("--constraint %q: %q is not a number", s, m[3])
			}
			l.Bounds = append(l.Bounds, Bound{Spec: m[1] + m[2] + m[3], Metric: m[1], Op: m[2], Value: v})
			continue
		}
		switch k, v, _ := strings.Cut(s, "="); k {
		case "no-throttle":
			l.NoThrottle = true
		case "margin_c":
			m, err := strconv.ParseFloat(v, 64)
			if err != nil || m <= 0 {
				return l, fmt.Errorf("--constraint %q: margin_c wants a positive number of °C", s)
			}
			l.MarginC = m
		default:
			return l, fmt.Errorf("--constraint %q: want no-throttle, margin_c=N, or a floor or ceiling on a metric (score>=0.62, peak_temp_c<80)", s)
		}
	}
	return l, nil
}

// violation says which limit an evaluation breaks, or "": the thermal
// record, the measured iterations (whose metrics' means the bounds check)
// and the evaluation's other measurements.
func (l Limits) violation(th Thermal, measured []rundir.Iteration, m map[string]float64) string {
	var why []string
	if l.NoThrottle && len(th.Throttled) > 0 {
		why = append(why, "throttled: "+strings.Join(th.Throttled, ", "))
	}
	if l.MarginC > 0 {
		if math.IsNaN(th.MinMarginC) {
			why = append(why, "no temperature with a slowdown limit was read, so the margin cannot be checked")
		} else if th.MinMarginC < l.MarginC {
			why = append(why, fmt.Sprintf("peak %.1f °C is %.1f °C below the slowdown limit, under the %.1f °C margin", th.PeakTempC, th.MinMarginC, l.MarginC))
		}
	}
	for _, b := range l.Bounds {
		if w := b.check(measured, m); w != "" {
			why = append(why, w)
		}
	}
	return strings.Join(why, "; ")
}

// check is why the bound is broken, or "". A metric no measured iteration
// reported and the evaluation did not measure breaks it: a quality nobody
// measured is not kept.
func (b Bound) check(measured []rundir.Iteration, m map[string]float64) string {
	v, ok := meanMetric(measured, b.Metric)
	what := b.Metric
	if ok && len(measured) > 1 {
		// The evaluation's own metrics may show another statistic (a
		// median): say which value was checked.
		what = fmt.Sprintf("%s (mean of %d iterations)", b.Metric, len(measured))
	}
	if !ok {
		v, ok = m[b.Metric]
	}
	if !ok || math.IsNaN(v) {
		return fmt.Sprintf("%s: no measured iteration reported %s, so the constraint cannot be checked", b.Spec, b.Metric)
	}
	kept := map[string]bool{">=": v >= b.Value, "<=": v <= b.Value, ">": v > b.Value, "<": v < b.Value}[b.Op]
	if kept {
		return ""
	}
	side := "below the floor"
	if b.Op[0] == '<' {
		side = "above the ceiling"
	}
	return fmt.Sprintf("%s %.6g is %s %s", what, v, side, b.Spec)
}

// meanMetric is the mean of a metric over the iterations, when every one
// reported it.
func meanMetric(its []rundir.Iteration, name string) (float64, bool) {
	if len(its) == 0 {
		return math.NaN(), false
	}
	s := 0.0
	for _, it := range its {
		v, ok := it.Metrics[name]
		if !ok {
			return math.NaN(), false
		}
		s += v
	}
	return s / float64(len(its)), true
}
