package hold

import (
	"errors"
	"fmt"
	"math"
)

// Mode says how the controller chose a duty.
type Mode string

// The controller's modes.
const (
	// ModeModel is the model-based control: the duty that brings the
	// model's next reading to the set point, corrected by what the model
	// got wrong so far.
	ModeModel Mode = "model"
	// ModePause is the plain pause, the guard's bang-bang: the job stops
	// while the reading is above the set point and runs free once it is
	// back HysteresisC under it. It is what the controller does with no
	// model, and falls back to when it stops trusting the one it has.
	ModePause Mode = "pause"
	// ModeBlind is a step with no fresh reading: the model's steady-state
	// duty for the set point, open loop, until a reading comes back.
	ModeBlind Mode = "blind"
	// ModeFixed is no control: a fixed duty given in advance (--duty),
	// the yardstick the hold is measured against.
	ModeFixed Mode = "fixed"
)

// Options configure a Controller.
type Options struct {
	// SetC is the set point: the component settles there and runs free
	// below it.
	SetC float64
	// Model is the component's response to the duty; nil holds with the
	// plain pause (ModePause) for the whole run.
	Model *Model
	// IntervalS is the control step, the sampling interval (1 s).
	IntervalS float64
	// HysteresisC is ModePause's clear margin (default 1 °C, a whole
	// degree, the resolution NVML reports).
	HysteresisC float64
	// Running says the job was already running free when the controller
	// took over (a rule switched the hold on mid-load), so the slow state
	// starts from the reading rather than from idle.
	Running bool
}

// Step is one control decision: the duty for the next interval.
type Step struct {
	Duty float64 `json:"duty"`
	Mode Mode    `json:"mode"`
	// PredictedC is the model's next reading at Duty (NaN in ModePause).
	PredictedC float64 `json:"predicted_c"`
	// Gain is the online refinement of the model's rises (1: as given).
	Gain float64 `json:"gain"`
	// Changed says why the mode changed at this step ("" when it did not).
	Changed string `json:"changed,omitempty"`
}

// Trust limits: past them the model cannot explain the plant and the
// controller falls back to the plain pause for the rest of the run.
const (
	// A rise refined beyond these factors of the model's is no longer the
	// model: the tests hold the controller to a model 50 % off, well inside.
	minGain, maxGain = 1.0 / 3, 3.0
	// distrustSteps readings in a row that miss the model's prediction by
	// more than distrustShare of its rise plus distrustC.
	distrustSteps = 3
	distrustShare = 0.6
	distrustC     = 2.0
	// cautiousGain is the gain assumed before the first jump is seen.
	cautiousGain = 2.0
)

// Controller holds a component at a set point by choosing the job's duty
// once per interval. It is an internal-model controller (IMC) for the
// model's first order plus fast jump: it propagates the model's slow state
// with the duty actually applied (so a saturated duty never winds anything
// up), estimates the reading the model misses as a filtered disturbance
// (which gives integral action: a wrong gain, a drifting idle, a warm room),
// and picks the duty whose predicted next reading closes a share of the
// gap to the set point. Once the reading has been steady for τ, the
// model's rise is refined to what the plant showed. docs/hold.md gives the
// design and the simulations behind its constants. It is not safe for
// concurrent use.
type Controller struct {
	o       Options
	m       Model
	alpha   float64 // exp(−dt/τ)
	phi     float64 // share of the gap left after one step
	beta    float64 // disturbance filter gain
	started bool
	mode    Mode
	x, d, u float64 // slow state (°C above base), disturbance, last duty
	gain    float64
	miss    int // readings in a row the model missed badly
	win     []obs
	// first is the reading the controller started from, and jumped
	// whether the first interval's jump has refined the gain yet.
	first  float64
	jumped bool
	quiet  int // ticks StepQuiet started over
}

type obs struct{ t, u float64 }

// New checks the options and returns a controller before its first step.
func New(o Options) (*Controller, error) {
	if math.IsNaN(o.SetC) || o.SetC < -50 || o.SetC > 200 {
		return nil, fmt.Errorf("hold: set point %v °C is not a temperature a component can be held at", o.SetC)
	}
	if o.IntervalS == 0 {
		o.IntervalS = 1
	}
	if !(o.IntervalS > 0) {
		return nil, fmt.Errorf("hold: interval %v s must be positive", o.IntervalS)
	}
	if o.HysteresisC == 0 {
		o.HysteresisC = 1
	}
	if o.HysteresisC < 0 {
		return nil, fmt.Errorf("hold: hysteresis %v °C must be positive", o.HysteresisC)
	}
	c := &Controller{o: o, mode: ModePause, gain: 1, u: 0}
	if o.Running {
		c.u = 1
	}
	if o.Model != nil {
		if err := o.Model.Validate(); err != nil {
			return nil, err
		}
		c.m, c.mode = *o.Model, ModeModel
		if !o.Running && c.m.FastC >= 3 {
			// Until the first interval's jump has measured it, the gain
			// is taken as twice the model's: a model whose rises are
			// half the plant's would otherwise start the job free and
			// overshoot before it learned better.
			c.gain = cautiousGain
		}
		dt := o.IntervalS
		c.alpha = math.Exp(-dt / c.m.TauS)
		// One step closes at most 60 % of the gap: deadbeat on the fast
		// part rings with a rise 50 % above the model's; this does not.
		// A plant with no fast part (a tank's coolant) is given τ/20,
		// so a reading's noise does not swing the duty from 0 to 1.
		c.phi = math.Max(0.4, math.Exp(-dt*20/c.m.TauS))
		// The disturbance settles in about 2 s (τ/20 for slower
		// plants): fast enough to take the slow part's error before it
		// shows as overshoot, slow enough that a whole-degree reading
		// moves the duty by little.
		c.beta = 1 - math.Exp(-dt/math.Max(2, c.m.TauS/20))
	}
	return c, nil
}

// Model returns the model as refined so far (zero without one).
func (c *Controller) Model() Model { return c.m.Scaled(c.gain) }

// Mode returns the current mode.
func (c *Controller) Mode() Mode { return c.mode }

// maxQuietS bounds how long StepQuiet waits for the job's first work: a
// Python command importing CuPy takes seconds at full speed, several times
// that at the cautious first duty.
const maxQuietS = 120

// StepQuiet is Step for a tick in which the job ran but did no work on the
// component's device (NVML saw the held GPU idle): a command still starting
// (Python importing CuPy, reading its input) before its first kernel.
// Before the first second's test such a tick says nothing of the model, so
// the controller starts over from this reading, keeping its cautious gain,
// and the test measures the first second in which the job worked instead
// of being spent on an idle one (the cupy hold of 2026-11-28: util_pct 0
// for two ticks while the warm card cooled 43 → 42 °C). After the test, or
// after maxQuietS of quiet ticks, it is Step.
func (c *Controller) StepQuiet(readingC float64, ok bool) Step {
	ok = ok && !math.IsNaN(readingC) && !math.IsInf(readingC, 0)
	if c.mode == ModeModel && c.started && !c.jumped && ok && float64(c.quiet)*c.o.IntervalS < maxQuietS {
		c.quiet++
		c.started, c.u = false, 0
	}
	return c.Step(readingC, ok)
}

// Step takes the latest reading (ok false when there is none fresh) and
// returns the duty for the next interval.
func (c *Controller) Step(readingC float64, ok bool) Step {
	ok = ok && !math.IsNaN(readingC) && !math.IsInf(readingC, 0)
	if c.mode == ModePause {
		return c.pause(readingC, ok, "")
	}
	m := c.m.Scaled(c.gain)
	if !c.started {
		if !ok {
			return c.blind(m)
		}
		c.started = true
		c.x = clamp(readingC-m.BaseC-m.FastC*c.u, 0, m.SlowC)
		c.d = readingC - (m.BaseC + m.FastC*c.u + c.x)
		c.first, c.jumped = readingC, c.u > 0
	} else if !c.jumped && ok {
		c.jumped = true
		// Only a rise too high falls back: one too small is a job that
		// had not started its work yet (a command importing CuPy took
		// over a second on the H100 of 2026-11-28, and the reading
		// fell), and a model whose rises are too high is caught at a
		// steady duty (refine).
		if g, _, ok := c.jump(readingC, m); ok && g > maxGain {
			return c.pause(readingC, true, fmt.Sprintf("the first second's rise was %.2f times the model's: it cannot be trusted, falling back to the plain pause", g))
		} else if ok {
			// The first second underestimates whenever the job
			// started late in it (a process to start, an iteration
			// to begin), which would overshoot: it may raise the
			// cautious gain, never lower it. Steady stretches bring
			// it down where the model was right
			// (TestHoldIsNotFooledByALateStart).
			g = math.Max(g, c.gain)
			// The disturbance was taken at idle, where the gain does
			// not enter: only the slow state scales.
			c.x *= g / c.gain
			c.gain = g
			m = c.m.Scaled(g)
		}
	}
	if !ok {
		return c.blind(m)
	}
	resid := readingC - (m.BaseC + m.FastC*c.u + c.x + c.d)
	if math.Abs(resid) > distrustShare*m.RiseC()+distrustC {
		c.miss++
	} else {
		c.miss = 0
	}
	if c.miss >= distrustSteps {
		return c.pause(readingC, ok, fmt.Sprintf("the reading missed the model by %.1f °C %d times in a row (model rise %.1f °C): it cannot be trusted, falling back to the plain pause", resid, c.miss, m.RiseC()))
	}
	c.d += c.beta * resid
	if g, why := c.refine(readingC, m); why != "" {
		return c.pause(readingC, ok, why)
	} else if g != c.gain {
		c.rescale(g, m)
		m = c.m.Scaled(c.gain)
	}
	now := m.BaseC + m.FastC*c.u + c.x + c.d
	target := c.o.SetC + (now-c.o.SetC)*c.phi
	den := m.FastC + (1-c.alpha)*m.SlowC
	u := clamp((target-m.BaseC-c.d-c.alpha*c.x)/den, 0, 1)
	c.x = c.alpha*c.x + (1-c.alpha)*m.SlowC*u
	c.u = u
	return Step{Duty: u, Mode: ModeModel, PredictedC: m.BaseC + m.FastC*u + c.x + c.d, Gain: c.gain}
}

// refine compares the plant's steady rise with the model's once the duty
// and reading have been steady for τ, and returns the refined gain, or why
// the model cannot be trusted.
func (c *Controller) refine(readingC float64, m Model) (float64, string) {
	c.win = append(c.win, obs{readingC, c.u})
	n := int(math.Ceil(m.TauS / c.o.IntervalS))
	if n < 5 {
		n = 5
	}
	if len(c.win) < n {
		return c.gain, ""
	}
	w := c.win[len(c.win)-n:]
	c.win = c.win[:0]
	lo, hi, sumT, sumU := math.Inf(1), math.Inf(-1), 0.0, 0.0
	for _, o := range w {
		lo, hi = math.Min(lo, o.t), math.Max(hi, o.t)
		sumT += o.t
		sumU += o.u
	}
	meanT, meanU := sumT/float64(n), sumU/float64(n)
	// Steady: within 2 °C over τ at a duty that neither saturates nor
	// starves (the rise at a duty near 0 is all noise).
	if hi-lo > 2 || meanU < 0.1 || meanU > 0.95 {
		return c.gain, ""
	}
	obsGain := (meanT - c.m.BaseC) / (c.m.RiseC() * meanU)
	if obsGain < minGain || obsGain > maxGain {
		return c.gain, fmt.Sprintf("the plant rises %.2f times what the model says at a steady duty of %.2f: the model cannot be trusted, falling back to the plain pause", obsGain, meanU)
	}
	return c.gain + 0.5*(obsGain-c.gain), ""
}

// rescale sets the gain to g, keeping the prediction where it was.
func (c *Controller) rescale(g float64, m Model) {
	now := m.BaseC + m.FastC*c.u + c.x + c.d
	c.x *= g / c.gain
	c.gain = g
	m = c.m.Scaled(g)
	c.d = now - (m.BaseC + m.FastC*c.u + c.x)
}

// jump refines the gain from the first interval of a load started from
// idle: the fast part answers within the interval, so the rise over it
// measures the model's gain at once, before the slow part can carry the
// reading past the set point. It needs a jump the sensor resolves (3 °C
// predicted) at a duty of 0.3 or more.
//
// The gain is measured against the fast part complete within the
// interval, as the controller models it. A fitted τ_fast only bounds it
// from below: a 1 Hz fit cannot see a die that follows its power within
// 0.2 s (the H100 of 2026-11-28 fitted 3.5 s), so a rise that is high
// against the fitted τ_fast but not against the complete fast part is the
// model being right. slow is the gain against the fitted τ_fast, which the
// trust test uses for a rise too small.
func (c *Controller) jump(readingC float64, m Model) (g, slow float64, ok bool) {
	whole := (m.FastC + (1-c.alpha)*m.SlowC) * c.u
	fast := m.FastC
	if m.TauFastS > 0 {
		fast *= -math.Expm1(-c.o.IntervalS / m.TauFastS)
	}
	fitted := (fast + (1-c.alpha)*m.SlowC) * c.u
	if c.u < 0.1 || fitted < 3 {
		return 0, 0, false
	}
	return c.gain * (readingC - c.first) / whole, c.gain * (readingC - c.first) / fitted, true
}

// blind is a step with no fresh reading: the model's steady-state duty.
func (c *Controller) blind(m Model) Step {
	u := clamp((c.o.SetC-m.BaseC-c.d)/m.RiseC(), 0, 1)
	c.x = c.alpha*c.x + (1-c.alpha)*m.SlowC*u
	c.u = u
	return Step{Duty: u, Mode: ModeBlind, PredictedC: math.NaN(), Gain: c.gain}
}

// pause is the plain pause: stopped above the set point, free once the
// reading is back HysteresisC under it, as it was in between.
func (c *Controller) pause(readingC float64, ok bool, why string) Step {
	changed := ""
	if c.mode != ModePause {
		c.mode, changed = ModePause, why
	}
	switch {
	case !ok:
		// No reading: keep what was decided last.
	case readingC > c.o.SetC:
		c.u = 0
	case readingC <= c.o.SetC-c.o.HysteresisC:
		c.u = 1
	}
	return Step{Duty: c.u, Mode: ModePause, PredictedC: math.NaN(), Gain: c.gain, Changed: changed}
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// ErrNoModel says why a controller holds with the plain pause from the start.
var ErrNoModel = errors.New("no model of the component: no earlier run of this workload on this node was found and none was given (--hold-model)")
