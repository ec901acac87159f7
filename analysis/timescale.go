package analysis

import "time"

// Scaled returns o with every duration that presumes a GPU's time
// constant of tens of seconds multiplied by f (0 < f ≤ 1): the episode
// rule's shortest load, bridge, baselines and cooldown, and the hold,
// fit window and onset smoothing. A protocol that knows its own steps are
// shorter (heatsink survey with loads under 40 s, on a simulated plant
// whose τ is a second or two) judges them with the rule scaled to them;
// an f of 1 or more, or not above 0, leaves o as it is. The count-based
// constants (SmoothN, the fractions) stay: they are in readings and
// shares, not seconds.
func (o Options) Scaled(f float64) Options {
	if f <= 0 || f >= 1 {
		return o
	}
	r := o.Episodes
	if r == (EpisodeRule{}) {
		r = DefaultEpisodeRule()
	}
	r.BridgeS *= f
	r.MinLoadS *= f
	r.BaselineS *= f
	r.MinBaselineS *= f
	r.CooldownS *= f
	o.Episodes = r
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * f) }
	o.Hold, o.Window, o.OnsetSmooth = scale(o.Hold), scale(o.Window), scale(o.OnsetSmooth)
	return o
}
