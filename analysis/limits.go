package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Limit is the temperature a device itself declares as the one to stay
// under, as its driver recorded it.
type Limit struct {
	// Field names the recorded limit: slowdown_c (an NVIDIA GPU core
	// starts slowing its clocks), mem_max_c (GPU memory's maximum
	// operating temperature), max_c or crit_c (hwmon), warn_c or crit_c
	// (NVMe).
	Field string  `json:"field"`
	C     float64 `json:"c"`
}

// limitFields are, per component kind, the recorded limits in order of
// preference: the one at which the device starts protecting itself first.
var limitFields = map[string]struct {
	measurement string
	fields      []string
}{
	KindGPUCore: {schema.GPU, []string{schema.FieldSlowdownC, schema.FieldGPUMaxC, schema.FieldShutdownC}},
	KindGPUMem:  {schema.GPU, []string{schema.FieldMemMaxC}},
	KindCPU:     {schema.Hwmon, []string{schema.FieldMaxC, schema.FieldCritC}},
	KindNVMe:    {schema.NVMe, []string{schema.FieldWarnC, schema.FieldCritC}},
}

// componentSeries selects the series of measurement that belong to c: the
// same GPU index, CPU chip or NVMe device on the same host.
func componentSeries(c *Component) func(*Series) bool {
	id := c.ID[strings.LastIndex(c.ID, ":")+1:]
	return func(s *Series) bool {
		if s.Tag(schema.TagHost) != c.Host {
			return false
		}
		switch c.Kind {
		case KindGPUCore, KindGPUMem:
			return s.Tag(schema.TagGPU) == id
		case KindCPU:
			return s.Tag(schema.TagChip) == id && strings.HasPrefix(s.Tag(schema.TagClass), "cpu")
		case KindNVMe:
			dev, _, _ := strings.Cut(id, "/")
			return s.Tag(schema.TagDevice) == dev
		}
		return false
	}
}

// DeviceLimit returns the limit c's device recorded (the lowest finite
// reading of the preferred field, for a CPU chip the lowest over its
// sensors), or nil when it recorded none. A reading of 0 is a driver that
// does not know its limit, not a limit.
func DeviceLimit(r *Run, c *Component) *Limit {
	lf, ok := limitFields[c.Kind]
	if !ok {
		return nil
	}
	match := componentSeries(c)
	for _, f := range lf.fields {
		best := math.Inf(1)
		for _, s := range r.Find(lf.measurement, f, match) {
			for _, x := range s.V {
				if x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) {
					best = math.Min(best, x)
				}
			}
		}
		if !math.IsInf(best, 1) {
			return &Limit{Field: f, C: best}
		}
	}
	return nil
}

// Throttle is how long a GPU's clocks were held back during the load, by
// reason, from the clock event reasons NVML reported each tick.
type Throttle struct {
	// SpanS is the time covered by the readings (readings × the sampling
	// interval).
	SpanS float64 `json:"span_s"`
	// ThermalS and PowerS are the seconds with a thermal slowdown (HW
	// slowdown, HW or SW thermal) and with a power limit (SW power cap, HW
	// power brake) active.
	ThermalS float64 `json:"thermal_s"`
	PowerS   float64 `json:"power_s"`
	// Reasons gives the seconds per individual reason, named as nvml.h
	// names them (sw_power_cap, hw_slowdown, sw_thermal_slowdown,
	// hw_thermal_slowdown, hw_power_brake_slowdown); reasons never active
	// are left out.
	Reasons map[string]float64 `json:"reasons,omitempty"`
}

var clockReasons = []struct {
	name string
	bit  uint64
}{
	{"sw_power_cap", schema.ClockEventSwPowerCap},
	{"hw_slowdown", schema.ClockEventHwSlowdown},
	{"sw_thermal_slowdown", schema.ClockEventSwThermalSlowdown},
	{"hw_thermal_slowdown", schema.ClockEventHwThermalSlowdown},
	{"hw_power_brake_slowdown", schema.ClockEventHwPowerBrakeSlowdown},
}

// GPUThrottle sums, over span, the ticks at which the GPU of c reported
// each clock event reason, each tick counting intervalS seconds. Without
// clock_event_reasons it falls back on the derived throttle_thermal and
// throttle_power fields. It returns nil when c is not a GPU or recorded
// neither.
func GPUThrottle(r *Run, c *Component, span Span, intervalS float64) *Throttle {
	if c.Kind != KindGPUCore && c.Kind != KindGPUMem {
		return nil
	}
	match := componentSeries(c)
	in := func(t float64) bool { return t >= span.Start && t <= span.End }
	if ss := r.Find(schema.GPU, schema.FieldClockEventReasons, match); len(ss) == 1 {
		th := &Throttle{Reasons: map[string]float64{}}
		for k, t := range ss[0].T {
			x := ss[0].V[k]
			if !in(t) || math.IsNaN(x) || x < 0 {
				continue
			}
			th.SpanS += intervalS
			bits := uint64(x)
			thermal, power := schema.DecodeClockEvents(bits)
			if thermal {
				th.ThermalS += intervalS
			}
			if power {
				th.PowerS += intervalS
			}
			for _, cr := range clockReasons {
				if bits&cr.bit != 0 {
					th.Reasons[cr.name] += intervalS
				}
			}
		}
		if th.SpanS > 0 {
			if len(th.Reasons) == 0 {
				th.Reasons = nil
			}
			return th
		}
	}
	th := &Throttle{}
	found := false
	for _, f := range []struct {
		field string
		dst   *float64
	}{{schema.FieldThrottleThermal, &th.ThermalS}, {schema.FieldThrottlePower, &th.PowerS}} {
		ss := r.Find(schema.GPU, f.field, match)
		if len(ss) != 1 {
			continue
		}
		span := 0.0
		for k, t := range ss[0].T {
			if x := ss[0].V[k]; in(t) && !math.IsNaN(x) {
				span += intervalS
				if x != 0 {
					*f.dst += intervalS
				}
			}
		}
		if span > 0 {
			found, th.SpanS = true, math.Max(th.SpanS, span)
		}
	}
	if !found {
		return nil
	}
	return th
}

// ReasonsText lists the reasons active, longest first ("sw_power_cap 12 s").
func (th *Throttle) ReasonsText() string {
	var names []string
	for n := range th.Reasons {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if th.Reasons[names[i]] != th.Reasons[names[j]] {
			return th.Reasons[names[i]] > th.Reasons[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.0f s", n, th.Reasons[n]))
	}
	return strings.Join(parts, ", ")
}

// RiseTime returns how long after the start of the load the component's
// smoothed readings (a centred moving average over smooth seconds) first
// reached fraction of their rise from idleMean to their smoothed load
// peak: the time to 63 % is one time constant of a first-order rise,
// measured without a model. It fails for a rise under minRise.
func RiseTime(t, v []float64, load Span, idleMean, fraction, smooth, minRise float64) (float64, error) {
	at, err := Onset(t, v, load.Start, load.End, idleMean, fraction, smooth, minRise)
	if err != nil {
		return 0, err
	}
	return at - load.Start, nil
}
