package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Component kinds, as docs/data-model.md names them for analysis.
const (
	KindGPUCore = "gpu_core" // gpu.temp_c
	KindGPUMem  = "gpu_mem"  // gpu.mem_temp_c
	KindCPU     = "cpu"      // hwmon cpu_core/cpu_package/cpu, one per chip
	KindNVMe    = "nvme"     // nvme.temp_c, or hwmon class nvme
	KindCoolant = "coolant"  // tank.coolant_temp_c
	KindWater   = "water"    // tank.water_in_c / water_out_c
)

// kindOrder is the order components are listed in.
var kindOrder = map[string]int{KindGPUCore: 0, KindGPUMem: 1, KindCPU: 2, KindNVMe: 3, KindCoolant: 4, KindWater: 5}

// Component is one temperature the report describes: a GPU's core or memory,
// a CPU chip, an NVMe drive, a tank's coolant or water.
type Component struct {
	ID   string
	Kind string
	Host string
	// Name says what was measured, for people: the GPU model, the chip and
	// sensor labels, the tank.
	Name string
	// T and V are the component's finite readings (°C) with sorted times.
	// For a CPU chip V is the mean over its core sensors at each tick and
	// Min and Max the band between the coolest and hottest of them.
	T, V     []float64
	Min, Max []float64
	// Sensors is how many sensors V averages (1 except for CPU chips).
	Sensors int
	// Tank names the tank of a coolant or water component.
	Tank string
	// Err says why the component cannot be analysed (timestamps that go
	// backwards, no finite readings); T and V are then empty.
	Err error
}

// Components finds every temperature component of r. A run with several
// hosts gets the host as a prefix of each ID.
func Components(r *Run) []*Component {
	var out []*Component
	single := func(kind, id, name, tank string, s *Series) {
		c := &Component{ID: id, Kind: kind, Host: s.Tag(schema.TagHost), Name: name, Tank: tank, Sensors: 1}
		if err := s.CheckTimes(); err != nil {
			c.Err = fmt.Errorf("%s: %w", s.Key(), err)
		} else {
			c.T, c.V = Finite(s.T, s.V)
		}
		out = append(out, c)
	}
	for _, s := range r.Find(schema.GPU, schema.FieldTempC, nil) {
		single(KindGPUCore, "gpu_core:"+s.Tag(schema.TagGPU), strings.TrimSpace(s.Tag(schema.TagModel)+" "+s.Tag(schema.TagUUID)), "", s)
	}
	for _, s := range r.Find(schema.GPU, schema.FieldMemTempC, nil) {
		single(KindGPUMem, "gpu_mem:"+s.Tag(schema.TagGPU), strings.TrimSpace(s.Tag(schema.TagModel)+" "+s.Tag(schema.TagUUID)), "", s)
	}
	out = append(out, cpuChips(r)...)
	nvme := r.Find(schema.NVMe, schema.FieldTempC, nil)
	for _, s := range nvme {
		id := "nvme:" + s.Tag(schema.TagDevice)
		if sn := s.Tag(schema.TagSensor); sn != "Composite" && sn != "" {
			id += "/" + sn
		}
		single(KindNVMe, id, strings.TrimSpace(s.Tag(schema.TagModel)+" "+s.Tag(schema.TagSensor)), "", s)
	}
	if len(nvme) == 0 {
		for _, s := range r.Find(schema.Hwmon, schema.FieldTempC, func(s *Series) bool { return s.Tag(schema.TagClass) == "nvme" }) {
			label := s.Tag(schema.TagLabel)
			if label == "" {
				label = s.Tag(schema.TagSensor)
			}
			single(KindNVMe, "nvme:"+s.Tag(schema.TagChip)+"/"+label, s.Tag(schema.TagChipName)+" "+label, "", s)
		}
	}
	for _, s := range r.Find(schema.Tank, schema.FieldCoolantTempC, nil) {
		single(KindCoolant, "coolant:"+s.Tag(schema.TagTank), "coolant of tank "+s.Tag(schema.TagTank), s.Tag(schema.TagTank), s)
	}
	for _, f := range []string{schema.FieldWaterInC, schema.FieldWaterOutC} {
		side := strings.TrimSuffix(strings.TrimPrefix(f, "water_"), "_c")
		for _, s := range r.Find(schema.Tank, f, nil) {
			single(KindWater, "water_"+side+":"+s.Tag(schema.TagTank), "facility water "+side+" of tank "+s.Tag(schema.TagTank), s.Tag(schema.TagTank), s)
		}
	}
	hosts := map[string]bool{}
	for _, c := range out {
		hosts[c.Host] = true
	}
	if len(hosts) > 1 {
		for _, c := range out {
			if c.Host != "" {
				c.ID = c.Host + "/" + c.ID
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if kindOrder[out[i].Kind] != kindOrder[out[j].Kind] {
			return kindOrder[out[i].Kind] < kindOrder[out[j].Kind]
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// cpuClasses ranks the hwmon classes a CPU chip's average is taken over:
// the per-core sensors when the chip has them (coretemp), else the die and
// CCD sensors (k10temp, see k10temp), else the package sensor alone.
var cpuClasses = []string{"cpu_core", "cpu", "cpu_package"}

// cpuChips groups hwmon CPU temperatures by host and chip, and averages each
// chip's sensors of its best class tick by tick.
func cpuChips(r *Run) []*Component {
	type chipKey struct{ host, chip string }
	byChip := map[chipKey]map[string][]*Series{}
	var keys []chipKey
	for _, s := range r.Find(schema.Hwmon, schema.FieldTempC, nil) {
		class := s.Tag(schema.TagClass)
		if class != "cpu_core" && class != "cpu_package" && class != "cpu" {
			continue
		}
		k := chipKey{s.Tag(schema.TagHost), s.Tag(schema.TagChip)}
		if byChip[k] == nil {
			byChip[k] = map[string][]*Series{}
			keys = append(keys, k)
		}
		byChip[k][class] = append(byChip[k][class], s)
	}
	var out []*Component
	for _, k := range keys {
		var members []*Series
		var class string
		for _, class = range cpuClasses {
			if members = byChip[k][class]; len(members) > 0 {
				break
			}
		}
		if class == "cpu" {
			members = k10temp(members)
		}
		name := members[0].Tag(schema.TagChipName)
		c := &Component{ID: "cpu:" + k.chip, Kind: KindCPU, Host: k.host, Sensors: len(members),
			Name: fmt.Sprintf("%s %s, mean of %d %s sensors", name, k.chip, len(members), class)}
		var ts, vs [][]float64
		for _, s := range members {
			if err := s.CheckTimes(); err != nil {
				c.Err = fmt.Errorf("%s: %w", s.Key(), err)
				break
			}
			t, v := Finite(s.T, s.V)
			ts, vs = append(ts, t), append(vs, v)
		}
		if c.Err == nil {
			c.T, c.V, c.Min, c.Max = MeanBand(ts, vs, 1e-3)
			if len(c.T) == 0 {
				c.Err = fmt.Errorf("chip %s: no finite readings", k.chip)
			}
		}
		out = append(out, c)
	}
	return out
}

// k10temp picks, among an AMD chip's sensors, those that measure the dies:
// the per-CCD sensors when there are any, else Tdie. Tctl is a control value
// that some parts offset by up to 27 °C, so it is averaged only when it is
// all there is.
func k10temp(ss []*Series) []*Series {
	var ccd, die []*Series
	for _, s := range ss {
		switch l := s.Tag(schema.TagLabel); {
		case strings.HasPrefix(l, "Tccd"):
			ccd = append(ccd, s)
		case l == "Tdie":
			die = append(die, s)
		}
	}
	switch {
	case len(ccd) > 0:
		return ccd
	case len(die) > 0:
		return die
	}
	return ss
}

// MeanBand merges several series sampled at the same ticks into their mean
// and their min-max band at each tick. Readings within tol seconds of each
// other count as one tick; a sensor that missed a tick simply does not take
// part in it. Every series must have sorted times.
func MeanBand(ts, vs [][]float64, tol float64) (t, mean, lo, hi []float64) {
	idx := make([]int, len(ts))
	for {
		first := math.Inf(1)
		for m := range ts {
			if idx[m] < len(ts[m]) && ts[m][idx[m]] < first {
				first = ts[m][idx[m]]
			}
		}
		if math.IsInf(first, 1) {
			return t, mean, lo, hi
		}
		sum, n, mn, mx := 0.0, 0, math.Inf(1), math.Inf(-1)
		for m := range ts {
			if idx[m] < len(ts[m]) && ts[m][idx[m]] <= first+tol {
				x := vs[m][idx[m]]
				sum += x
				n++
				mn, mx = math.Min(mn, x), math.Max(mx, x)
				idx[m]++
			}
		}
		t = append(t, first)
		mean = append(mean, sum/float64(n))
		lo = append(lo, mn)
		hi = append(hi, mx)
	}
}

// ComponentResult is the thermal behaviour of one component. Times (_at_s)
// are seconds since the run's start.
type ComponentResult struct {
	ID                string            `json:"id"`
	Kind              string            `json:"kind"`
	Host              string            `json:"host,omitempty"`
	Name              string            `json:"name,omitempty"`
	Sensors           int               `json:"sensors"`
	Readings          int               `json:"readings"`
	IdleMinC          *float64          `json:"idle_min_c"`
	IdleMeanC         *float64          `json:"idle_mean_c"`
	IdleMaxC          *float64          `json:"idle_max_c"`
	MaxC              *float64          `json:"max_c"`
	MaxAtS            *float64          `json:"max_at_s"`
	LoadPeakC         *float64          `json:"load_peak_c"`
	LoadPeakAtS       *float64          `json:"load_peak_at_s"`
	HeatIntervalSPerC *float64          `json:"heat_interval_s_per_c"`
	SteepestSPerC     *float64          `json:"steepest_s_per_c"`
	SteepestAtS       *float64          `json:"steepest_at_s"`
	ReturnToIdleS     *float64          `json:"return_to_idle_s"`
	CoolantDiffC      *float64          `json:"coolant_peak_diff_c"`
	CoolantDiffAtS    *float64          `json:"coolant_peak_diff_at_s"`
	CoolantLagS       *float64          `json:"coolant_lag_s"`
	LoadFit           *LoadFit          `json:"load_fit"`
	CooldownFit       *CoolFit          `json:"cooldown_fit"`
	HeatIntervalBand  *HeatIntervalBand `json:"heat_interval_band"`
	// Limit is the device's own limit as its driver recorded it, and
	// MarginC how far the peak (max_c) stayed below it; negative above it.
	Limit   *Limit   `json:"limit"`
	MarginC *float64 `json:"margin_c"`
	// RoughLoadFit is the load fit refused because the load lasted under
	// three time constants (NotComputed's load_fit says so): a rough
	// estimate, not reported, for the hold's model (node.ModelFromRun).
	RoughLoadFit *LoadFit `json:"-"`
	// Rise63S and Rise90S are the seconds from the start of the load until
	// the smoothed readings first covered 63 % and 90 % of their rise.
	Rise63S *float64 `json:"rise_63_s"`
	Rise90S *float64 `json:"rise_90_s"`
	// DidNotRise is set when the load peak stayed within min_rise_c of the
	// idle mean: durations and fits of a rise that did not happen are not
	// computed (a "return to idle" of 0.0004 s is not a measurement).
	DidNotRise bool `json:"did_not_rise,omitempty"`
	// Throttle is how long a GPU core's clocks were held back during the
	// load, by reason (GPU cores only; the memory shares its GPU's).
	Throttle    *Throttle         `json:"throttle"`
	NotComputed map[string]string `json:"not_computed,omitempty"`
	// Episodes are the component's results per load episode of its device
	// (episodes.go), in a recording without phases.
	Episodes []EpisodeResult `json:"episodes,omitempty"`
	// Series holds the readings, for plots; it is not part of the JSON.
	Series *Component `json:"-"`
}

// component computes one component's table row.
func (a *analyzer) component(c *Component, coolants []*Component) ComponentResult {
	res := ComponentResult{ID: c.ID, Kind: c.Kind, Host: c.Host, Name: c.Name, Sensors: c.Sensors,
		Readings: len(c.T), Series: c, NotComputed: map[string]string{}}
	why := res.NotComputed
	all := []string{"idle_min_c", "idle_mean_c", "idle_max_c", "max_c", "load_peak_c", "heat_interval_s_per_c",
		"steepest_s_per_c", "return_to_idle_s", "coolant_peak_diff_c", "coolant_lag_s", "load_fit", "cooldown_fit", "heat_interval_band",
		"rise_63_s", "rise_90_s", "margin_c"}
	setAll := func(reason string, keys ...string) {
		for _, k := range keys {
			if _, done := why[k]; !done {
				why[k] = reason
			}
		}
	}
	if c.Err != nil {
		setAll(c.Err.Error(), all...)
		return res
	}
	if len(c.T) == 0 {
		setAll("no readings", all...)
		return res
	}
	ph := a.ph
	idleKeys := []string{"idle_min_c", "idle_mean_c", "idle_max_c"}
	var idle *IdleStats
	if ph.Baseline == nil {
		setAll("no baseline phase", idleKeys...)
	} else if st, err := Idle(c.T, c.V, ph.Baseline.Start, ph.Baseline.End); err != nil {
		setAll(err.Error(), idleKeys...)
	} else {
		idle = &st
		res.IdleMinC, res.IdleMeanC, res.IdleMaxC = ptr(st.Min), ptr(st.Mean), ptr(st.Max)
	}
	coolantKeys := []string{"coolant_peak_diff_c", "coolant_lag_s"}
	if ph.Load == nil {
		setAll("no load phase", "max_c", "load_peak_c", "heat_interval_s_per_c", "steepest_s_per_c", "return_to_idle_s")
		setAll("no load phase", coolantKeys...)
		setAll("no load phase", "load_fit", "cooldown_fit", "heat_interval_band", "rise_63_s", "rise_90_s", "margin_c")
		return res
	}
	load := *ph.Load
	end := a.endS
	if ph.Cooldown != nil && !ph.Cooldown.Open {
		end = math.Max(load.End, ph.Cooldown.End)
	}
	if at, mx, err := Peak(c.T, c.V, load.Start, end); err != nil {
		why["max_c"] = "load and cooldown: " + err.Error()
	} else {
		res.MaxC, res.MaxAtS = ptr(mx), ptr(at)
	}
	if at, pk, err := Peak(c.T, c.V, load.Start, load.End); err != nil {
		why["load_peak_c"] = "load phase: " + err.Error()
	} else {
		res.LoadPeakC, res.LoadPeakAtS = ptr(pk), ptr(at)
	}
	if idle == nil {
		setAll("needs the idle statistics: "+why["idle_mean_c"], "heat_interval_s_per_c", "return_to_idle_s")
	} else {
		if hi, _, _, err := HeatInterval(c.T, c.V, load, idle.Mean, a.o.MinRise); err != nil {
			why["heat_interval_s_per_c"] = err.Error()
		} else {
			res.HeatIntervalSPerC = ptr(hi)
		}
		switch {
		case load.Open:
			why["return_to_idle_s"] = "the load phase never ended"
		default:
			if rt, err := ReturnToIdle(c.T, c.V, load.End, idle.Max, a.o.Tolerance, a.o.Hold.Seconds(), a.maxGap); err != nil {
				why["return_to_idle_s"] = err.Error()
			} else {
				res.ReturnToIdleS = ptr(rt)
			}
		}
	}
	if s, at, err := SteepestRise(c.T, c.V, load.Start, load.End, a.o.Window.Seconds(), a.maxGap); err != nil {
		why["steepest_s_per_c"] = err.Error()
	} else {
		res.SteepestSPerC, res.SteepestAtS = ptr(s), ptr(at)
	}
	a.coolantRelative(c, coolants, idle, load, end, &res)
	a.timeConstants(c, idle, &res)
	a.limitAndThrottle(c, load, &res)
	if idle != nil && res.LoadPeakC != nil {
		if rise := *res.LoadPeakC - idle.Mean; rise < a.o.MinRise {
			res.DidNotRise = true
			rel := "above"
			if rise < 0 {
				rel = "below"
			}
			reason := fmt.Sprintf("did not rise: its load peak %.1f °C is %.2f °C %s the idle mean (minimum rise %.3g °C)", *res.LoadPeakC, math.Abs(rise), rel, a.o.MinRise)
			res.HeatIntervalSPerC, res.SteepestSPerC, res.SteepestAtS, res.ReturnToIdleS = nil, nil, nil, nil
			res.CoolantLagS, res.LoadFit, res.CooldownFit, res.HeatIntervalBand = nil, nil, nil, nil
			for _, k := range []string{"heat_interval_s_per_c", "steepest_s_per_c", "return_to_idle_s", "load_fit", "cooldown_fit", "heat_interval_band", "rise_63_s", "rise_90_s"} {
				why[k] = reason
			}
			if c.Kind != KindCoolant && c.Kind != KindWater {
				why["coolant_lag_s"] = reason
			}
		} else {
			for _, f := range []struct {
				key      string
				fraction float64
				dst      **float64
			}{{"rise_63_s", 1 - math.Exp(-1), &res.Rise63S}, {"rise_90_s", 0.9, &res.Rise90S}} {
				if s, err := RiseTime(c.T, c.V, load, idle.Mean, f.fraction, riseSmoothS, a.o.MinRise); err != nil {
					why[f.key] = err.Error()
				} else {
					*f.dst = ptr(s)
				}
			}
		}
	} else {
		why["rise_63_s"], why["rise_90_s"] = "needs the idle mean and the load peak", "needs the idle mean and the load peak"
	}
	if len(why) == 0 {
		res.NotComputed = nil
	}
	return res
}

// riseSmoothS is the centred moving average the times to 63 % and 90 %
// are read on: 5 s takes out whole-degree steps and ±0.3 °C noise while
// placing the crossing within ±2.5 s; the 15 s of the onset would let a
// GPU core's jump at the start of the load show 63 % after 1 s.
const riseSmoothS = 5

// limitAndThrottle fills the device's own limit, the peak's margin to it,
// and a GPU core's clock throttling during the load.
func (a *analyzer) limitAndThrottle(c *Component, load Span, res *ComponentResult) {
	if c.Kind == KindCoolant || c.Kind == KindWater {
		res.NotComputed["margin_c"] = "a coolant or water temperature has no device limit"
		return
	}
	res.Limit = DeviceLimit(a.r, c)
	switch {
	case res.Limit == nil:
		res.NotComputed["margin_c"] = "the device recorded no limit (" + strings.Join(limitFields[c.Kind].fields, ", ") + ")"
	case res.MaxC == nil:
		res.NotComputed["margin_c"] = "needs max_c: " + res.NotComputed["max_c"]
	default:
		res.MarginC = ptr(res.Limit.C - *res.MaxC)
	}
	if c.Kind == KindGPUCore {
		res.Throttle = GPUThrottle(a.r, c, load, a.intervalS)
	}
}
