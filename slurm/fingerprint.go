package slurm

import "github.com/heatsink-hpc/heatsink/analysis"

// GPUFingerprint is a GPU's thermal fingerprint over the job: the
// report's Fingerprint (analysis/fingerprint.go) of the GPU's load
// episode within the job, found in the GPU's own power as `heatsink
// report` finds episodes in a recording without phases. Where the GPU
// had several, the one overlapping the job longest (the later of equals).
type GPUFingerprint struct {
	// LoadStartS and LoadEndS bound the episode's load, in seconds since
	// the job's start (before 0 where the load began before the job).
	LoadStartS float64 `json:"load_start_s"`
	LoadEndS   float64 `json:"load_end_s"`
	*analysis.Fingerprint
	// NotComputed says why a quantity of the fingerprint is missing.
	NotComputed map[string]string `json:"not_computed,omitempty"`
}

// noEpisode is the reason a GPU of the job has no fingerprint.
const noEpisode = "no load episode of this GPU within the job: its power did not rise well above its idle level and stay there long enough (the episode rule of heatsink report)"

// jobFingerprints analyses run again without its phases, so that each
// device's load episodes are found in its own power, and returns per
// host and GPU index ("host\x00gpu") the fingerprint of the GPU's episode
// that overlaps [from, to] (seconds since the run's start) longest, or
// the reason there is none.
func jobFingerprints(run *analysis.Run, o analysis.Options, from, to float64) (map[string]*GPUFingerprint, map[string]string) {
	r := *run
	if run.Meta != nil {
		m := *run.Meta
		m.Phases = nil
		r.Meta = &m
	}
	r.EventPhases = nil
	rep := analysis.Analyze(&r, o)
	byIndex := map[int]*analysis.Episode{}
	for _, e := range rep.Episodes {
		byIndex[e.Index] = e
	}
	fps, why := map[string]*GPUFingerprint{}, map[string]string{}
	for _, c := range rep.Components {
		gpu, ok := gpuOf(c.ID)
		if c.Kind != analysis.KindGPUCore || !ok {
			continue
		}
		key := c.Host + "\x00" + gpu
		var best *analysis.EpisodeResult
		var bestE *analysis.Episode
		bestS := 0.0
		for i := range c.Episodes {
			res := &c.Episodes[i]
			e := byIndex[res.Episode]
			if e == nil || res.Fingerprint == nil {
				continue
			}
			if s := min(e.EndS, to) - max(e.StartS, from); s > 0 && s >= bestS {
				best, bestE, bestS = res, e, s
			}
		}
		if best == nil {
			why[key] = noEpisode
			if r := rep.NotComputed["episodes"]; r != "" {
				why[key] = "no load episode: " + r
			}
			continue
		}
		fps[key] = &GPUFingerprint{LoadStartS: bestE.StartS - from, LoadEndS: bestE.EndS - from, Fingerprint: best.Fingerprint,
			NotComputed: fingerprintWhy(best.NotComputed)}
	}
	return fps, why
}

// fingerprintWhy keeps the reasons that concern the fingerprint's own
// quantities.
func fingerprintWhy(all map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"thermal_resistance_c_per_w", "tau_s", "throttle_thermal_share", "throttle_power_share", "sm_clock_median_mhz", "throughput_per_w"} {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// fingerprintDefinition is the summary's definition of the fingerprint.
const fingerprintDefinition = "per GPU the thermal fingerprint (thermal_resistance_c_per_w, tau_s, power_w, idle_power_w, throttle shares, SM clock; docs/report-schema.md) of its load episode within the job, found in the GPU's own power as heatsink report finds episodes in a recording without phases; where it had several, the one overlapping the job longest; absent, with fingerprint_not_computed, where the job loaded the GPU too little or too briefly for one"
