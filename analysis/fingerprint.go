package analysis

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// EpisodeResult is one component's results over one episode of its device:
// every per-component quantity of the report (ComponentResult, computed
// with the episode's baseline, load and cooldown as the phases), and for a
// GPU its thermal fingerprint.
type EpisodeResult struct {
	Episode int `json:"episode"`
	ComponentResult
	// Fingerprint is nil for a component other than a GPU's.
	*Fingerprint
}

// Fingerprint is how a GPU (core or memory) behaved thermally over one
// episode, in quantities that compare across GPUs running different jobs.
type Fingerprint struct {
	// Model is the GPU's model name, so that only like is compared.
	Model string `json:"model,omitempty"`
	// ThermalResistanceCPerW is the steady rise over idle per watt of
	// power above idle: rise_c of the load fit over (power_w −
	// idle_power_w), its interval from the rise's. Where the load fit
	// does not hold, the rise at the end of the load (or, where the
	// cooling reacted during the load, at its peak: CoolingReacted) is
	// used instead and ThermalResistanceFrom says that it is a lower bound
	// (Lo = the value, Hi absent).
	ThermalResistanceCPerW   *float64 `json:"thermal_resistance_c_per_w"`
	ThermalResistanceLoCPerW *float64 `json:"thermal_resistance_lo_c_per_w"`
	ThermalResistanceHiCPerW *float64 `json:"thermal_resistance_hi_c_per_w"`
	ThermalResistanceFrom    string   `json:"thermal_resistance_from,omitempty"`
	// NeighbourDecayC is how much heat from another GPU's load, ended
	// just before this episode's baseline, raised the idle mean above
	// what the end of this load is measured against; it is added back to
	// the rise (fingerprintdecay.go). NeighbourDecayFrom is that GPU.
	// Absent where no such load preceded the baseline.
	NeighbourDecayC    *float64 `json:"neighbour_decay_c,omitempty"`
	NeighbourDecayFrom string   `json:"neighbour_decay_from,omitempty"`
	// CoolingReacted says the temperature peaked during the load and fell
	// back at steady power (fans or a coolant controller reacting, as the
	// H200s' core does within half a minute): no time constant describes
	// the rise, and the thermal resistance is the lower bound from the
	// peak of 10 s means, the larger of the two bounds the load gives;
	// EndOfLoadCPerW is the other, from the end of the load, where the
	// cooling had caught up. PeakAfterS is how long into the load the
	// 10 s means peaked.
	CoolingReacted bool     `json:"cooling_reacted,omitempty"`
	EndOfLoadCPerW *float64 `json:"end_of_load_c_per_w,omitempty"`
	PeakAfterS     *float64 `json:"peak_after_s,omitempty"`
	TauS           *float64 `json:"tau_s"`
	PowerW         *float64 `json:"power_w"`
	IdlePowerW     *float64 `json:"idle_power_w"`
	// ThrottleThermalShare and ThrottlePowerShare are the fractions of the
	// load's readings with a thermal and a power clock event (throttle_*
	// fields, else clock_event_reasons decoded).
	ThrottleThermalShare *float64 `json:"throttle_thermal_share"`
	ThrottlePowerShare   *float64 `json:"throttle_power_share"`
	SMClockMedianMHz     *float64 `json:"sm_clock_median_mhz"`
	// ThroughputPerW is the workload's median throughput over the
	// episode's iterations per watt of all the host's GPUs loaded then.
	ThroughputPerW   *float64 `json:"throughput_per_w"`
	ThroughputMetric string   `json:"throughput_metric,omitempty"`
	// NeighboursLoaded are the other GPUs of the host with an episode
	// overlapping this one's baseline or load: their heat is in this
	// GPU's rise, so the verdicts prefer episodes without any.
	NeighboursLoaded []string `json:"neighbours_loaded,omitempty"`
}

// episodes finds the load episodes of a recording without phases and runs
// every per-component analysis over each of them; then the neighbour
// heating and the verdicts. A recording with phases keeps them.
func (a *analyzer) episodes(comps, coolants []*Component) {
	if a.ph.Baseline != nil || a.ph.Load != nil {
		return
	}
	rule := cmp.Or(a.o.Episodes, DefaultEpisodeRule())
	a.rep.Definitions = append(a.rep.Definitions, episodeDefinitions(rule)...)
	a.rep.Definitions = append(a.rep.Definitions, fingerprintDefinitions()...)
	a.rep.Definitions = append(a.rep.Definitions, couplingDefinitions()...)
	a.rep.Definitions = append(a.rep.Definitions, verdictDefinitions()...)
	eps, notes := findEpisodes(a.r, comps, a.endS, rule)
	a.rep.Notes = append(a.rep.Notes, notes...)
	if len(eps) == 0 {
		a.rep.NotComputed["episodes"] = "no device's power (GPU power_w, RAPL power_w or CPU usage_pct) rose well above its idle level and stayed there"
		return
	}
	a.rep.Episodes = eps
	a.rep.Notes = append(a.rep.Notes, fmt.Sprintf("the run records no baseline or load phase: %d load episodes were found in the devices' own power, each analysed with its own baseline, load and cooldown (components[].episodes)", len(eps)))
	byID := map[string]*Component{}
	for _, c := range comps {
		byID[c.ID] = c
	}
	type job struct {
		e *Episode
		c *Component
	}
	var jobs []job
	for _, e := range eps {
		for _, id := range e.members {
			if c := byID[id]; c != nil && c.Err == nil && len(c.T) > 0 {
				jobs = append(jobs, job{e, c})
			}
		}
	}
	wl := Workload(a.r)
	out := make([]EpisodeResult, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, j := range jobs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = a.episodeResult(j.e, j.c, coolants, eps, wl)
		})
	}
	wg.Wait()
	rows := map[string]int{}
	for i, c := range a.rep.Components {
		rows[c.ID] = i
	}
	for _, r := range out {
		i := rows[r.ID]
		a.rep.Components[i].Episodes = append(a.rep.Components[i].Episodes, r)
	}
	a.rep.Coupling = NeighbourCoupling(eps, comps, a.rep.Components)
	correctNeighbourDecay(a.rep.Components, eps, a.rep.Coupling)
	a.rep.Verdicts = Verdicts([]*Report{a.rep}, nil)
}

// episodeResult analyses component c over episode e.
func (a *analyzer) episodeResult(e *Episode, c *Component, coolants []*Component, eps []*Episode, wl WorkloadResult) EpisodeResult {
	load := e.Load()
	ph := Phases{Baseline: e.Baseline, Load: &load, Cooldown: e.Cooldown}
	from, to := load.Start, a.endS
	if e.Baseline != nil {
		from = e.Baseline.Start
	}
	if e.Cooldown != nil {
		to = e.Cooldown.End
	}
	sub := analyzer{r: a.r.window(e.Host, from, to), o: a.o, maxGap: a.maxGap, ph: ph, endS: to}
	var cs []*Component
	for _, k := range coolants {
		cs = append(cs, k.window(from, to))
	}
	res := EpisodeResult{Episode: e.Index, ComponentResult: sub.component(c.window(from, to), cs)}
	if res.NotComputed == nil {
		res.NotComputed = map[string]string{}
	}
	if c.Kind == KindGPUCore || c.Kind == KindGPUMem {
		res.Fingerprint = gpuFingerprint(sub.r, e, &res.ComponentResult, eps, wl)
	}
	if len(res.NotComputed) == 0 {
		res.NotComputed = nil
	}
	return res
}

// window returns c with only its readings from..to.
func (c *Component) window(from, to float64) *Component {
	w := *c
	i, j := window(c.T, from, to+1e-9)
	w.T, w.V = c.T[i:j], c.V[i:j]
	if len(c.Min) == len(c.T) {
		w.Min, w.Max = c.Min[i:j], c.Max[i:j]
	}
	return &w
}

// window returns a view of r holding the GPU series of host with only
// their readings from..to: what the per-component analyses read of the
// run besides the component itself.
func (r *Run) window(host string, from, to float64) *Run {
	w := &Run{Dir: r.Dir, Meta: r.Meta, Start: r.Start}
	for _, s := range r.Series {
		if s.Measurement != schema.GPU || s.Tag(schema.TagHost) != host || s.Backwards > 0 {
			continue
		}
		v := *s
		i, j := window(s.T, from, to+1e-9)
		v.T, v.V = s.T[i:j], s.V[i:j]
		w.Series = append(w.Series, &v)
	}
	return w
}

// gpuFingerprint computes a GPU component's fingerprint over episode e
// from its results res and the run view r of the episode.
func gpuFingerprint(r *Run, e *Episode, res *ComponentResult, eps []*Episode, wl WorkloadResult) *Fingerprint {
	why := res.NotComputed
	idx := res.ID[strings.LastIndex(res.ID, ":")+1:]
	gpu := func(field string) []*Series {
		return r.Find(schema.GPU, field, func(s *Series) bool { return s.Tag(schema.TagGPU) == idx })
	}
	fp := &Fingerprint{PowerW: e.PowerW, IdlePowerW: e.IdlePowerW}
	if ss := gpu(schema.FieldPowerW); len(ss) > 0 {
		fp.Model = ss[0].Tag(schema.TagModel)
	}
	load := e.Load()
	if res.LoadFit != nil {
		fp.TauS = ptr(res.LoadFit.TauS)
	} else {
		why["tau_s"] = "no load fit: " + why["load_fit"]
	}
	fp.thermalResistance(res, load, why)
	shares := func(key, field string, mask uint64) {
		if ss := gpu(field); len(ss) == 1 {
			if m, ok := meanOver(ss[0], load); ok {
				fp.setShare(key, m)
				return
			}
		}
		if ss := gpu(schema.FieldClockEventReasons); len(ss) == 1 {
			i, j := window(ss[0].T, load.Start, load.End)
			n, hit := 0, 0
			for _, x := range ss[0].V[i:j] {
				if !math.IsNaN(x) {
					n++
					if uint64(x)&mask != 0 {
						hit++
					}
				}
			}
			if n > 0 {
				fp.setShare(key, float64(hit)/float64(n))
				return
			}
		}
		why[key] = "the run records no clock event reasons for this GPU"
	}
	shares("throttle_thermal_share", schema.FieldThrottleThermal, schema.ClockEventsThermal)
	shares("throttle_power_share", schema.FieldThrottlePower, schema.ClockEventsPower)
	if ss := gpu(schema.FieldSMClockMHz); len(ss) == 1 {
		i, j := window(ss[0].T, load.Start, load.End)
		if _, v := Finite(ss[0].T[i:j], ss[0].V[i:j]); len(v) > 0 {
			fp.SMClockMedianMHz = ptr(median(v))
		}
	}
	if fp.SMClockMedianMHz == nil {
		why["sm_clock_median_mhz"] = "no SM clock readings during the load"
	}
	fp.throughput(e, eps, wl, why)
	from := e.StartS
	if e.Baseline != nil {
		from = e.Baseline.Start
	}
	for _, o := range eps {
		if o != e && o.Host == e.Host && o.GPU != "" && o.GPU != e.GPU && o.StartS < e.EndS && o.EndS > from && !slices.Contains(fp.NeighboursLoaded, o.GPU) {
			fp.NeighboursLoaded = append(fp.NeighboursLoaded, o.GPU)
		}
	}
	return fp
}

func (fp *Fingerprint) setShare(key string, v float64) {
	if key == "throttle_thermal_share" {
		fp.ThrottleThermalShare = ptr(v)
	} else {
		fp.ThrottlePowerShare = ptr(v)
	}
}

// meanOver is the mean of s's finite readings within span.
func meanOver(s *Series, sp Span) (float64, bool) {
	i, j := window(s.T, sp.Start, sp.End)
	sum, n := 0.0, 0
	for _, x := range s.V[i:j] {
		if !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	return sum / float64(n), n > 0
}

// endRiseS is how much of the end of the load the lower bound of the
// thermal resistance averages: at most a minute, at most a quarter of the
// load.
func endRiseS(load Span) float64 { return math.Min(60, load.Duration()/4) }

// thermalResistance fills the °C/W from the load fit's plateau, else the
// lower bound from the end of the load.
func (fp *Fingerprint) thermalResistance(res *ComponentResult, load Span, why map[string]string) {
	const key = "thermal_resistance_c_per_w"
	if fp.PowerW == nil || fp.IdlePowerW == nil {
		why[key] = "needs the load's and the baseline's power (the episode has no baseline)"
		return
	}
	dp := *fp.PowerW - *fp.IdlePowerW
	if dp <= 0 {
		why[key] = fmt.Sprintf("the load drew no more than the idle (%.0f W against %.0f W)", *fp.PowerW, *fp.IdlePowerW)
		return
	}
	if f := res.LoadFit; f != nil {
		fp.ThermalResistanceCPerW, fp.ThermalResistanceLoCPerW, fp.ThermalResistanceHiCPerW = ptr(f.RiseC/dp), ptr(f.RiseLoC/dp), ptr(f.RiseHiC/dp)
		fp.ThermalResistanceFrom = "load_fit"
		return
	}
	if res.IdleMeanC == nil {
		why[key] = "needs the idle mean: " + why["idle_mean_c"]
		return
	}
	c := res.Series
	w := endRiseS(load)
	if c == nil {
		why[key] = "no readings"
		return
	}
	m, ok := meanOver(&Series{T: c.T, V: c.V}, Span{Start: load.End - w, End: load.End})
	if !ok {
		why[key] = fmt.Sprintf("no readings in the last %.0f s of the load", w)
		return
	}
	why["thermal_resistance_hi_c_per_w"] = "a lower bound only: the load fit did not hold"
	end := (m - *res.IdleMeanC) / dp
	if o, reacted := overshootOf(c.T, c.V, load, *res.IdleMeanC); reacted {
		fp.CoolingReacted, fp.EndOfLoadCPerW = true, ptr(end)
		fp.ThermalResistanceCPerW = ptr((o.peakC - *res.IdleMeanC) / dp)
		fp.ThermalResistanceLoCPerW = fp.ThermalResistanceCPerW
		fp.ThermalResistanceFrom = fmt.Sprintf("lower bound: the peak of 10 s means, %.0f s into the load, before the cooling reacted (no load fit: %s)", o.peakAtS-load.Start, why["load_fit"])
		fp.PeakAfterS = ptr(o.peakAtS - load.Start)
		return
	}
	fp.ThermalResistanceCPerW = ptr(end)
	fp.ThermalResistanceLoCPerW = fp.ThermalResistanceCPerW
	fp.ThermalResistanceFrom = fmt.Sprintf("lower bound: mean of the last %.0f s of the load (no load fit: %s)", w, why["load_fit"])
}

// throughput fills the workload's throughput per watt over the episode.
func (fp *Fingerprint) throughput(e *Episode, eps []*Episode, wl WorkloadResult, why map[string]string) {
	const key = "throughput_per_w"
	if wl.Throughput == "" || wl.Throughput == "runtime_s" || len(wl.Timeline) == 0 {
		why[key] = "the run records no workload iterations with a throughput"
		return
	}
	// Iterations that name their GPU (a survey's, one job per GPU) count
	// for that GPU alone, over its own power; a run's one job spans every
	// GPU loaded at the time.
	perGPU := slices.ContainsFunc(wl.Timeline, func(it IterationValue) bool { return it.GPU != "" })
	var v []float64
	for _, it := range wl.Timeline {
		if perGPU && it.GPU != e.GPU {
			continue
		}
		if it.AtS > e.StartS && it.AtS <= e.EndS+1 {
			v = append(v, it.Value)
		}
	}
	if len(v) == 0 {
		why[key] = "no workload iteration ended during the episode"
		if perGPU {
			why[key] = "no workload iteration on this GPU ended during the episode"
		}
		return
	}
	watts := 0.0
	if perGPU {
		watts = derefOr(e.PowerW, 0)
	} else {
		mid := (e.StartS + e.EndS) / 2
		for _, o := range eps {
			if o.Host == e.Host && o.GPU != "" && o.PowerW != nil && o.StartS <= mid && mid <= o.EndS {
				watts += *o.PowerW
			}
		}
	}
	if watts <= 0 {
		why[key] = "no GPU power during the episode"
		return
	}
	fp.ThroughputPerW, fp.ThroughputMetric = ptr(median(v)/watts), wl.Throughput
}

// fingerprintDefinitions state the fingerprint's quantities.
func fingerprintDefinitions() []Definition {
	return []Definition{
		{"thermal_resistance_c_per_w", "per GPU (core and memory) per episode: rise_c of the episode's load fit (fitted plateau − idle mean) over power_w − idle_power_w (medians over load and baseline), its interval rise_lo_c..rise_hi_c over the same watts (the power taken as exact); where the load fit does not hold, (mean of the last min(60 s, ¼ of the load) − idle mean) over the same watts, marked as a lower bound (thermal_resistance_from); where it does not hold because the temperature peaked and fell back at steady power (cooling_reacted: fans or a coolant controller reacting), (the peak of 10 s means, peak_after_s into the load, − idle mean) over the same watts, the larger lower bound, with the end of the load's as end_of_load_c_per_w. Where the episode's baseline follows another GPU's load (ended last before it) whose heat in this GPU the coupling measured (its rise_c for that episode, H), that heat is taken to leave at this GPU's own τ (median cool_tau_s of its episodes, else tau_s) from the end of that load: its mean over the baseline less what is left of it when the rise is read (the end of the load, or the peak) is neighbour_decay_c, added to the rise (all three values and the end-of-load bound)"},
		{"throttle_thermal_share, throttle_power_share", "fraction of the load's readings whose clock event reasons hold a thermal slowdown (HW slowdown, HW or SW thermal) or a power limit (SW power cap, HW power brake)"},
		{"sm_clock_median_mhz", "median SM clock over the load"},
		{"throughput_per_w", "median of the workload's throughput metric over the iterations that ended during the episode, over the summed median power of the host's GPUs loaded at the episode's midpoint; where the iterations name their GPU (a survey runs one job per GPU), over this GPU's own iterations and its own median power"},
	}
}
