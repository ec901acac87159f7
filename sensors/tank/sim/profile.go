package sim

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Profile is an IT load that changes over time: a step function of offsets
// from when it starts. The load of the last step holds after it.
type Profile struct {
	steps []profileStep
}

type profileStep struct {
	at   time.Duration
	load float64
}

// maxProfileSteps bounds a profile sent over HTTP.
const maxProfileSteps = 100000

// ParseProfile reads a load profile: one step per line, an offset from the
// start and a load in W, separated by white space or a comma. The offset is
// a Go duration ("30m", "7h30m") or plain seconds; offsets must increase and
// the first must be 0. Blank lines and lines starting with # are skipped.
//
//	# the reference experiment: 30 min idle, 7.5 h of load, then cooldown
//	0      250
//	30m    2400
//	8h     250
func ParseProfile(r io.Reader) (*Profile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 4096)
	var p Profile
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if len(f) != 2 {
			return nil, fmt.Errorf("profile line %d: %q: want OFFSET LOAD_W", line, text)
		}
		at, err := parseOffset(f[0])
		if err != nil {
			return nil, fmt.Errorf("profile line %d: offset %q: %v", line, f[0], err)
		}
		w, err := strconv.ParseFloat(f[1], 64)
		if err != nil || !(w >= 0 && w <= MaxLoadW) {
			return nil, fmt.Errorf("profile line %d: load %q is not a number of watts from 0 to %g", line, f[1], MaxLoadW)
		}
		if len(p.steps) == 0 && at != 0 {
			return nil, fmt.Errorf("profile line %d: the first step must be at offset 0, not %v", line, at)
		}
		if n := len(p.steps); n > 0 && at <= p.steps[n-1].at {
			return nil, fmt.Errorf("profile line %d: offset %v is not after the previous step's %v", line, at, p.steps[n-1].at)
		}
		if len(p.steps) == maxProfileSteps {
			return nil, fmt.Errorf("profile line %d: more than %d steps", line, maxProfileSteps)
		}
		p.steps = append(p.steps, profileStep{at, w})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("profile line %d: %w", line+1, err)
	}
	if len(p.steps) == 0 {
		return nil, fmt.Errorf("profile: no steps")
	}
	return &p, nil
}

func parseOffset(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 || v > 1e8 || math.IsNaN(v) {
			return 0, fmt.Errorf("out of range")
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("not a duration or a number of seconds")
	}
	if d < 0 {
		return 0, fmt.Errorf("negative")
	}
	return d, nil
}

// At returns the load at offset d from the profile's start.
func (p *Profile) At(d time.Duration) float64 {
	i := sort.Search(len(p.steps), func(i int) bool { return p.steps[i].at > d })
	if i == 0 {
		return p.steps[0].load
	}
	return p.steps[i-1].load
}

// Len returns the number of steps.
func (p *Profile) Len() int { return len(p.steps) }
