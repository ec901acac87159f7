package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// Episode is one stretch of load on one device, found in its own power
// draw in a recording without phases (`heatsink collect` on a shared node):
// where the power rose well above its idle level and stayed there. Each
// episode gets the phases the analyses need: a baseline from the idle
// stretch before it, the load, and a cooldown until the device's next
// episode or the end of the recording.
type Episode struct {
	// Index numbers the report's episodes from 0 in order of start.
	Index int    `json:"index"`
	Host  string `json:"host,omitempty"`
	// Device is the component the episode belongs to: gpu_core:N for a GPU
	// (its memory is gpu_mem:N), cpu:CHIP for a CPU package.
	Device string `json:"device"`
	// GPU is the GPU's index, "" for a CPU.
	GPU string `json:"gpu,omitempty"`
	// Signal is the series the episode was found in ("gpu power_w",
	// "rapl power_w", "cpu usage_pct").
	Signal string `json:"signal"`
	// Start and End are the wall times of the load; StartS and EndS the
	// same in seconds since the run's start.
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	StartS float64   `json:"start_s"`
	EndS   float64   `json:"end_s"`
	// Open means the device was still loaded at the end of the recording.
	Open     bool  `json:"open,omitempty"`
	Baseline *Span `json:"baseline"`
	Cooldown *Span `json:"cooldown"`
	// PowerW is the median power over the load and IdlePowerW over the
	// baseline (for a CPU found from utilisation: UsagePct and IdleUsagePct).
	PowerW       *float64          `json:"power_w"`
	IdlePowerW   *float64          `json:"idle_power_w"`
	UsagePct     *float64          `json:"usage_pct,omitempty"`
	IdleUsagePct *float64          `json:"idle_usage_pct,omitempty"`
	NotComputed  map[string]string `json:"not_computed,omitempty"`
	// members are the components whose results the episode carries.
	members []string
}

// Load returns the episode's load as a span.
func (e *Episode) Load() Span { return Span{Start: e.StartS, End: e.EndS, Open: e.Open} }

// EpisodeRule holds the constants of episode detection; see
// DefaultEpisodeRule and the definition of "episodes".
type EpisodeRule struct {
	// SmoothN readings make the running median the thresholds are applied
	// to: one reading of a spike or a dip does not start or end a load.
	SmoothN int
	// EnterFraction and ExitFraction place the two thresholds between the
	// idle and load levels (hysteresis: a load starts above the higher and
	// ends below the lower).
	EnterFraction, ExitFraction float64
	// NoiseK: each threshold is at least NoiseK robust standard deviations
	// of the idle readings above the idle level, and the load level must
	// lie 2·NoiseK of them above it, or the series holds no load at all.
	NoiseK float64
	// MinRelRise is the smallest load level above idle that counts, as a
	// fraction of the idle level (a GPU idling at 70 W is not "loaded" at
	// 80 W).
	MinRelRise float64
	// BridgeS: a dip shorter than this between two loads joins them.
	BridgeS float64
	// MinLoadS: a load shorter than this is no episode.
	MinLoadS float64
	// BaselineS is the longest baseline; MinBaselineS the shortest.
	BaselineS, MinBaselineS float64
	// CooldownS is the longest cooldown.
	CooldownS float64
}

// DefaultEpisodeRule returns the rule reports use.
func DefaultEpisodeRule() EpisodeRule {
	return EpisodeRule{SmoothN: 5, EnterFraction: 0.3, ExitFraction: 0.15, NoiseK: 4, MinRelRise: 0.25,
		BridgeS: 30, MinLoadS: 30, BaselineS: 300, MinBaselineS: 20, CooldownS: 3600}
}

// Levels are the power levels episode detection found in one series.
type Levels struct {
	IdleW, IdleSigmaW, LoadW, EnterW, ExitW float64
}

// DetectEpisodes finds the loads in one series of power (or utilisation)
// readings t, v (t sorted): the Otsu split of the running-median readings
// separates idle from load, the idle level is the median of the lower class
// and its noise 1.4826·MAD, the load level the median of the upper class;
// a load starts where the running median rises above EnterW and ends where
// it falls below ExitW, its edges refined to the raw readings, dips under
// BridgeS joined and loads under MinLoadS dropped. It returns no spans and
// the reason when the series never rises well above its idle level.
func DetectEpisodes(t, v []float64, rule EpisodeRule) ([]Span, Levels, error) {
	t, v = Finite(t, v)
	if len(v) < 3*rule.SmoothN {
		return nil, Levels{}, fmt.Errorf("%d readings: too few to tell load from idle", len(v))
	}
	sm := runningMedian(v, rule.SmoothN)
	sorted := slices.Clone(sm)
	sort.Float64s(sorted)
	k := otsuSplit(sorted)
	lower, upper := sorted[:k], sorted[k:]
	lv := Levels{IdleW: median(lower), LoadW: median(upper)}
	lv.IdleSigmaW = madSigma * mad(lower, lv.IdleW)
	rise := lv.LoadW - lv.IdleW
	if floor := math.Max(2*rule.NoiseK*lv.IdleSigmaW, rule.MinRelRise*math.Abs(lv.IdleW)); rise <= floor || len(upper) == 0 {
		return nil, lv, fmt.Errorf("the readings never rise well above their idle level (idle %.4g, upper level %.4g; a load needs %.3g above idle)", lv.IdleW, lv.LoadW, floor)
	}
	lv.EnterW = lv.IdleW + math.Max(rule.EnterFraction*rise, rule.NoiseK*lv.IdleSigmaW)
	lv.ExitW = lv.IdleW + math.Max(rule.ExitFraction*rise, rule.NoiseK*lv.IdleSigmaW/2)
	lv.ExitW = math.Min(lv.ExitW, lv.EnterW)
	var spans []Span
	on, from := false, 0
	for i, x := range sm {
		switch {
		case !on && x > lv.EnterW:
			on, from = true, i
			for from > 0 && v[from-1] >= lv.ExitW {
				from--
			}
		case on && x < lv.ExitW:
			to := i
			for to > from && v[to-1] < lv.ExitW {
				to--
			}
			on = false
			spans = append(spans, Span{Start: t[from], End: t[min(to, len(t)-1)]})
		}
	}
	if on {
		spans = append(spans, Span{Start: t[from], End: t[len(t)-1], Open: true})
	}
	return bridge(spans, rule), lv, nil
}

// bridge joins loads separated by dips under rule.BridgeS and drops those
// under rule.MinLoadS (an open one is kept: it may go on).
func bridge(spans []Span, rule EpisodeRule) []Span {
	var out []Span
	for _, s := range spans {
		if n := len(out); n > 0 && s.Start-out[n-1].End < rule.BridgeS {
			out[n-1].End, out[n-1].Open = s.End, s.Open
			continue
		}
		out = append(out, s)
	}
	return slices.DeleteFunc(out, func(s Span) bool { return !s.Open && s.Duration() < rule.MinLoadS })
}

// runningMedian is the median of each reading with its n−1 neighbours
// (centred, shortened at the ends).
func runningMedian(v []float64, n int) []float64 {
	out := make([]float64, len(v))
	buf := make([]float64, 0, n)
	h := n / 2
	for i := range v {
		buf = append(buf[:0], v[max(0, i-h):min(len(v), i+h+1)]...)
		slices.Sort(buf)
		out[i] = buf[len(buf)/2]
	}
	return out
}

// otsuSplit returns the index k that splits sorted ascending values into
// sorted[:k] and sorted[k:] with the largest between-class variance
// (Otsu's threshold, on the values themselves rather than a histogram).
func otsuSplit(sorted []float64) int {
	n := float64(len(sorted))
	total := 0.0
	for _, x := range sorted {
		total += x
	}
	best, bestK, sum := -1.0, len(sorted)/2, 0.0
	for k := 1; k < len(sorted); k++ {
		sum += sorted[k-1]
		if sorted[k] == sorted[k-1] {
			continue
		}
		w0 := float64(k) / n
		m0, m1 := sum/float64(k), (total-sum)/(n-float64(k))
		if b := w0 * (1 - w0) * (m1 - m0) * (m1 - m0); b > best {
			best, bestK = b, k
		}
	}
	return bestK
}

// madSigma turns a median absolute deviation into the standard deviation
// of normal readings with that MAD: robust σ and robust z use it.
const madSigma = 1.4826

// mad is the median absolute deviation of v from m.
func mad(v []float64, m float64) float64 {
	if len(v) == 0 {
		return 0
	}
	d := make([]float64, len(v))
	for i, x := range v {
		d[i] = math.Abs(x - m)
	}
	return median(d)
}

// episodeSignal is one device's load signal and the components it heats.
type episodeSignal struct {
	host, device, gpu, signal string
	s                         *Series
	members                   []string
	power                     bool
}

// episodeSignals lists the series episodes are found in: each GPU's
// power_w (heating gpu_core and gpu_mem), each RAPL package's power_w
// (heating the CPU chip of the same ordinal), else the host's CPU
// utilisation (heating every CPU chip).
func episodeSignals(r *Run, comps []*Component) []episodeSignal {
	prefix := func(host string) string {
		if len(comps) > 0 && strings.Contains(comps[0].ID, "/") && host != "" {
			return host + "/"
		}
		return ""
	}
	var out []episodeSignal
	for _, s := range r.Find(schema.GPU, schema.FieldPowerW, nil) {
		h, g := s.Tag(schema.TagHost), s.Tag(schema.TagGPU)
		p := prefix(h)
		out = append(out, episodeSignal{host: h, device: p + "gpu_core:" + g, gpu: g, signal: "gpu power_w", s: s, power: true,
			members: []string{p + "gpu_core:" + g, p + "gpu_mem:" + g}})
	}
	chips := map[string][]string{}
	for _, c := range comps {
		if c.Kind == KindCPU {
			chips[c.Host] = append(chips[c.Host], c.ID)
		}
	}
	rapl := map[string]bool{}
	for _, s := range r.Find(schema.RAPL, schema.FieldPowerW, func(s *Series) bool { return strings.HasPrefix(s.Tag(schema.TagZone), "package-") }) {
		h := s.Tag(schema.TagHost)
		n := 0
		fmt.Sscanf(strings.TrimPrefix(s.Tag(schema.TagZone), "package-"), "%d", &n)
		if n >= len(chips[h]) {
			continue
		}
		rapl[h] = true
		out = append(out, episodeSignal{host: h, device: chips[h][n], signal: "rapl power_w", s: s, power: true, members: []string{chips[h][n]}})
	}
	for _, s := range r.Find(schema.CPU, schema.FieldUsagePct, func(s *Series) bool { return s.Tag(schema.TagCPU) == "total" }) {
		h := s.Tag(schema.TagHost)
		if rapl[h] || len(chips[h]) == 0 {
			continue
		}
		out = append(out, episodeSignal{host: h, device: chips[h][0], signal: "cpu usage_pct", s: s, members: chips[h]})
	}
	return out
}

// findEpisodes detects every device's episodes in r, with their phases,
// ordered by start; notes say why a device had none.
func findEpisodes(r *Run, comps []*Component, endS float64, rule EpisodeRule) ([]*Episode, []string) {
	type found struct {
		sig   episodeSignal
		t, v  []float64
		spans []Span
	}
	var all []found
	var notes []string
	for _, sig := range episodeSignals(r, comps) {
		if err := sig.s.CheckTimes(); err != nil {
			notes = append(notes, fmt.Sprintf("%s: no episodes: %v", sig.s.Key(), err))
			continue
		}
		t, v := Finite(sig.s.T, sig.s.V)
		spans, _, err := DetectEpisodes(t, v, rule)
		if err != nil {
			continue // an idle device is the normal case, not a problem with the input
		}
		all = append(all, found{sig, t, v, spans})
	}
	// othersEnd is the end of the latest load of another device of the
	// same host and kind before at: the host is at rest only after it.
	othersEnd := func(f found, at float64) float64 {
		end := math.Inf(-1)
		for _, o := range all {
			if o.sig.host != f.sig.host || o.sig.signal != f.sig.signal || o.sig.device == f.sig.device {
				continue
			}
			for _, sp := range o.spans {
				if sp.End <= at {
					end = math.Max(end, sp.End)
				}
			}
		}
		return end
	}
	var eps []*Episode
	for _, f := range all {
		for i, sp := range f.spans {
			e := &Episode{Host: f.sig.host, Device: f.sig.device, GPU: f.sig.gpu, Signal: f.sig.signal, StartS: sp.Start, EndS: sp.End,
				Open: sp.Open, Start: r.Start.Add(secs(sp.Start)), End: r.Start.Add(secs(sp.End)), members: f.sig.members, NotComputed: map[string]string{}}
			from := f.t[0]
			if i > 0 {
				// After its own load, the first half of the gap is the
				// device cooling.
				from = (f.spans[i-1].End + sp.Start) / 2
			}
			from = math.Max(from, sp.Start-rule.BaselineS)
			if o := othersEnd(f, sp.Start); sp.Start-o >= rule.MinBaselineS && o > from {
				from = o
			}
			if sp.Start-from >= rule.MinBaselineS {
				e.Baseline = &Span{Start: from, End: sp.Start}
			} else {
				e.NotComputed["baseline"] = fmt.Sprintf("only %.0f s of settled idle before the load (at least %.0f s)", sp.Start-from, rule.MinBaselineS)
			}
			if !sp.Open {
				next := endS
				if i+1 < len(f.spans) {
					next = f.spans[i+1].Start
				}
				e.Cooldown = &Span{Start: sp.End, End: math.Min(next, sp.End+rule.CooldownS)}
			} else {
				e.NotComputed["cooldown"] = "the load lasted until the end of the recording"
			}
			e.levels(f.t, f.v, f.sig.power)
			eps = append(eps, e)
		}
	}
	sort.SliceStable(eps, func(i, j int) bool { return eps[i].StartS < eps[j].StartS })
	for i, e := range eps {
		e.Index = i
		if len(e.NotComputed) == 0 {
			e.NotComputed = nil
		}
	}
	return eps, notes
}

// levels fills the episode's median load and idle power (or utilisation).
func (e *Episode) levels(t, v []float64, power bool) {
	load, idle := &e.PowerW, &e.IdlePowerW
	if !power {
		load, idle = &e.UsagePct, &e.IdleUsagePct
		e.NotComputed["power_w"] = "found from CPU utilisation: the run records no RAPL power"
	}
	if i, j := window(t, e.StartS, e.EndS+0.5); j > i {
		*load = ptr(median(v[i:j]))
	}
	if e.Baseline != nil {
		if i, j := window(t, e.Baseline.Start, e.Baseline.End); j > i {
			*idle = ptr(median(v[i:j]))
		}
	} else if power {
		e.NotComputed["idle_power_w"] = "no baseline"
	}
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// episodeDefinitions state how episodes are found.
func episodeDefinitions(rule EpisodeRule) []Definition {
	return []Definition{
		{"episodes", fmt.Sprintf("in a recording without phases, each device's loads, found in its own power: a GPU's power_w, a CPU package's RAPL power_w, else the host's CPU usage_pct. The readings' running median of %d splits, by Otsu's threshold (the split of the sorted values with the largest between-class variance), into idle and load; idle level = median of the lower class, σ = 1.4826·MAD of it, load level = median of the upper class. The series holds loads only when the load level is over max(%.3g σ, %.3g × idle level) above idle. A load starts where the running median exceeds idle + max(%.3g × (load − idle), %.3g σ) and ends where it falls under idle + max(%.3g × (load − idle), %.3g σ) (hysteresis), its edges moved out to the raw readings above the lower threshold; loads separated by less than %.0f s are joined and loads under %.0f s dropped. Baseline = the end of the idle stretch before the load: its later half (its whole before the device's first load), and only after the latest load of any other device of the host and kind has ended where that leaves enough, at most %.0f s and at least %.0f s (else none); cooldown = from the end of the load to the device's next load or the end of the recording, at most %.0f s. Every per-component analysis then runs on each episode of its device with these phases; power_w and idle_power_w are the medians over load and baseline",
			rule.SmoothN, 2*rule.NoiseK, rule.MinRelRise, rule.EnterFraction, rule.NoiseK, rule.ExitFraction, rule.NoiseK/2, rule.BridgeS, rule.MinLoadS, rule.BaselineS, rule.MinBaselineS, rule.CooldownS)},
	}
}
