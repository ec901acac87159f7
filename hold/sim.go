package hold

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Plant is a simulated component the controller can be tried on in sim
// time: Advance runs it for dt seconds with the job running (on) or
// paused, TempC is its true temperature.
type Plant interface {
	Advance(dtS float64, on bool)
	TempC() float64
}

// Lag is one first-order part of a plant's response: a rise of RiseC
// above the base at full duty, reached with time constant TauS.
type Lag struct {
	RiseC, TauS float64
	x           float64
}

// LagPlant is a sum of first-order lags over a base temperature: an H100
// is a sub-second lag of most of its rise (the die) plus lags of tens of
// seconds and minutes (heatsink, airflow), each integrated exactly.
type LagPlant struct {
	BaseC float64
	Lags  []Lag
}

// Advance integrates each lag exactly over dt with the input held.
func (p *LagPlant) Advance(dtS float64, on bool) {
	in := 0.0
	if on {
		in = 1
	}
	for i := range p.Lags {
		l := &p.Lags[i]
		target := l.RiseC * in
		l.x = target + (l.x-target)*math.Exp(-dtS/l.TauS)
	}
}

// TempC is the base plus every lag's state.
func (p *LagPlant) TempC() float64 {
	t := p.BaseC
	for _, l := range p.Lags {
		t += l.x
	}
	return t
}

// H100Plant is an H100's core under FP64 GEMM as the recording in
// analysis/testdata/h100-dgemm shows it: 39 °C idle, a jump of 18 °C within
// the first second (modelled as τ 0.5 s), then 10 °C more with τ 13 s and a
// tail of 2 °C with τ 90 s: 69 °C running free, 0.052 °C/W over its 578 W.
func H100Plant() *LagPlant {
	return &LagPlant{BaseC: 39, Lags: []Lag{{RiseC: 18, TauS: 0.5}, {RiseC: 10, TauS: 13}, {RiseC: 2, TauS: 90}}}
}

// H100Model is the model heatsink's load fit makes of H100Plant (one slow
// τ for the two slow lags, as a 1 Hz fit over a two-minute load does).
func H100Model() Model {
	return Model{BaseC: 39, FastC: 18, SlowC: 12, TauS: 16, TauFastS: 0.5, Source: "sim: analysis/testdata/h100-dgemm"}
}

// Sim is one simulated run: the plant, the controller's options (or a
// fixed duty), the actuator's period and the sensor.
type Sim struct {
	Plant Plant
	// Ctrl makes the controller; nil runs FixedDuty instead.
	Ctrl      *Options
	FixedDuty float64
	// SetC is the set point (Ctrl's SetC is overwritten with it).
	SetC float64
	// PeriodS is the duty cycle's period (the SIGSTOP/SIGCONT or pacing
	// period); 0 applies the duty as an average (a plant slower than any
	// period, a tank's coolant).
	PeriodS   float64
	DurationS float64
	// SetSteps change the set point at the given times (s): SetC values.
	SetSteps []SetStep
	// NoiseC is the sensor's Gaussian noise, ResolutionC its rounding
	// (1 for NVML's whole degrees, 0 for none).
	NoiseC, ResolutionC float64
	Seed                uint64
	// StartLagS is how late in the first interval the job starts (a
	// process to start, an iteration to begin): the first second's rise is
	// smaller than the plant's.
	StartLagS float64
}

// SetStep is a change of set point during a simulated run.
type SetStep struct{ AtS, SetC float64 }

// Trace is what a simulated run recorded at each interval (1 s).
type Trace struct {
	// TrueC is the temperature at the moment of the reading, before the
	// sensor's noise and rounding.
	TimeS, ReadingC, TrueC, SetC, Duty []float64
	Modes                              []Mode
	// RunS is the time the job ran: throughput relative to free.
	RunS, DurationS float64
}

// Run simulates the run at 1 s intervals: the reading is taken at the end
// of each interval at a random phase of the duty cycle (a sensor sampled
// without regard to it), the controller chooses the next interval's duty, and the
// actuator runs the job for that share of each period.
func (s Sim) Run() (Trace, error) {
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0xdeadbeef))
	setC := s.setAt(0)
	var ctrl *Controller
	if s.Ctrl != nil {
		o := *s.Ctrl
		o.SetC = setC
		var err error
		if ctrl, err = New(o); err != nil {
			return Trace{}, err
		}
	}
	const dt = 1.0
	var tr Trace
	duty := s.FixedDuty
	sampled := s.Plant.TempC()
	reading := s.read(sampled, rng)
	for t := 0.0; t < s.DurationS; t += dt {
		if sc := s.setAt(t); sc != setC && ctrl != nil {
			setC = sc
			ctrl.o.SetC = sc
		}
		mode := Mode("fixed")
		if ctrl != nil {
			st := ctrl.Step(reading, true)
			duty, mode = st.Duty, st.Mode
		}
		tr.TimeS = append(tr.TimeS, t)
		tr.ReadingC = append(tr.ReadingC, reading)
		tr.TrueC = append(tr.TrueC, sampled)
		tr.SetC = append(tr.SetC, setC)
		tr.Duty = append(tr.Duty, duty)
		tr.Modes = append(tr.Modes, mode)
		// The reading comes at the end of the interval, at a random
		// phase of the duty cycle's last period.
		at := dt - rng.Float64()*s.PeriodS
		if t == 0 && s.StartLagS > 0 {
			s.Plant.Advance(s.StartLagS, false)
			tr.RunS += s.advance(dt-s.StartLagS, duty, at-s.StartLagS, &sampled)
		} else {
			tr.RunS += s.advance(dt, duty, at, &sampled)
		}
		reading = s.read(sampled, rng)
	}
	tr.DurationS = s.DurationS
	return tr, nil
}

// advance runs the plant for dt at duty, recording its temperature at
// offset at into *sampled; it returns the time the job ran.
func (s Sim) advance(dt, duty, at float64, sampled *float64) float64 {
	type seg struct {
		d  float64
		on bool
	}
	var segs []seg
	if s.PeriodS <= 0 {
		// An average duty: the plant sees the power, not the cycle.
		segs = []seg{{dt * duty, true}, {dt * (1 - duty), false}}
	} else {
		for p := 0.0; p < dt-1e-9; p += s.PeriodS {
			d := math.Min(s.PeriodS, dt-p)
			segs = append(segs, seg{d * duty, true}, seg{d * (1 - duty), false})
		}
	}
	ran, t := 0.0, 0.0
	*sampled = math.NaN()
	for _, g := range segs {
		if g.d <= 0 {
			continue
		}
		if g.on {
			ran += g.d
		}
		if math.IsNaN(*sampled) && t+g.d > at {
			s.Plant.Advance(at-t, g.on)
			*sampled = s.Plant.TempC()
			s.Plant.Advance(t+g.d-at, g.on)
		} else {
			s.Plant.Advance(g.d, g.on)
		}
		t += g.d
	}
	if math.IsNaN(*sampled) {
		*sampled = s.Plant.TempC()
	}
	return ran
}

func (s Sim) read(trueC float64, rng *rand.Rand) float64 {
	v := trueC + s.NoiseC*rng.NormFloat64()
	if s.ResolutionC > 0 {
		v = math.Round(v/s.ResolutionC) * s.ResolutionC
	}
	return v
}

func (s Sim) setAt(t float64) float64 {
	v := s.SetC
	for _, st := range s.SetSteps {
		if t >= st.AtS {
			v = st.SetC
		}
	}
	return v
}

// Quality is how well a run held its set point, as the issue measures it.
type Quality struct {
	// MeanAbsC and P95AbsC are the mean and 95th percentile of
	// |reading − set point| from SettleS after the last change (load
	// start or set-point step) to the end.
	MeanAbsC, P95AbsC float64
	// OvershootC is the largest reading above the set point once the
	// reading had first reached it (after the load started or the set
	// point changed); 0 when it never went above.
	OvershootC float64
	// PeakC is the highest reading.
	PeakC float64
	// Throughput is the share of time the job ran (1 running free).
	Throughput float64
	// N is how many readings the steady-state figures cover.
	N int
}

// Judge measures tr: steady-state figures from settleS after the last set
// point change (3τ of the plant), overshoot over the whole run.
func Judge(tr Trace, settleS float64) Quality {
	q := Quality{Throughput: tr.RunS / tr.DurationS, PeakC: math.Inf(-1)}
	last := 0.0
	for i := 1; i < len(tr.SetC); i++ {
		if tr.SetC[i] != tr.SetC[i-1] {
			last = tr.TimeS[i]
		}
	}
	var errs []float64
	reached, above := false, false
	for i, t := range tr.TimeS {
		r, sp := tr.ReadingC[i], tr.SetC[i]
		q.PeakC = math.Max(q.PeakC, r)
		if i == 0 || sp != tr.SetC[i-1] {
			// A change starts from one side: the overshoot counts once
			// the reading has come to the set point from there.
			reached, above = false, r > sp
		}
		if above && r <= sp || !above && r >= sp {
			reached = true
		}
		if reached {
			q.OvershootC = math.Max(q.OvershootC, r-sp)
		}
		if t >= last+settleS {
			errs = append(errs, math.Abs(r-sp))
		}
	}
	q.N = len(errs)
	if q.N > 0 {
		sum := 0.0
		for _, e := range errs {
			sum += e
		}
		q.MeanAbsC = sum / float64(q.N)
		slices.Sort(errs)
		q.P95AbsC = errs[int(math.Ceil(0.95*float64(q.N)))-1]
	}
	return q
}

// BestFixedDuty finds by bisection the largest fixed duty whose peak true
// temperature, sampled once a second, stays at or under setC over the
// run: the best a site could do knowing the plant in advance. mk makes a
// fresh plant for each try.
func BestFixedDuty(mk func() Plant, s Sim, setC float64) (float64, error) {
	lo, hi := 0.0, 1.0
	for range 20 {
		mid := (lo + hi) / 2
		try := s
		try.Plant, try.Ctrl, try.FixedDuty, try.NoiseC, try.ResolutionC = mk(), nil, mid, 0, 0
		tr, err := try.Run()
		if err != nil {
			return 0, err
		}
		if slices.Max(tr.TrueC) <= setC {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}
