package analysis

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// LoadFit is the model fitted to a component's readings over the load
// phase: the first-order rise
//
//	T(t) = T0 + ΔT·(1 − e^(−(t − t_load)/τ)),
//
// or, where the data justify it (smaller AICc), two such rises,
// T0 + ΔT_slow·(1 − e^(−(t − t_load)/τ)) + ΔT_fast·(1 − e^(−(t − t_load)/τ_fast)).
// A GPU die jumps several degrees within the first seconds of a load while
// its heatsink warms over tens of seconds; one exponential over both lets the
// sampling phase of the first readings pull τ. T0 is fitted, not the idle
// mean, as the jump may be faster than the sampling; start_c − idle_mean_c
// is what the fit did not see rise.
type LoadFit struct {
	Model     string   `json:"model"`
	Criterion string   `json:"criterion"`
	AICcOne   float64  `json:"aicc_one"`
	AICcTwo   *float64 `json:"aicc_two"`
	// ModelWeight is Model's Akaike weight (1 when it was the only model
	// admitted); Models are each admitted model's own estimates.
	ModelWeight float64    `json:"model_weight"`
	Models      []ModelFit `json:"models"`
	FromS       float64    `json:"from_s"`
	ToS         float64    `json:"to_s"`
	N           int        `json:"n"`
	StartC      float64    `json:"start_c"`
	// RiseC is the fitted plateau's rise above the idle mean, plateau_c −
	// idle_mean_c: with the fast part of a rise often quicker than the
	// sampling, T0 and ΔT_fast trade off against each other, while the
	// plateau is pinned by every reading near it. Each model's interval is
	// its rise ± t·SE(plateau) from the linearised covariance (the idle mean
	// taken as exact). RiseC, RiseLoC, RiseHiC and PlateauC are averaged
	// over the admitted models (see modelAverage), as are TauS, TauLoS and
	// TauHiS: which model AICc picks can change from one recording of a run
	// to the next, and each model's interval assumes it is the right one.
	RiseC    float64 `json:"rise_c"`
	RiseLoC  float64 `json:"rise_lo_c"`
	RiseHiC  float64 `json:"rise_hi_c"`
	PlateauC float64 `json:"plateau_c"`
	// TauS is τ (τ_slow), TauLoS and TauHiS its interval at Level, from
	// each model's profile of the residual sum of squares.
	TauS      float64  `json:"tau_s"`
	TauLoS    float64  `json:"tau_lo_s"`
	TauHiS    float64  `json:"tau_hi_s"`
	TauFastS  *float64 `json:"tau_fast_s"`
	FastShare *float64 `json:"fast_share"`
	Level     float64  `json:"level"`
	FitR2     float64  `json:"fit_r2"`
	RMSC      float64  `json:"rms_c"`
	// Inflation is the factor the residuals' lag-1 autocorrelation put on
	// the variance behind the intervals (1 for independent residuals).
	Inflation   float64           `json:"interval_inflation"`
	NotComputed map[string]string `json:"not_computed,omitempty"`
	// fastTauS is τ_fast even where it is too short to report, for At;
	// modelTauS and modelPlateauC are Model's own τ and plateau, which
	// the drawn curve needs where TauS and PlateauC are averages.
	fastTauS, modelTauS, modelPlateauC float64
}

// At returns Model's fitted temperature t seconds after the run's start.
func (f *LoadFit) At(t float64) float64 {
	x := t - f.FromS
	amp := f.modelPlateauC - f.StartC
	slow, v := amp, f.StartC
	if f.FastShare != nil {
		fast := amp * *f.FastShare
		slow -= fast
		v -= fast * math.Expm1(-x/f.fastTauS)
	}
	return v - slow*math.Expm1(-x/f.modelTauS)
}

// CoolFit is the model fitted to a component's readings from the end of the
// load to the end of the cooldown: one exponential,
//
//	T(t) = T∞ + A·e^(−(t − t_end)/τ),
//
// or two, T∞ + A_slow·e^(−(t − t_end)/τ_slow) + A_fast·e^(−(t − t_end)/τ_fast),
// whichever has the smaller AICc. CoolTauS is τ, or τ_slow.
type CoolFit struct {
	Model     string   `json:"model"`
	Criterion string   `json:"criterion"`
	AICcOne   float64  `json:"aicc_one"`
	AICcTwo   *float64 `json:"aicc_two"`
	// ModelWeight and Models are as for the load.
	ModelWeight float64    `json:"model_weight"`
	Models      []ModelFit `json:"models"`
	FromS       float64    `json:"from_s"`
	ToS         float64    `json:"to_s"`
	N           int        `json:"n"`
	// CoolTauS is τ (τ_slow) averaged over the admitted models, as the
	// load's; CoolTauLoS and CoolTauHiS bound it at Level (each model's
	// profile interval, the fast time constant re-fitted at each slow one,
	// averaged by modelAverage).
	CoolTauS     float64  `json:"cool_tau_s"`
	CoolTauLoS   float64  `json:"cool_tau_lo_s"`
	CoolTauHiS   float64  `json:"cool_tau_hi_s"`
	CoolTauFastS *float64 `json:"cool_tau_fast_s"`
	// FastShare is A_fast / (A_fast + A_slow): the part of the fitted drop
	// the fast exponential carries.
	FastShare   *float64          `json:"fast_share"`
	AsymptoteC  float64           `json:"asymptote_c"`
	DropC       float64           `json:"drop_c"`
	Level       float64           `json:"level"`
	FitR2       float64           `json:"fit_r2"`
	RMSC        float64           `json:"rms_c"`
	Inflation   float64           `json:"interval_inflation"`
	NotComputed map[string]string `json:"not_computed,omitempty"`
	// fastTauS is τ_fast even where it is too short to report, for At;
	// modelTauS is Model's own τ.
	fastTauS, modelTauS float64
}

// At returns Model's fitted temperature t seconds after the run's start.
func (f *CoolFit) At(t float64) float64 {
	x := t - f.FromS
	v, slow := f.AsymptoteC, f.DropC
	if f.FastShare != nil {
		fast := f.DropC * *f.FastShare
		slow -= fast
		v += fast * math.Exp(-x/f.fastTauS)
	}
	return v + slow*math.Exp(-x/f.modelTauS)
}

// HeatIntervalBand is the spread the study's heat interval carries from its
// definition: the interval recomputed with the peak taken as the first
// reading within the sensor's resolution of the load maximum, and with the
// readings resampled at shifted sampling phases (linear interpolation at a
// quarter, half and three quarters of the sampling interval, rounded to the
// sensor's resolution), each also with that first-within-resolution peak.
// Lo and Hi are the smallest and largest of these and the interval itself.
type HeatIntervalBand struct {
	LoSPerC float64 `json:"lo_s_per_c"`
	HiSPerC float64 `json:"hi_s_per_c"`
	// WithinResolutionSPerC is the interval with the first-within-resolution
	// peak, on the readings as recorded.
	WithinResolutionSPerC float64 `json:"within_resolution_s_per_c"`
	ResolutionC           float64 `json:"resolution_c"`
	Variants              int     `json:"variants"`
}

// Fit limits: fewer readings than this over a phase make no fit.
const minFitReadings = 10

// expChoice is one or two exponentials fitted to the same readings, and
// the one AICc prefers.
type expChoice struct {
	use, one *ExpFit
	// admitted are the fits (one, then two where admitted) and weights
	// their Akaike weights.
	admitted  []*ExpFit
	weights   []float64
	aiccTwo   *float64
	model     string
	fastShare *float64
	// why says why a fast time constant or share is not reported.
	why map[string]string
}

// chooseExp fits b with one and with two time constants and keeps the
// smaller AICc. Two are admitted only with both amplitudes positive (two
// rises, or two falls), so they describe one direction of change. A fast
// time constant under the sampling interval dt is kept in the model but
// not reported: the sampling does not resolve it.
func chooseExp(b basis, x, y []float64, dt, tauMax, level float64, what, fastKey string) (*expChoice, error) {
	one, err := fitExp(b, x, y, 1, dt/4, tauMax, level)
	if err != nil {
		return nil, fmt.Errorf("one-exponential fit over the %s: %w", what, err)
	}
	c := &expChoice{use: one, one: one, admitted: []*ExpFit{one}, model: "one-exponential", why: map[string]string{}}
	two, err := fitExp(b, x, y, 2, dt/4, tauMax, level)
	switch {
	case err != nil:
		c.why["aicc_two"] = "two-exponential fit: " + err.Error()
	case two.Coef[1] <= 0 || two.Coef[2] <= 0:
		c.why["aicc_two"] = fmt.Sprintf("two-exponential fit has terms of opposite direction (amplitudes %.2g and %.2g °C)", two.Coef[1], two.Coef[2])
	default:
		c.aiccTwo = ptr(two.AICc)
		c.admitted = append(c.admitted, two)
		if two.AICc < one.AICc {
			c.use, c.model = two, "two-exponential"
		}
	}
	aicc := make([]float64, len(c.admitted))
	for i, f := range c.admitted {
		aicc[i] = f.AICc
	}
	c.weights = akaikeWeights(aicc)
	if c.use == one {
		if c.aiccTwo != nil {
			c.why[fastKey] = fmt.Sprintf("one exponential has the smaller AICc (%.1f against %.1f)", one.AICc, *c.aiccTwo)
		} else {
			c.why[fastKey] = "no two-exponential fit: " + c.why["aicc_two"]
		}
		c.why["fast_share"] = c.why[fastKey]
		return c, nil
	}
	c.fastShare = ptr(two.Coef[2] / (two.Coef[1] + two.Coef[2]))
	if two.Taus[1] < dt {
		c.why[fastKey] = fmt.Sprintf("the fast part (%.0f %% of the change) is quicker than the sampling interval %.2g s resolves", 100**c.fastShare, dt)
	}
	return c, nil
}

// weight is the Akaike weight of the chosen model.
func (c *expChoice) weight() float64 {
	for i, f := range c.admitted {
		if f == c.use {
			return c.weights[i]
		}
	}
	return 1
}

// models returns each admitted model's own estimates, est giving the
// quantities of one fit, and their average (modelAverage).
func (c *expChoice) models(level float64, est func(f *ExpFit) (tau Estimate, rise *Estimate)) (out []ModelFit, tau Estimate, rise *Estimate) {
	var taus, rises []Estimate
	var dof []float64
	for i, f := range c.admitted {
		t, r := est(f)
		name := "one-exponential"
		if len(f.Taus) > 1 {
			name = "two-exponential"
		}
		out = append(out, ModelFit{Model: name, AICc: f.AICc, Weight: c.weights[i], TauS: t, RiseC: r})
		taus = append(taus, t)
		if r != nil {
			rises = append(rises, *r)
		}
		dof = append(dof, float64(f.N-len(f.Coef)-len(f.Taus)))
	}
	tau = modelAverage(taus, c.weights, dof, level)
	if len(rises) == len(taus) {
		r := modelAverage(rises, c.weights, dof, level)
		rise = &r
	}
	return out, tau, rise
}

// FitLoad fits the rise over load (see LoadFit) of a component idling at
// idleMean. minRise (°C) is the smallest fitted rise that counts; level
// the confidence level of the intervals. The load must last at least three (slow) time constants, or
// the plateau the fit extrapolates to is not in the data.
func FitLoad(t, v []float64, load Span, idleMean, minRise, maxGap, level float64) (*LoadFit, error) {
	x, y, dt, err := phaseReadings(t, v, load.Start, load.End, maxGap)
	if err != nil {
		return nil, err
	}
	if allEqual(y, y[0]) {
		return nil, fmt.Errorf("every load-phase reading is %.4g °C: no rise to fit", y[0])
	}
	dur := load.Duration()
	c, err := chooseExp(riseBasis, x, y, dt, 10*dur, level, "load", "tau_fast_s")
	if err != nil {
		return nil, err
	}
	f := c.use
	models, tau, rise := c.models(level, func(f *ExpFit) (Estimate, *Estimate) {
		p, lo, hi := total(f, 0)
		return Estimate{f.Taus[0], f.TauLo, f.TauHi}, &Estimate{p - idleMean, lo - idleMean, hi - idleMean}
	})
	lf := &LoadFit{Model: c.model, Criterion: "AICc", AICcOne: c.one.AICc, AICcTwo: c.aiccTwo,
		ModelWeight: c.weight(), Models: models, FromS: load.Start, ToS: load.End, N: f.N, StartC: f.Coef[0],
		TauS: tau.Value, TauLoS: tau.Lo, TauHiS: tau.Hi, FastShare: c.fastShare, Level: level, FitR2: f.R2, RMSC: f.RMS,
		Inflation: f.Inflation, NotComputed: c.why, modelTauS: f.Taus[0]}
	lf.RiseC, lf.RiseLoC, lf.RiseHiC = rise.Value, rise.Lo, rise.Hi
	lf.PlateauC = lf.RiseC + idleMean
	lf.modelPlateauC, _, _ = total(f, 0)
	if len(f.Taus) > 1 {
		lf.fastTauS = f.Taus[1]
		if _, hidden := c.why["tau_fast_s"]; !hidden {
			lf.TauFastS = ptr(f.Taus[1])
		}
	}
	switch {
	case lf.RiseC < minRise:
		return nil, fmt.Errorf("fitted rise %.2f °C is under the minimum %.2g °C", lf.RiseC, minRise)
	case lf.modelTauS < dt:
		return nil, fmt.Errorf("fitted time constant %.2g s is shorter than the sampling interval %.2g s: a rise faster than the sampling resolves", lf.modelTauS, dt)
	}
	if !finiteAll(lf.StartC, lf.RiseC, lf.RiseLoC, lf.RiseHiC, lf.TauS, lf.TauLoS, lf.TauHiS, lf.FitR2, lf.RMSC, lf.AICcOne, lf.ModelWeight, lf.modelPlateauC) {
		return nil, errors.New("the fit over the load gave a non-finite result")
	}
	if len(lf.NotComputed) == 0 {
		lf.NotComputed = nil
	}
	if dur < 3*lf.modelTauS {
		return nil, &ShortLoadError{LoadS: dur, TauS: lf.modelTauS, Rough: lf}
	}
	return lf, nil
}

// ShortLoadError is FitLoad's refusal of a load under three time
// constants: the plateau it extrapolates to is not in the data, so the
// report shows no fit. Rough is the fit all the same, with its intervals,
// for a consumer that can use a rough estimate and check it as it goes
// (the hold's model, which the controller refines online and drops for
// the plain pause when the plant contradicts it).
type ShortLoadError struct {
	LoadS, TauS float64
	Rough       *LoadFit
}

func (e *ShortLoadError) Error() string {
	return fmt.Sprintf("the load lasted %.0f s, under three time constants (τ ≈ %.0f s): the plateau is not in the data", e.LoadS, e.TauS)
}

// total returns the sum of f's linear coefficients from the first'th on
// (0: the plateau of a rise; 1: the amplitude of a decay) and its interval,
// ± t·SE with their covariances.
func total(f *ExpFit, first int) (a, lo, hi float64) {
	va := 0.0
	for k := first; k < len(f.Coef); k++ {
		a += f.Coef[k]
		for j := first; j < len(f.Coef); j++ {
			va += f.CoefCov[k][j]
		}
	}
	hw := f.TQuant * math.Sqrt(math.Max(va, 0))
	return a, a - hw, a + hw
}

// FitCooldown fits one and two exponentials over the readings from the
// end of the load (from) to to, and keeps the one with the smaller AICc
// (see CoolFit).
func FitCooldown(t, v []float64, from, to, maxGap, level float64) (*CoolFit, error) {
	x, y, dt, err := phaseReadings(t, v, from, to, maxGap)
	if err != nil {
		return nil, err
	}
	if allEqual(y, y[0]) {
		return nil, fmt.Errorf("every cooldown reading is %.4g °C: no decay to fit", y[0])
	}
	c, err := chooseExp(decayBasis, x, y, dt, 10*(to-from), level, "cooldown", "cool_tau_fast_s")
	if err != nil {
		return nil, err
	}
	f := c.use
	models, tau, _ := c.models(level, func(f *ExpFit) (Estimate, *Estimate) {
		return Estimate{f.Taus[0], f.TauLo, f.TauHi}, nil
	})
	cf := &CoolFit{Model: c.model, Criterion: "AICc", AICcOne: c.one.AICc, AICcTwo: c.aiccTwo, ModelWeight: c.weight(),
		Models: models, FromS: from, ToS: to, N: f.N, CoolTauS: tau.Value, CoolTauLoS: tau.Lo, CoolTauHiS: tau.Hi,
		FastShare: c.fastShare, AsymptoteC: f.Coef[0], Level: level, FitR2: f.R2, RMSC: f.RMS, Inflation: f.Inflation,
		NotComputed: c.why, modelTauS: f.Taus[0]}
	cf.DropC, _, _ = total(f, 1)
	if len(f.Taus) > 1 {
		cf.fastTauS = f.Taus[1]
		if _, hidden := c.why["cool_tau_fast_s"]; !hidden {
			cf.CoolTauFastS = ptr(f.Taus[1])
		}
	}
	switch {
	case cf.DropC <= 0:
		return nil, fmt.Errorf("the fitted cooldown rises by %.2f °C instead of falling", -cf.DropC)
	case cf.modelTauS < dt:
		return nil, fmt.Errorf("fitted cooldown time constant %.2g s is shorter than the sampling interval %.2g s", cf.modelTauS, dt)
	}
	if !finiteAll(cf.CoolTauS, cf.CoolTauLoS, cf.CoolTauHiS, cf.AsymptoteC, cf.DropC, cf.FitR2, cf.RMSC, cf.AICcOne, cf.ModelWeight) {
		return nil, errors.New("the cooldown fit gave a non-finite result")
	}
	if len(cf.NotComputed) == 0 {
		cf.NotComputed = nil
	}
	return cf, nil
}

// phaseReadings returns the readings with from <= t <= to as times since
// from, and their median sampling interval; a gap over maxGap makes no fit.
func phaseReadings(t, v []float64, from, to, maxGap float64) (x, y []float64, dt float64, err error) {
	i, j := window(t, from, math.Nextafter(to, math.Inf(1)))
	if j-i < minFitReadings {
		return nil, nil, 0, fmt.Errorf("%d readings between %.0f s and %.0f s; a fit needs at least %d", j-i, from, to, minFitReadings)
	}
	x = make([]float64, 0, j-i)
	y = make([]float64, 0, j-i)
	gaps := make([]float64, 0, j-i)
	for k := i; k < j; k++ {
		if k > i {
			g := t[k] - t[k-1]
			if maxGap > 0 && g > maxGap {
				return nil, nil, 0, fmt.Errorf("no readings for %.0f s from %.0f s (longer than the %.3g s gap a fit bridges)", g, t[k-1], maxGap)
			}
			gaps = append(gaps, g)
		}
		x = append(x, t[k]-from)
		y = append(y, v[k])
	}
	sort.Float64s(gaps)
	dt = gaps[len(gaps)/2]
	if !(dt > 0) {
		return nil, nil, 0, fmt.Errorf("readings between %.0f s and %.0f s share their times", from, to)
	}
	if len(x) > maxFitPoints {
		x, y = binMeans(x, y, maxFitPoints)
	}
	return x, y, dt, nil
}

// maxFitPoints bounds the readings a fit works on: an hour-long phase at
// 1 Hz is averaged into this many consecutive groups (time and temperature
// means), which leaves the fitted curve unchanged and keeps a two-exponential
// fit, some thousands of least-squares solves, under a second.
const maxFitPoints = 300

// binMeans averages x and y over n groups of consecutive readings of
// (nearly) equal count.
func binMeans(x, y []float64, n int) (bx, by []float64) {
	bx, by = make([]float64, 0, n), make([]float64, 0, n)
	for g := range n {
		i, j := g*len(x)/n, (g+1)*len(x)/n
		if j <= i {
			continue
		}
		sx, sy := 0.0, 0.0
		for k := i; k < j; k++ {
			sx += x[k]
			sy += y[k]
		}
		bx = append(bx, sx/float64(j-i))
		by = append(by, sy/float64(j-i))
	}
	return bx, by
}

func finiteAll(v ...float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// SensorResolution returns the step of the readings: 1 °C when every
// reading is a whole degree (NVML, most hwmon sensors), else the smallest
// difference between two distinct readings.
func SensorResolution(v []float64) float64 {
	whole := true
	for _, x := range v {
		if x != math.Trunc(x) {
			whole = false
			break
		}
	}
	if whole {
		return 1
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	res := math.Inf(1)
	for k := 1; k < len(s); k++ {
		if d := s[k] - s[k-1]; d > 1e-9 && d < res {
			res = d
		}
	}
	if math.IsInf(res, 1) {
		return 1
	}
	return res
}

// HeatIntervalSpread computes the band of HeatIntervalBand around the
// study's heat interval over load.
func HeatIntervalSpread(t, v []float64, load Span, idleMean, minRise float64) (*HeatIntervalBand, error) {
	hi, _, _, err := HeatInterval(t, v, load, idleMean, minRise)
	if err != nil {
		return nil, err
	}
	i, j := window(t, load.Start, math.Nextafter(load.End, math.Inf(1)))
	res := SensorResolution(v[i:j])
	b := &HeatIntervalBand{LoSPerC: hi, HiSPerC: hi, ResolutionC: res, Variants: 1}
	add := func(x float64) {
		b.LoSPerC, b.HiSPerC = math.Min(b.LoSPerC, x), math.Max(b.HiSPerC, x)
		b.Variants++
	}
	within := func(t, v []float64) (float64, bool) {
		_, pk, err := Peak(t, v, load.Start, load.End)
		if err != nil {
			return 0, false
		}
		k0, k1 := window(t, load.Start, math.Nextafter(load.End, math.Inf(1)))
		for k := k0; k < k1; k++ {
			if v[k] >= pk-res-1e-9 {
				rise := v[k] - idleMean
				if rise < minRise || rise <= 0 || t[k] <= load.Start {
					return 0, false
				}
				return (t[k] - load.Start) / rise, true
			}
		}
		return 0, false
	}
	if w, ok := within(t, v); ok {
		b.WithinResolutionSPerC = w
		add(w)
	} else {
		return nil, errors.New("no reading within the sensor's resolution of the load maximum gives an interval")
	}
	if j-i < 3 {
		return b, nil
	}
	gaps := make([]float64, 0, j-i)
	for k := i + 1; k < j; k++ {
		gaps = append(gaps, t[k]-t[k-1])
	}
	sort.Float64s(gaps)
	dt := gaps[len(gaps)/2]
	for _, phase := range []float64{0.25, 0.5, 0.75} {
		// Shift the sampling by phase·dt, from the readings around the
		// load (one before it, for the interpolation at its start).
		var st, sv []float64
		for k := max(i-1, 0); k < min(j+1, len(t))-1; k++ {
			ts := t[k] + phase*dt
			if ts > t[k+1] {
				continue
			}
			w := (ts - t[k]) / (t[k+1] - t[k])
			st = append(st, ts)
			sv = append(sv, math.Round((v[k]+w*(v[k+1]-v[k]))/res)*res)
		}
		if x, _, _, err := HeatInterval(st, sv, load, idleMean, minRise); err == nil {
			add(x)
		}
		if x, ok := within(st, sv); ok {
			add(x)
		}
	}
	return b, nil
}

// steadySliceS is the width of the stretches whose median power
// gpuPowerSteady compares: short enough that a change lasting 5 s moves
// one, even in the last seconds of the load; long enough that the dips
// between a workload's iterations do not.
const steadySliceS = 10

// gpuPowerSteady checks that a GPU component's board power held one level
// through the whole load, its end included: a first-order model assumes
// one heat input, and a load in phases of different power (a workload
// alternating compute and I/O, a script that goes on after its kernels)
// fits one τ to several. The load is cut into steadySliceS stretches from
// its end back to its first tenth (skipped: the ramp-up); the last
// stretch's median, and all but a short recovered dip's, must lie within
// 15 % of the median over all of them.
// Comparing thirds missed a drop in the last tenth: it never moves a
// third's median. Components other than GPUs, and GPUs without power
// readings, pass.
func gpuPowerSteady(r *Run, c *Component, load Span) error {
	if c.Kind != KindGPUCore && c.Kind != KindGPUMem {
		return nil
	}
	idx := c.ID[strings.LastIndex(c.ID, ":")+1:]
	ss := r.Find("gpu", "power_w", func(s *Series) bool { return s.Tag("gpu") == idx && s.Tag("host") == c.Host })
	if len(ss) != 1 {
		return nil
	}
	t, v := Finite(ss[0].T, ss[0].V)
	from := load.Start + load.Duration()/10
	i, j := window(t, from, math.Nextafter(load.End, math.Inf(1)))
	if j-i < 3 {
		return nil
	}
	m := median(v[i:j])
	var first error
	off := 0
	for hi := load.End; hi > from; hi -= steadySliceS {
		lo := math.Max(from, hi-steadySliceS)
		a, b := window(t, lo, math.Nextafter(hi, math.Inf(1)))
		if b-a < 3 {
			continue
		}
		if x := median(v[a:b]); m > 0 && math.Abs(x-m) > 0.15*m {
			err := fmt.Errorf("the GPU's power changed during the load (median %.0f W over %.0f–%.0f s, %.0f W over the load): a first-order fit assumes one power", x, lo, hi, m)
			if hi == load.End {
				return err // the load ends at another power: no recovery follows
			}
			if first == nil {
				first = err
			}
			off++
		}
	}
	// A dip the load recovers from (a checkpoint, a data load between
	// iterations) is not a second heat input: refuse only a change that
	// lasts, a tenth of the load or at least two stretches.
	if first != nil && float64(off)*steadySliceS >= math.Max(2*steadySliceS, 0.1*(load.End-from)) {
		return first
	}
	return nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// maxTauSpread is the widest a time constant's interval may be, as the
// ratio of its ends, for the fit to count as a measurement: τ = 422 s
// within [28, 1610] s says only that the data do not pin τ down, and
// printed beside real results it reads as one.
const maxTauSpread = 10

// determined refuses a fit whose τ interval [lo, hi] spans more than a
// factor maxTauSpread.
func determined(lo, hi float64) error {
	if lo > 0 && hi/lo <= maxTauSpread {
		return nil
	}
	return fmt.Errorf("not determined: the time constant's interval [%.3g, %.3g] s spans a factor over %d, so the data do not fix it", lo, hi, maxTauSpread)
}

// timeConstants fills a component's fitted rise, cooldown and heat-interval
// band.
func (a *analyzer) timeConstants(c *Component, idle *IdleStats, res *ComponentResult) {
	why := res.NotComputed
	level := 1 - a.o.Alpha
	ph := a.ph
	if ph.Load == nil {
		why["load_fit"], why["cooldown_fit"], why["heat_interval_band"] = "no load phase", "no load phase", "no load phase"
		return
	}
	load := *ph.Load
	if idle == nil {
		why["load_fit"] = "needs the idle mean for the rise: " + why["idle_mean_c"]
	} else if err := gpuPowerSteady(a.r, c, load); err != nil {
		why["load_fit"] = err.Error()
	} else if err := loadOvershoot(c.T, c.V, load, idle.Mean); err != nil {
		why["load_fit"] = err.Error()
	} else if f, err := FitLoad(c.T, c.V, load, idle.Mean, a.o.MinRise, a.maxGap, level); err != nil {
		why["load_fit"] = err.Error()
		if se, ok := errors.AsType[*ShortLoadError](err); ok {
			res.RoughLoadFit = se.Rough
		}
	} else if err := determined(f.TauLoS, f.TauHiS); err != nil {
		why["load_fit"] = err.Error()
	} else {
		res.LoadFit = f
	}
	switch {
	case load.Open:
		why["cooldown_fit"] = "the load phase never ended"
	default:
		to := a.endS
		if ph.Cooldown != nil {
			to = ph.Cooldown.End
		}
		if f, err := FitCooldown(c.T, c.V, load.End, to, a.maxGap, level); err != nil {
			why["cooldown_fit"] = err.Error()
		} else if err := determined(f.CoolTauLoS, f.CoolTauHiS); err != nil {
			why["cooldown_fit"] = err.Error()
		} else {
			res.CooldownFit = f
		}
	}
	if idle == nil {
		why["heat_interval_band"] = "needs the idle statistics: " + why["idle_mean_c"]
	} else if b, err := HeatIntervalSpread(c.T, c.V, load, idle.Mean, a.o.MinRise); err != nil {
		why["heat_interval_band"] = err.Error()
	} else {
		res.HeatIntervalBand = b
	}
}

// fitDefinitions state the fitted quantities, with their formulas.
func fitDefinitions(o OptionsUsed) []Definition {
	lv := 100 * (1 - o.Alpha)
	return []Definition{
		{"load_fit", fmt.Sprintf("over the load phase, x = t − t_load_start, the rise T(x) = T0 + ΔT·(1 − e^(−x/τ)) and the double rise T0 + ΔT_slow·(1 − e^(−x/τ)) + ΔT_fast·(1 − e^(−x/τ_fast)) (τ_fast ≤ τ/2, both rising) are fitted by least squares, and the one with the smaller AICc = n·ln(SSE/n) + 2k + 2k(k+1)/(n−k−1) (k = 4 or 6) is kept (model). τ is searched on a log grid with the levels and amplitudes solved linearly at each τ (variable projection; for two, τ_fast minimised at each τ) and refined by golden section. tau_s = τ (the slow one); plateau_c = T0 + ΔT (+ ΔT_fast); rise_c = plateau_c − idle_mean_c; start_c = T0; tau_fast_s = τ_fast (not reported below the sampling interval) and fast_share = ΔT_fast/(ΔT_slow + ΔT_fast); fit_r2 = 1 − SSE/SST; rms_c = √(SSE/n). Each model's own τ interval is the %.3g %% profile-likelihood interval {τ : SSE(τ) − SSE_min ≤ F(1, n−p) · s²}, its rise interval is its rise ± t(n−p) · SE(plateau) from the linearised covariance (the idle mean taken as exact); s² = SSE/(n−p) × max(1, (1+ρ₁)/(1−ρ₁)), ρ₁ the residuals' lag-1 autocorrelation (interval_inflation), p the parameters. Phases of over %d readings are fitted on %d group means. Where both models are fitted (two-exponential admitted: both terms rising, τ bounded), each gets the Akaike weight w_i = e^(−Δ_i/2)/Σ_j e^(−Δ_j/2), Δ_i = AICc_i − min AICc (model_weight is the chosen model's; models lists each model's own aicc, weight, tau_s and rise_c as {value, lo, hi}), and tau_s, rise_c and plateau_c are the averages Σ w_i θ_i while tau_lo_s–tau_hi_s and rise_lo_c–rise_hi_c are the model-averaged tail-area (MATA) interval: the L and U with Σ w_i P_i(θ < L) = Σ w_i P_i(θ > U) = α/2, P_i a Student t(n−p_i) split at θ_i and scaled on each side so that its central %.3g %% interval is model i's own interval (stretched to hold the average where a far model with under α/2 of the weight moves it more than the tails); with one model admitted these are that model's values. The fitted curve drawn is the chosen model's. Not computed without the idle mean, when rise_c is under %.3g °C, τ is shorter than the sampling interval, the load lasted under 3τ, a gap over %.3g s interrupts it, the median of a 10 s stretch of a GPU's power (from the end of the load back to its first tenth) lay over 15 %% from its median over the load, or the temperature fell back from a peak during the load (10 s means) by over max(2 °C, 10 %% of the rise): the cooling changed under it", lv, maxFitPoints, maxFitPoints, lv, o.MinRiseC, o.MaxGapS)},
		{"cooldown_fit", fmt.Sprintf("from the end of the load to the end of the cooldown (or of the recording), x = t − t_load_end, T(x) = T∞ + A·e^(−x/τ) and T∞ + A_slow·e^(−x/τ_slow) + A_fast·e^(−x/τ_fast) (τ_fast ≤ τ_slow/2, both falling) are fitted and chosen by AICc as the load fit is, with the same intervals, weights and averages. cool_tau_s = τ or τ_slow, averaged over the admitted models, with its %.3g %% interval (each model's profile interval, τ_fast re-fitted at each τ_slow, averaged as tau_s's); cool_tau_fast_s = τ_fast (not reported below the sampling interval); fast_share = A_fast/(A_fast + A_slow); asymptote_c = T∞; drop_c = the fitted drop at the load's end", lv)},
		{"heat_interval_band", "the spread of heat_interval_s_per_c from its definition: lo_s_per_c–hi_s_per_c covers the interval as defined, the interval with t_peak the first reading within the sensor's resolution (resolution_c: 1 °C for whole-degree sensors) of the load maximum (within_resolution_s_per_c), and both again on the readings resampled (linear interpolation, rounded to the resolution) at sampling phases shifted by ¼, ½ and ¾ of the sampling interval"},
	}
}
