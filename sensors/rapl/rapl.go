// Package rapl is the source for the CPU's own energy counters: the
// powercap zones /sys/class/powercap/intel-rapl:* (package, core, uncore,
// dram, psys; AMD CPUs expose theirs under the same name). Each zone's
// energy_uj becomes an energy_j counter, unwrapped across the counter's
// wraparound at max_energy_range_uj, and power_w is derived from two
// consecutive readings.
package rapl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/sysfs"
)

// maxGap is the longest time between two readings of a zone across which
// its counter is trusted to have wrapped at most once. A package at 400 W
// wraps a 262 kJ counter in about 11 minutes; after a longer gap (the source
// failed, or was not sampled) the number of wraps is unknown, so only a
// lower bound of the energy is added and no power is derived.
const maxGap = 2 * time.Minute

// Source samples the RAPL zones of one sysfs tree. Its devices, as the
// filter sees them, are the zone id (intel-rapl:0:1) and the zone name
// (dram); it has no sensors to filter.
//
// Name, Discover, Sample, Describe and Close come from the embedded Poller. A
// zone that vanished is an error every sample until the source is
// discovered again: zones come with the CPU, they are not hot-plugged.
type Source struct {
	*sysfs.Poller[*zone]
	root   string
	filter filter.Filter
	now    func() time.Time

	// Counter state by zone id, kept across re-discovery so energy_j stays
	// monotonic for the whole run.
	state map[string]*counter
}

type zone struct {
	id, name string
	dir      string
	energy   *sysfs.Attr // energy_uj, kept open
	maxRange uint64      // max_energy_range_uj; 0 when unknown
	tags     []point.Tag
	c        *counter
}

// counter unwraps one zone's energy_uj.
type counter struct {
	total   uint64 // unwrapped energy, µJ
	lastRaw uint64
	last    time.Time // when lastRaw was read (monotonic)
	valid   bool      // lastRaw holds a reading
}

// New returns a source reading the sysfs tree at sysRoot ("/sys").
func New(sysRoot string, f filter.Filter) *Source {
	s := &Source{root: sysRoot, filter: f, now: time.Now, state: map[string]*counter{}}
	s.Poller = sysfs.NewPoller(sysfs.PollerConfig[*zone]{Name: "rapl", Discover: s.discover, Read: s.read})
	return s
}

// SetClock replaces the clock that times the energy readings power is
// derived from (time.Now, read as each zone is read, since the tick's stamp
// is when the sample was due, not when it ran). A test that plays ticks at
// known times gives it their times. Call it before the first Sample.
func (s *Source) SetClock(now func() time.Time) { s.now = now }

var zoneDir = regexp.MustCompile(`^intel-rapl(:[0-9]+)+$`)

// discover lists the zones. No powercap zones is errors.ErrUnsupported, and
// so is a machine where no zone's energy_uj can be read: since Linux 5.10
// (CVE-2020-8694) only root may read it.
func (s *Source) discover() ([]*zone, error) {
	dir, ids, err := sysfs.ReadClass(s.root, "powercap", zoneDir)
	if err != nil {
		return nil, err
	}
	var zones []*zone
	var desc []string
	var denied []error
	for _, id := range ids {
		zdir := filepath.Join(dir, id)
		name, err := sysfs.ReadString(filepath.Join(zdir, "name"))
		if err != nil {
			continue // vanished, or not a zone
		}
		if !s.filter.Device(id, name) {
			continue
		}
		z := &zone{id: id, name: name, dir: zdir, energy: sysfs.NewAttr(filepath.Join(zdir, "energy_uj"))}
		line := z.id + " " + name
		if r, err := sysfs.ReadUint(filepath.Join(zdir, "max_energy_range_uj")); err == nil && r > 0 {
			z.maxRange = r
		} else {
			line += " (no max_energy_range_uj: a wrap cannot be told from a reset)"
		}
		if _, err := z.energy.ReadUint(); errors.Is(err, fs.ErrPermission) {
			denied = append(denied, err)
			line += " (energy_uj not readable: " + err.Error() + ")"
		}
		z.tags = []point.Tag{{Key: schema.TagZone, Value: name}, {Key: schema.TagZoneID, Value: z.id}}
		if z.c = s.state[z.id]; z.c == nil {
			z.c = &counter{}
			s.state[z.id] = z.c
		}
		zones = append(zones, z)
		desc = append(desc, line)
	}
	s.SetDescription(desc)
	switch {
	case len(zones) == 0:
		return zones, fmt.Errorf("no intel-rapl zones the filter keeps under %s: %w", dir, errors.ErrUnsupported)
	case len(denied) == len(zones):
		return zones, fmt.Errorf("no RAPL zone's energy_uj is readable (root only since Linux 5.10): %w", errors.Join(append(denied, errors.ErrUnsupported)...))
	}
	return zones, nil
}

func (z *zone) Dir() string    { return z.dir }
func (z *zone) String() string { return fmt.Sprintf("rapl %s (%s)", z.id, z.name) }
func (z *zone) Close()         { z.energy.Close() }

// read appends the zone's point: energy_j always, power_w from the second
// reading on.
func (s *Source) read(_ context.Context, z *zone, r *sysfs.Reading) {
	raw, err := z.energy.ReadUint()
	now := s.now()
	if err != nil {
		r.Fail(fmt.Errorf("rapl %s (%s): %w", z.id, z.name, err))
		return
	}
	power, hasPower, err := z.c.add(raw, z.maxRange, now)
	if err != nil {
		r.Fail(fmt.Errorf("rapl %s (%s): %s: %w", z.id, z.name, z.energy.Path(), err))
		return
	}
	p := point.Point{Measurement: schema.RAPL, Tags: z.tags, Time: r.Time, Fields: make([]point.Field, 0, 2)}
	p.AddFloat(schema.FieldEnergyJ, float64(z.c.total)/1e6)
	if hasPower {
		p.AddFloat(schema.FieldPowerW, power)
	}
	r.Points = append(r.Points, p)
}

// add takes a new reading of energy_uj at time now and returns the power
// since the previous one, in W. The counter runs from 0 to maxRange and
// starts again at 0, so a reading below the previous one is a wrap. The
// first reading starts the unwrapped counter at the kernel's value. After a
// gap longer than maxGap the counter may have wrapped more than once: the
// energy added is then a lower bound and no power is derived.
func (c *counter) add(raw, maxRange uint64, now time.Time) (powerW float64, ok bool, err error) {
	if maxRange > 0 && raw > maxRange {
		return 0, false, fmt.Errorf("%d µJ is above max_energy_range_uj %d", raw, maxRange)
	}
	if !c.valid {
		c.total, c.lastRaw, c.last, c.valid = raw, raw, now, true
		return 0, false, nil
	}
	var delta uint64
	switch {
	case raw >= c.lastRaw:
		delta = raw - c.lastRaw
	case maxRange > 0:
		delta = maxRange - c.lastRaw + raw
	default:
		prev := c.lastRaw
		c.lastRaw, c.last = raw, now
		return 0, false, fmt.Errorf("counter went back from %d to %d µJ and max_energy_range_uj is unknown", prev, raw)
	}
	dt := now.Sub(c.last)
	c.total += delta
	c.lastRaw, c.last = raw, now
	if dt > maxGap || dt <= 0 {
		return 0, false, nil
	}
	return float64(delta) / 1e6 / dt.Seconds(), true, nil
}
