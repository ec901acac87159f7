package tune

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/influxdata/line-protocol/v2/lineprotocol"
)

// Thermal is what the sensors recorded over an evaluation's measured
// iterations. A reading no sensor gave is NaN, never 0.
type Thermal struct {
	PeakTempC  float64
	MinMarginC float64 // least slowdown_c - temp_c of a GPU
	PeakPowerW float64
	EnergyJ    float64 // summed over every energy counter
	Throttled  []string
	Samples    int
}

// MarshalJSON leaves out what no sensor read.
func (th Thermal) MarshalJSON() ([]byte, error) {
	m := map[string]any{"samples": th.Samples}
	for k, v := range map[string]float64{"peak_temp_c": th.PeakTempC, "min_margin_c": th.MinMarginC,
		"peak_power_w": th.PeakPowerW, "energy_j": th.EnergyJ} {
		if !math.IsNaN(v) {
			m[k] = v
		}
	}
	if len(th.Throttled) > 0 {
		m["throttled"] = th.Throttled
	}
	return json.Marshal(m)
}

// thermalOf reads a run's points between from and to.
func thermalOf(dir string, from, to time.Time) (Thermal, error) {
	th := Thermal{PeakTempC: math.NaN(), MinMarginC: math.NaN(), PeakPowerW: math.NaN(), EnergyJ: math.NaN()}
	type counter struct {
		first, last   float64
		tFirst, tLast time.Time
	}
	energy := map[string]*counter{}
	throttled := map[string]bool{}
	err := rundir.ForEachPoint(dir, func(p *point.Point) error {
		if p.Time.Before(from) || p.Time.After(to) || p.Measurement == "event" {
			return nil
		}
		th.Samples++
		for _, f := range p.Fields {
			v, ok := p.Float(f.Key)
			switch {
			case f.Key == "throttle_thermal" || f.Key == "throttle_power":
				if f.Value.Kind() == lineprotocol.Bool && f.Value.BoolV() {
					throttled[p.Measurement+" "+p.Tag("gpu")+" "+strings.TrimPrefix(f.Key, "throttle_")] = true
				}
			case !ok:
			case strings.HasSuffix(f.Key, "temp_c"):
				th.PeakTempC = nanMax(th.PeakTempC, v)
				if f.Key == "temp_c" {
					if lim, ok := p.Float("slowdown_c"); ok {
						th.MinMarginC = nanMin(th.MinMarginC, lim-v)
					}
				}
			case f.Key == "power_w":
				th.PeakPowerW = nanMax(th.PeakPowerW, v)
			case f.Key == "energy_j":
				k := p.SeriesKey()
				if c := energy[k]; c == nil {
					energy[k] = &counter{v, v, p.Time, p.Time}
				} else {
					c.last, c.tLast = v, p.Time
				}
			}
		}
		return nil
	}, nil)
	for _, c := range energy {
		// The samples inside the window span less of it than the window (up
		// to an interval at each end), so the counter's mean power between
		// its first and last sample is taken over the whole window. A
		// counter that went backwards wrapped or reset: its delta is unknown.
		span := c.tLast.Sub(c.tFirst).Seconds()
		if d := c.last - c.first; d > 0 && span > 0 {
			th.EnergyJ = nanSum(th.EnergyJ, d/span*to.Sub(from).Seconds())
		}
	}
	for k := range throttled {
		th.Throttled = append(th.Throttled, k)
	}
	sort.Strings(th.Throttled)
	return th, err
}

func nanMax(a, b float64) float64 {
	if math.IsNaN(a) || b > a {
		return b
	}
	return a
}

func nanMin(a, b float64) float64 {
	if math.IsNaN(a) || b < a {
		return b
	}
	return a
}

func nanSum(a, b float64) float64 {
	if math.IsNaN(a) {
		return b
	}
	return a + b
}
