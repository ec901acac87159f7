package analysis

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// ReportSchema is the version of the Report's JSON form (docs/report-schema.md).
// Fields may be added within a version; none is renamed or removed.
const ReportSchema = 1

// Report is everything `heatsink report` says about one run. Every number is
// either computed or nil with the reason in NotComputed (keyed by the JSON
// name of the field), so nothing is ever invented to fill a table.
type Report struct {
	Schema      int               `json:"schema"`
	Run         RunInfo           `json:"run"`
	Phases      Phases            `json:"phases"`
	Options     OptionsUsed       `json:"options"`
	Definitions []Definition      `json:"definitions"`
	Components  []ComponentResult `json:"components"`
	PumpCycles  []PumpCycle       `json:"pump_cycles"`
	// PumpCycleFit is heat removed per cycle regressed on the coolant
	// temperature at the cycle's start.
	PumpCycleFit  *PumpCycleFit `json:"pump_cycle_fit"`
	CoolingEnergy CoolingEnergy `json:"cooling_energy"`
	// Slowdown is the runtime of each iteration against temperature, one
	// regression per component (the JSON name is kept from when the
	// section was called thermal slowdown).
	Slowdown []SlowdownResult `json:"slowdown"`
	// BlindSpot is, for an immersed run, each hardware component's rise
	// against the coolant's over the same load.
	BlindSpot []BlindSpot `json:"blind_spot"`
	// Workload is the job's own per-iteration results during the load.
	Workload WorkloadResult `json:"workload"`
	// Hold is how heatsink run --hold held its component (hold.go).
	Hold *HoldResult `json:"hold,omitempty"`
	// Episodes, Coupling and Verdicts are the load episodes found in a
	// recording without phases, the neighbour heating measured in them and
	// the GPUs compared (episodes.go, coupling.go, verdicts.go).
	Episodes []*Episode `json:"episodes,omitempty"`
	Coupling []Coupling `json:"coupling,omitempty"`
	Verdicts []Verdict  `json:"verdicts,omitempty"`
	// Survey is, for the recording of heatsink survey, its judgement: the
	// survey.json beside it, or judged afresh where there is none
	// (SurveyOf). Analyze leaves it nil; the caller that has the
	// directory fills it.
	Survey *Survey `json:"survey,omitempty"`
	// Analyses are the registered extensions' results, by name (see
	// Extension); one that could not be computed says why in NotComputed
	// under its name.
	Analyses map[string]any `json:"analyses,omitempty"`
	// Recorded are the host's utilisation series (CPU, memory, load), for
	// the figures of what a machine without temperatures recorded; not part
	// of the JSON.
	Recorded []*Series `json:"-"`
	// NotComputed holds, for the top-level results (pump_cycles,
	// pump_cycle_fit, slowdown, phases, and each extension's name), why
	// they are missing.
	NotComputed map[string]string `json:"not_computed,omitempty"`
	// Notes are warnings about the input: skipped lines, odd phases.
	Notes []string `json:"notes,omitempty"`
}

// RunInfo identifies the run a report describes.
type RunInfo struct {
	ID       string            `json:"id"`
	Dir      string            `json:"dir"`
	Host     string            `json:"host,omitempty"`
	Start    time.Time         `json:"start"`
	EndS     float64           `json:"end_s"` // last reading, seconds after Start
	Status   string            `json:"status,omitempty"`
	Cooling  string            `json:"cooling"` // immersion, air or unknown
	Workload string            `json:"workload,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
	Points   int               `json:"points"`
	BadLines int               `json:"bad_lines"`
}

// OptionsUsed records the options in the units the report uses.
type OptionsUsed struct {
	ToleranceC                  float64 `json:"tolerance_c"`
	HoldS                       float64 `json:"hold_s"`
	WindowS                     float64 `json:"window_s"`
	MinRiseC                    float64 `json:"min_rise_c"`
	MaxGapS                     float64 `json:"max_gap_s"`
	OnsetFraction               float64 `json:"onset_fraction"`
	OnsetSmoothS                float64 `json:"onset_smooth_s"`
	AirCoolingFraction          float64 `json:"air_cooling_fraction"`
	PumpFlowLPM                 float64 `json:"pump_flow_threshold_lpm"`
	CoolantDensityKgPerL        float64 `json:"coolant_density_kg_per_l"`
	CoolantHeatCapacityKJPerKgK float64 `json:"coolant_heat_capacity_kj_per_kg_k"`
	Alpha                       float64 `json:"alpha"`
	NearLimitC                  float64 `json:"near_limit_c"`
	CoolantMoveC                float64 `json:"coolant_move_c"`
	ControllerC                 float64 `json:"controller_c,omitempty"`
	Cooling                     string  `json:"cooling,omitempty"`
}

// Definition states how one reported quantity is computed.
type Definition struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

func ptr(v float64) *float64 { return &v }

// Analyze runs every analysis over r with options o, used as given (start
// from DefaultOptions and check with Options.Validate). It never fails: what
// cannot be computed is reported with the reason.
func Analyze(r *Run, o Options) *Report {
	rep := &Report{Schema: ReportSchema, NotComputed: map[string]string{}}
	endS := 0.0
	for _, s := range r.Series {
		for _, t := range s.T {
			endS = math.Max(endS, t)
		}
	}
	m := r.Meta
	rep.Run = RunInfo{ID: m.ID, Dir: r.Dir, Host: m.Host, Start: r.Start, EndS: endS, Status: m.Status,
		Labels: m.Labels, Points: r.Points, BadLines: r.BadLines}
	if m.Workload != nil {
		rep.Run.Workload = m.Workload.Name
	}
	if r.BadLines > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d lines of points.lp could not be decoded and were skipped; first: %s",
			r.BadLines, strings.Join(r.BadLineErrors, "; ")))
	}
	rep.Notes = append(rep.Notes, r.Notes...)
	if r.Points == 0 && len(r.Notes) == 0 {
		rep.Notes = append(rep.Notes, "the run recorded no points")
	}

	maxGap := o.MaxGap.Seconds()
	if maxGap == 0 {
		iv := m.IntervalS
		if iv <= 0 {
			iv = 1
		}
		maxGap = 5 * iv
	}
	rep.Options = OptionsUsed{
		ToleranceC: o.Tolerance, HoldS: o.Hold.Seconds(), WindowS: o.Window.Seconds(), MinRiseC: o.MinRise,
		MaxGapS: maxGap, OnsetFraction: o.OnsetFraction, OnsetSmoothS: o.OnsetSmooth.Seconds(),
		AirCoolingFraction: o.AirCoolingFraction, PumpFlowLPM: o.PumpFlowLPM,
		CoolantDensityKgPerL: o.CoolantDensityKgPerL, CoolantHeatCapacityKJPerKgK: o.CoolantHeatCapacityKJPerKgK,
		Alpha: o.Alpha, NearLimitC: o.NearLimitC, CoolantMoveC: o.CoolantMoveC, ControllerC: o.ControllerC, Cooling: o.Cooling,
	}
	rep.Definitions = append(definitions(rep.Options), fitDefinitions(rep.Options)...)

	recorded := m.Phases
	if len(recorded) == 0 && len(r.EventPhases) > 0 {
		recorded = r.EventPhases
		rep.Notes = append(rep.Notes, "run.json lists no phases; phases taken from the event points")
	}
	ph, notes := ResolvePhases(recorded, r.Start, endS)
	rep.Phases = ph
	rep.Notes = append(rep.Notes, notes...)
	switch {
	case ph.Baseline == nil && ph.Load == nil:
		rep.NotComputed["phases"] = "the run records neither a baseline nor a load phase (run.json phases or event points)"
	case ph.Baseline == nil:
		rep.NotComputed["phases"] = "the run records no baseline phase"
	case ph.Load == nil:
		rep.NotComputed["phases"] = "the run records no load phase"
	}
	if ph.Load != nil && ph.Load.Open {
		rep.Notes = append(rep.Notes, "the load phase has no recorded end; it is taken to last until the end of the recording")
	}

	if note := trimLoad(r, &ph); note != "" {
		rep.Phases = ph
		rep.Notes = append(rep.Notes, note)
	}
	iv := m.IntervalS
	if iv <= 0 {
		iv = 1
	}
	a := analyzer{r: r, o: o, maxGap: maxGap, intervalS: iv, ph: ph, endS: endS, rep: rep}
	comps := Components(r)
	var coolantList []*Component
	for _, c := range comps {
		if c.Kind == KindCoolant && c.Err == nil && len(c.T) > 0 {
			coolantList = append(coolantList, c)
		}
	}
	// Components are analysed in parallel: each reads the run and writes
	// only its own row, and the fitted time constants make a row cost
	// tens of milliseconds.
	rows := make([]ComponentResult, len(comps))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, c := range comps {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rows[i] = a.component(c, coolantList)
		})
	}
	wg.Wait()
	rep.Components = append(rep.Components, rows...)
	a.episodes(comps, coolantList)
	if len(comps) == 0 && r.Points > 0 {
		rep.Notes = append(rep.Notes, noTemperatureNotes(r)...)
	}
	a.blindSpot(coolantList)
	a.pumps()
	a.coolingEnergy()
	a.slowdown()
	a.extensions()
	rep.Workload = Workload(r)
	rep.Hold = Hold(r)
	rep.Recorded = HostSeries(r)
	if len(rep.NotComputed) == 0 {
		rep.NotComputed = nil
	}
	rep.Notes = append(rep.Notes, DropNonFinite(rep)...)
	return rep
}

// ownMeasurements are heatsink's records of itself and of the job, not
// readings of the machine.
var ownMeasurements = map[string]bool{schema.Event: true, schema.Iteration: true, schema.Alert: true,
	schema.CollectorTick: true, schema.CollectorSource: true, schema.InfluxSink: true}

// NoTemperatureNote begins the note of a run without a single temperature.
const NoTemperatureNote = "the run holds no temperature (GPU, CPU chip, NVMe, coolant or water), so nothing that needs one could be computed"

// noTemperatureNotes explain a run without a single temperature, a VM's
// usual case: what it recorded instead, and why each source that could have
// given a temperature gave nothing, as run.json's sources say.
func noTemperatureNotes(r *Run) []string {
	var recorded []string
	seen := map[string]bool{}
	for _, s := range r.Series {
		if !ownMeasurements[s.Measurement] && !seen[s.Measurement] {
			seen[s.Measurement] = true
			recorded = append(recorded, s.Measurement)
		}
	}
	sort.Strings(recorded)
	note := NoTemperatureNote
	if len(recorded) > 0 {
		note += "; it recorded only " + strings.Join(recorded, ", ")
	}
	notes := []string{note}
	for _, s := range r.Meta.Sources {
		if s.Error != "" {
			why := strings.TrimSuffix(strings.TrimPrefix(s.Error, "discover: "), ": "+errors.ErrUnsupported.Error())
			notes = append(notes, fmt.Sprintf("source %s was unavailable: %s", s.Name, why))
		}
	}
	return notes
}

// analyzer carries what every analysis of one report shares; each analysis
// is a method in the file named for it (pumps.go, coolingenergy.go, ...)
// and writes its part of rep.
type analyzer struct {
	r      *Run
	o      Options
	maxGap float64
	// intervalS is the sampling interval run.json states (1 s if none).
	intervalS float64
	ph        Phases
	endS      float64
	rep       *Report
}

// definitions states how each reported quantity is computed, with the
// options in force.
func definitions(o OptionsUsed) []Definition {
	return []Definition{
		{"idle_min_c, idle_mean_c, idle_max_c", "minimum, mean and maximum of the readings during the baseline phase"},
		{"max_c", "maximum reading during the load and cooldown phases"},
		{"heat_interval_s_per_c", fmt.Sprintf("heat-accumulation interval (t_peak − t_load_start) / (T_peak − idle_mean), T_peak the load-phase maximum and t_peak the first time it is reached; not computed when T_peak is less than %.3g °C above the idle mean", o.MinRiseC)},
		{"steepest_s_per_c", fmt.Sprintf("steepest sustained rise: the inverse of the largest slope of a least-squares line fitted over every %.0f s window of the load phase (windows covered at least 90 %% with no gap over %.3g s)", o.WindowS, o.MaxGapS)},
		{"return_to_idle_s", fmt.Sprintf("seconds from the end of the load until the readings stay at or below idle_max + %.3g °C for %.0f s (a gap over %.3g s restarts the hold); \"not reached\" otherwise", o.ToleranceC, o.HoldS, o.MaxGapS)},
		{"coolant_peak_diff_c", "largest difference hardware − coolant during the load and cooldown (coolant interpolated to the hardware's readings)"},
		{"coolant_lag_s", fmt.Sprintf("coolant onset minus hardware onset, an onset being the first time after the start of the load that a series' %.0f s centred moving average reaches %.3g of its rise above its idle mean", o.OnsetSmoothS, o.OnsetFraction)},
		{"pump_cycles", fmt.Sprintf("stretches with any pump's rpm above 0, else any pump status on, else coolant flow above %.3g L/min; heat removed from the tank's dissipation, else facility water flow × ΔT × c_water, else coolant flow × ΔT × %.3g kg/L × %.3g kJ/(kg·K); pump energy is the tank's consumption above its pumps-stopped mean", o.PumpFlowLPM, o.CoolantDensityKgPerL, o.CoolantHeatCapacityKJPerKgK)},
		{"pump_cycle_fit", "least-squares line of heat removed (kJ) on coolant temperature at the cycle's start (°C), over complete cycles"},
		{"cooling_energy", fmt.Sprintf("immersion: the tank's consumption integrated; air: %.3g %% of the node power (PDU) not accounted for by GPU and RAPL power, above its baseline mean; from the start of the load until every component is back at idle (else to the end of the recording, a lower bound)", 100*o.AirCoolingFraction)},
		{"slowdown (runtime against temperature)", fmt.Sprintf("per successful iteration, runtime regressed on the component's mean temperature during it; significant when the slope is positive with p < %.3g (two-sided t test); runtime_change_pct_per_10c = 100 × 10 °C × slope / mean runtime, its interval from slope ± t(n−2)·SE at %.3g %%. Not the GPU's clock throttling, which is throttle", o.Alpha, 100*(1-o.Alpha))},
		{"limit, margin_c", "limit: the device's own limit as its driver recorded it (GPU core: slowdown_c, else gpu_max_c, else shutdown_c; GPU memory: mem_max_c; CPU chip: hwmon max_c, else crit_c, the lowest over its sensors; NVMe: warn_c, else crit_c); margin_c = limit − max_c"},
		{"rise_63_s, rise_90_s", fmt.Sprintf("seconds from the start of the load until the %d s centred moving average first covers 63 %% (one time constant of a first-order rise) and 90 %% of its rise from the idle mean to its smoothed load peak", riseSmoothS)},
		{"did_not_rise", fmt.Sprintf("the load peak stayed under %.3g °C above the idle mean: the durations and fits of a rise are not computed", o.MinRiseC)},
		{"throttle", "per GPU, the seconds of the load at which NVML reported a clock event reason (clock_event_reasons; else throttle_thermal and throttle_power), each reading counting one sampling interval: thermal = hw_slowdown, sw_thermal_slowdown or hw_thermal_slowdown; power = sw_power_cap or hw_power_brake_slowdown"},
		{"load trimmed", "when every GPU that drew load power (its median over the load's middle over 1.2 × its idle median) fell below halfway between idle and that level at least 3 s before the load phase ended and stayed there, the load is taken to end at the first such reading, and the rest counts as cooldown"},
		{"blind_spot", fmt.Sprintf("per hardware component of an immersed run, over the (trimmed) load: rise_c = load peak − idle mean, coolant_rise_c the same for the tank's coolant; near_limit_at_s: first reading at or above limit − %.3g °C; coolant_moved_at_s: first time the coolant's %.0f s moving average stands %.3g °C above its idle mean; controller_reached_at_s: first coolant reading at or above the controller's threshold (--controller-c, else the tank's setpoint_c)", o.NearLimitC, o.OnsetSmoothS, o.CoolantMoveC)},
	}
}
