package slurm

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// HeadroomLevel is one band of thermal headroom and the Slurm Weight a
// node in it gets: Slurm gives a job the nodes of lowest Weight first, so
// the coolest band has the lowest weight.
type HeadroomLevel struct {
	// MinHeadroomC is the band's lower edge: a node whose headroom is at
	// least this (and below the previous level's) is in the band. The
	// last level's edge is ignored: it takes every node below the others.
	MinHeadroomC float64 `yaml:"min_headroom_c" json:"min_headroom_c"`
	Weight       int     `yaml:"weight" json:"weight"`
}

// DefaultHeadroomLevels are four bands of 10 °C. Weights 1 to 4 keep
// Slurm's default of 1 for the coolest nodes, so a site that turns the
// option on sees its coolest nodes scheduled as before and the others
// after them.
func DefaultHeadroomLevels() []HeadroomLevel {
	return []HeadroomLevel{{30, 1}, {20, 2}, {10, 3}, {0, 4}}
}

// HeadroomConfig is the sinks.slurm_headroom section: the node agent keeps
// its node's Slurm Weight in step with the node's thermal headroom. Off
// by default: with it on, heatsink owns the node's Weight.
type HeadroomConfig struct {
	Enabled bool `yaml:"enabled"`
	// Node is the node's Slurm name; default the host's name up to the
	// first dot, as Slurm's NodeName usually is.
	Node   string          `yaml:"node"`
	Levels []HeadroomLevel `yaml:"levels"`
	// MarginC and Hold are the hysteresis: the headroom must lie MarginC
	// beyond a band's edge, continuously for Hold, before the weight
	// changes.
	MarginC float64       `yaml:"margin_c"`
	Hold    time.Duration `yaml:"hold"`
	// PeakWindow is how far back a GPU's recent peak reaches, the
	// expected temperature under load of a GPU without a survey.
	PeakWindow time.Duration `yaml:"peak_window"`
	// SlowdownC is the slowdown limit of a GPU whose readings carry none
	// (NVML's slowdown_c filtered out, or not supported); 0: such a GPU is
	// not judged.
	SlowdownC float64 `yaml:"slowdown_c"`
	// SurveyDir holds the node's latest survey (DIR/survey.json, or the
	// newest DIR/*/survey.json): with one, a GPU's temperature under load
	// is predicted from its fingerprint. "" uses the recent peak.
	SurveyDir string `yaml:"survey_dir"`
	// Every is how often the headroom is judged; Recheck how often a
	// weight heatsink set is compared with Slurm's (a restart or
	// `scontrol reconfigure` puts slurm.conf's back).
	Every   time.Duration `yaml:"every"`
	Recheck time.Duration `yaml:"recheck"`
}

// DefaultHeadroomConfig is the section's defaults: off; 2 °C for 60 s;
// peaks of the last hour; judged every 10 s, rechecked every 5 minutes.
func DefaultHeadroomConfig() HeadroomConfig {
	return HeadroomConfig{Levels: DefaultHeadroomLevels(), MarginC: 2, Hold: time.Minute, PeakWindow: time.Hour,
		Every: 10 * time.Second, Recheck: 5 * time.Minute}
}

// Validate checks the section; an error names the key.
func (c *HeadroomConfig) Validate() error {
	const key = "sinks.slurm_headroom"
	if len(c.Levels) < 2 {
		return fmt.Errorf("%s.levels: %d levels, want at least two (one weight for every node is no order)", key, len(c.Levels))
	}
	for i, l := range c.Levels {
		if l.Weight < 0 || l.Weight > math.MaxUint32-1 {
			return fmt.Errorf("%s.levels[%d].weight: %d is not a Slurm weight (0 to %d)", key, i, l.Weight, uint32(math.MaxUint32-1))
		}
		if i == 0 {
			continue
		}
		prev := c.Levels[i-1]
		if i < len(c.Levels)-1 && !(l.MinHeadroomC < prev.MinHeadroomC) {
			return fmt.Errorf("%s.levels[%d].min_headroom_c: %g is not below the previous level's %g: list the levels coolest first", key, i, l.MinHeadroomC, prev.MinHeadroomC)
		}
		if l.Weight <= prev.Weight {
			return fmt.Errorf("%s.levels[%d].weight: %d is not above the previous level's %d: a hotter band must weigh more", key, i, l.Weight, prev.Weight)
		}
	}
	for name, d := range map[string]time.Duration{"hold": c.Hold, "peak_window": c.PeakWindow, "every": c.Every, "recheck": c.Recheck} {
		if d < 0 {
			return fmt.Errorf("%s.%s: %v is negative", key, name, d)
		}
	}
	if c.SlowdownC < 0 || math.IsNaN(c.SlowdownC) {
		return fmt.Errorf("%s.slowdown_c: %g is not a temperature limit (0 for none)", key, c.SlowdownC)
	}
	if c.MarginC < 0 || math.IsNaN(c.MarginC) {
		return fmt.Errorf("%s.margin_c: %g is not a margin (0 or more °C)", key, c.MarginC)
	}
	if c.Every <= 0 || c.PeakWindow <= 0 {
		return fmt.Errorf("%s: every and peak_window must be above 0", key)
	}
	return nil
}

// Headroom keeps one node's Slurm Weight in step with its thermal
// headroom: how far its hottest GPU would run from its slowdown limit
// under load. Observe gives it the node's readings; Step judges them and
// sets the weight through scontrol.
//
// A GPU's temperature under load is predicted from its latest survey's
// fingerprint where there is one: its temperature now plus its thermal
// resistance (°C/W) times the power it would draw under load above what
// it draws now (for an idle GPU, the rise the survey measured; for a
// loaded one, about its temperature now). Without a fingerprint it is the
// GPU's peak over PeakWindow (its temperature now included). Headroom is
// the slowdown limit (NVML's slowdown_c) less that, the node's the least
// of its GPUs'.
type Headroom struct {
	Client Client
	Config HeadroomConfig

	mu     sync.Mutex
	gpus   map[string]*gpuState // by gpu index
	level  int                  // the level set, -1 before the first
	want   int                  // the level waiting for Hold, -1 for none
	since  time.Time            // since when want has held
	check  time.Time            // when Slurm's weight was last compared
	survey surveyCache
}

// gpuState is one GPU's latest readings and its recent peak.
type gpuState struct {
	uuid                 string
	at                   time.Time
	tempC, powerW, slowC float64 // NaN where not read
	peak                 peakWindow
}

// NewHeadroom returns a controller of the node c.Node (already validated).
func NewHeadroom(client Client, c HeadroomConfig) (*Headroom, error) {
	if c.Node == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("slurm headroom: the node's name: %w", err)
		}
		c.Node, _, _ = strings.Cut(h, ".")
	}
	return &Headroom{Client: client, Config: c, gpus: map[string]*gpuState{}, level: -1, want: -1}, nil
}

// Observe takes a tick's points: the GPUs' temperature, power and
// slowdown limit. It is cheap, for the collector's own goroutine.
func (h *Headroom) Observe(points []point.Point) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range points {
		p := &points[i]
		if p.Measurement != schema.GPU {
			continue
		}
		temp, ok := p.Float(schema.FieldTempC)
		if !ok {
			continue
		}
		idx := p.Tag(schema.TagGPU)
		g := h.gpus[idx]
		if g == nil {
			g = &gpuState{slowC: h.Config.SlowdownC}
			h.gpus[idx] = g
		}
		g.uuid, g.at, g.tempC = p.Tag(schema.TagUUID), p.Time, temp
		g.powerW = math.NaN()
		if v, ok := p.Float(schema.FieldPowerW); ok {
			g.powerW = v
		}
		// The limit the driver enforces does not change: the last one
		// read stands for a point without it.
		if v, ok := p.Float(schema.FieldSlowdownC); ok {
			g.slowC = v
		}
		g.peak.add(p.Time, temp, h.Config.PeakWindow)
	}
}

// HeadroomOutcome is what one Step found and did.
type HeadroomOutcome struct {
	// HeadroomC is the node's headroom; nil when it could not be judged
	// (Why says why).
	HeadroomC *float64
	// GPU is the GPU with the least headroom, and From how its
	// temperature under load was predicted.
	GPU, From string
	// Weight is the weight the node has (or was given) after the step;
	// -1 when heatsink has set none yet.
	Weight int
	// Action: "set" (the weight was changed), "holding" (a new band waits
	// for Hold), "steady", "left_alone" (drained or down: not touched),
	// "not_judged".
	Action string
	Why    string
}

// Step judges the headroom at now and, when the band changed for Hold
// (or Slurm's weight drifted from the one heatsink set), sets the weight
// of a node no one drained or took down.
func (h *Headroom) Step(ctx context.Context, now time.Time) (HeadroomOutcome, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := HeadroomOutcome{Weight: -1}
	if h.level >= 0 {
		out.Weight = h.Config.Levels[h.level].Weight
	}
	fps, surveyErr := h.survey.load(h.Config.SurveyDir)
	hc, gpu, from, why := h.headroom(now, fps)
	if why != "" {
		out.Action, out.Why = "not_judged", why
		return out, nil
	}
	out.HeadroomC, out.GPU, out.From = &hc, gpu, from
	if surveyErr != nil {
		out.From += " (survey not read: " + surveyErr.Error() + ")"
	}
	next := nextLevel(h.Config.Levels, h.level, hc, h.Config.MarginC)
	switch {
	case next == h.level:
		h.want = -1
		if h.level >= 0 && now.Sub(h.check) >= h.Config.Recheck {
			return h.apply(ctx, out, h.level, now) // Slurm may have put slurm.conf's weight back
		}
		out.Action = "steady"
		return out, nil
	case next != h.want:
		h.want, h.since = next, now
	}
	if now.Sub(h.since) < h.Config.Hold {
		out.Action = "holding"
		out.Why = fmt.Sprintf("headroom %.1f °C is in the band of weight %d since %s; changing after %v",
			hc, h.Config.Levels[next].Weight, h.since.Format(time.RFC3339), h.Config.Hold)
		return out, nil
	}
	return h.apply(ctx, out, next, now)
}

// apply sets level's weight unless the node is drained, down or carries
// a reason; the state and reason are read right before.
func (h *Headroom) apply(ctx context.Context, out HeadroomOutcome, level int, now time.Time) (HeadroomOutcome, error) {
	node, err := h.Client.Node(ctx, h.Config.Node)
	if err != nil {
		return out, fmt.Errorf("slurm headroom: %w", err)
	}
	h.check = now
	if why := notSchedulable(node); why != "" {
		out.Action, out.Why = "left_alone", why
		return out, nil
	}
	w := h.Config.Levels[level].Weight
	h.level, h.want, out.Weight = level, -1, w
	if node.Weight == strconv.Itoa(w) {
		out.Action = "steady"
		return out, nil
	}
	if _, err := h.Client.Run(ctx, "scontrol", "update", "NodeName="+h.Config.Node, "Weight="+strconv.Itoa(w)); err != nil {
		return out, fmt.Errorf("slurm headroom: set the weight of node %s: %w", h.Config.Node, err)
	}
	out.Action = "set"
	return out, nil
}

// notSchedulable says why a node's weight must be left alone: an admin
// (or the health check) drained it, it is down, failing, in maintenance,
// rebooting, powered down or not responding, or it carries a reason.
func notSchedulable(n NodeInfo) string {
	for _, s := range []string{"DRAIN", "DOWN", "FAIL", "MAINT", "REBOOT", "POWER"} {
		if strings.Contains(n.State, s) {
			return fmt.Sprintf("node %s is %s (reason %q): its weight is left alone", n.Name, n.State, n.Reason)
		}
	}
	if strings.HasSuffix(n.State, "*") {
		return fmt.Sprintf("node %s is not responding (%s): its weight is left alone", n.Name, n.State)
	}
	if n.Reason != "" {
		return fmt.Sprintf("node %s carries the reason %q: its weight is left alone", n.Name, n.Reason)
	}
	return ""
}

// headroom is the node's headroom at now: the least of its GPUs' with
// recent readings. why is set when there is none.
func (h *Headroom) headroom(now time.Time, fps map[string]*analysis.Fingerprint) (hc float64, gpu, from, why string) {
	stale := max(3*h.Config.Every, 30*time.Second)
	hc = math.Inf(1)
	var reasons []string
	for _, idx := range slices.Sorted(maps.Keys(h.gpus)) {
		g := h.gpus[idx]
		switch {
		case now.Sub(g.at) > stale:
			reasons = append(reasons, fmt.Sprintf("gpu %s: no reading for %.0f s", idx, now.Sub(g.at).Seconds()))
			continue
		case g.slowC <= 0:
			reasons = append(reasons, fmt.Sprintf("gpu %s: no slowdown limit (NVML's slowdown_c, or sinks.slurm_headroom.slowdown_c)", idx))
			continue
		}
		load, f := g.loadTemp(fp(fps, idx, g.uuid))
		if v := g.slowC - load; v < hc {
			hc, gpu, from = v, idx, f
		}
	}
	if gpu == "" {
		if len(reasons) == 0 {
			return 0, "", "", "no GPU readings"
		}
		return 0, "", "", strings.Join(reasons, "; ")
	}
	return hc, gpu, from, ""
}

// loadTemp predicts the GPU's temperature under load, and says how.
func (g *gpuState) loadTemp(f *analysis.Fingerprint) (float64, string) {
	if f != nil && f.ThermalResistanceCPerW != nil && f.PowerW != nil && !math.IsNaN(g.powerW) {
		rise := *f.ThermalResistanceCPerW * max(0, *f.PowerW-g.powerW)
		return g.tempC + rise, fmt.Sprintf("survey: %.1f °C now + %.3f °C/W × (%.0f − %.0f) W", g.tempC, *f.ThermalResistanceCPerW, *f.PowerW, g.powerW)
	}
	return g.peak.max(), "recent peak"
}

// fp is the GPU's fingerprint in the survey: by UUID, else by index; the
// one loaded together with its neighbours (as a whole-node job loads
// them) where it has one, else alone.
func fp(fps map[string]*analysis.Fingerprint, idx, uuid string) *analysis.Fingerprint {
	if f, ok := fps["uuid:"+uuid]; ok && uuid != "" {
		return f
	}
	return fps["index:"+idx]
}

// nextLevel is the level a node at level cur moves to with headroom hc:
// a cooler band once hc is margin above its lower edge, a hotter one once
// hc is margin below the current band's; cur < 0 (none set) takes hc's band.
func nextLevel(levels []HeadroomLevel, cur int, hc, margin float64) int {
	band := func(v float64) int {
		for i, l := range levels[:len(levels)-1] {
			if v >= l.MinHeadroomC {
				return i
			}
		}
		return len(levels) - 1
	}
	if cur < 0 {
		return band(hc)
	}
	if up := band(hc - margin); up < cur {
		return up
	}
	if down := band(hc + margin); down > cur {
		return down
	}
	return cur
}

// peakWindow is the running maximum of a series over a sliding window (a
// monotonic queue: constant memory for a steady series).
type peakWindow struct {
	t []time.Time
	v []float64
}

func (p *peakWindow) add(t time.Time, v float64, window time.Duration) {
	for len(p.v) > 0 && p.v[len(p.v)-1] <= v {
		p.t, p.v = p.t[:len(p.t)-1], p.v[:len(p.v)-1]
	}
	p.t, p.v = append(p.t, t), append(p.v, v)
	i := 0
	for i < len(p.t)-1 && t.Sub(p.t[i]) > window {
		i++
	}
	p.t, p.v = p.t[i:], p.v[i:]
}

func (p *peakWindow) max() float64 { return p.v[0] }

// surveyCache holds the latest survey's fingerprints, read again when the
// file changes.
type surveyCache struct {
	path string
	mod  time.Time
	fps  map[string]*analysis.Fingerprint
}

// load returns the fingerprints of dir's latest survey (nil for no dir).
func (s *surveyCache) load(dir string) (map[string]*analysis.Fingerprint, error) {
	if dir == "" {
		return nil, nil
	}
	path, mod, err := latestSurvey(dir)
	if err != nil {
		return nil, err
	}
	if path == s.path && mod.Equal(s.mod) {
		return s.fps, nil
	}
	sv, err := analysis.ReadSurvey(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	fps := map[string]*analysis.Fingerprint{}
	for _, g := range sv.GPUs {
		f := g.TogetherCore
		if f == nil || f.ThermalResistanceCPerW == nil {
			f = g.AloneCore
		}
		if f == nil {
			continue
		}
		fps["index:"+g.Index] = f
		if g.UUID != "" {
			fps["uuid:"+g.UUID] = f
		}
	}
	s.path, s.mod, s.fps = path, mod, fps
	return fps, nil
}

// latestSurvey is dir/survey.json, else the newest dir/*/survey.json.
func latestSurvey(dir string) (string, time.Time, error) {
	if st, err := os.Stat(filepath.Join(dir, analysis.SurveyFile)); err == nil {
		return filepath.Join(dir, analysis.SurveyFile), st.ModTime(), nil
	}
	matches, err := filepath.Glob(filepath.Join(dir, "*", analysis.SurveyFile))
	if err != nil {
		return "", time.Time{}, err
	}
	var best string
	var mod time.Time
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.ModTime().After(mod) {
			best, mod = m, st.ModTime()
		}
	}
	if best == "" {
		return "", time.Time{}, fmt.Errorf("no %s in %s or its subdirectories", analysis.SurveyFile, dir)
	}
	return best, mod, nil
}
