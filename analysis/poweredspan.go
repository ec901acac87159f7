package analysis

import (
	"fmt"
	"math"

	"github.com/heatsink-hpc/heatsink/point/schema"
)

// minTrimS is the shortest unpowered tail of a load that is trimmed: a
// reading or two below the level is the ramp-down of the last kernel, not
// the work having ended.
const minTrimS = 3

// maxTrimFraction is the longest tail trimmed, as a share of the load: a
// job that ends its work this close to the phase's end ran into the end of
// the phase; a longer stretch at lower power is a load in two parts, which
// the steadiness check of the fits refuses with its reason.
const maxTrimFraction = 0.1

// PoweredEnd returns when the work ended inside a load phase, as its power
// shows it: the first reading below halfway between idleW and the load's
// level (the median power over the load's middle) after the last reading
// at or above it. ok is false when the power held to the end of the phase,
// when the load never drew clearly more than idle (20 %), or when under
// minTrimS seconds or over maxTrimFraction of the load would be trimmed. A job whose script goes on after its
// kernels (writing results, a sleep) ends the heat input before the phase:
// fitting a rise, or judging steadiness, over that tail describes the
// script, not the heating. t must be sorted, v finite.
func PoweredEnd(t, v []float64, load Span, idleW float64) (endS float64, ok bool) {
	d := load.Duration()
	i, j := window(t, load.Start+d/10, load.End-d/10)
	if j-i < 3 {
		return 0, false
	}
	level := median(v[i:j])
	if level <= 1.2*idleW || level <= 0 {
		return 0, false
	}
	threshold := idleW + (level-idleW)/2
	a, b := window(t, load.Start, math.Nextafter(load.End, math.Inf(1)))
	last := -1
	for k := b - 1; k >= a; k-- {
		if v[k] >= threshold {
			last = k
			break
		}
	}
	if last < 0 || last+1 >= b || t[last] < load.Start+d/2 {
		return 0, false
	}
	end := t[last+1]
	if load.End-end < minTrimS || load.End-end > maxTrimFraction*d {
		return 0, false
	}
	return end, true
}

// trimLoad shortens the load phase to its powered span when every GPU that
// drew load power stopped before the phase ended, and says so in the notes.
// The power that matters is the GPUs' (board power): it is what the
// temperatures the fits describe respond to.
func trimLoad(r *Run, ph *Phases) (note string) {
	if ph.Load == nil || ph.Load.Open {
		return ""
	}
	load := *ph.Load
	latest, found := math.Inf(-1), false
	for _, s := range r.Find(schema.GPU, schema.FieldPowerW, nil) {
		t, v := Finite(s.T, s.V)
		idle := 0.0
		if ph.Baseline != nil {
			i, j := window(t, ph.Baseline.Start, ph.Baseline.End)
			if j-i > 0 {
				idle = median(v[i:j])
			}
		}
		i, j := window(t, load.Start+load.Duration()/10, load.End-load.Duration()/10)
		if j-i < 3 || median(v[i:j]) <= 1.2*idle {
			continue // this GPU did not take part in the load
		}
		end, ok := PoweredEnd(t, v, load, idle)
		if !ok {
			return "" // a GPU worked to the end of the phase
		}
		latest, found = math.Max(latest, end), true
	}
	if !found {
		return ""
	}
	recorded := load.End
	ph.Load.End = latest
	ph.LoadRecordedEndS = ptr(recorded)
	if ph.Cooldown != nil && ph.Cooldown.Start > latest {
		ph.Cooldown.Start = latest
	}
	return fmt.Sprintf("the GPUs' power fell to idle %.0f s before the load phase ended (at %.0f s of %.0f–%.0f s): the work ended there, so the load is taken as %.0f–%.0f s and its last %.0f s count as cooldown",
		recorded-latest, latest, load.Start, recorded, load.Start, latest, recorded-latest)
}
