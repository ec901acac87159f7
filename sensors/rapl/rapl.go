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
	"os"
	"path/filepath"
	"regexp"
	"sync"
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
type Source struct {
	root   string
	filter filter.Filter
	now    func() time.Time

	zones    []*zone
	sampling sync.Mutex // held by Sample, so Close cannot pull files from under it
	// Counter state by zone id, kept across re-discovery so energy_j stays
	// monotonic for the whole run.
	state map[string]*counter

	mu   sync.Mutex
	desc []string
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
	return &Source{root: sysRoot, filter: f, now: time.Now, state: map[string]*counter{}}
}

// Name implements collectors.Source.
func (s *Source) Name() string { return "rapl" }

var zoneDir = regexp.MustCompile(`^intel-rapl(:[0-9]+)+$`)

// Discover lists the zones. No powercap zones is errors.ErrUnsupported, and
// so is a machine where no zone's energy_uj can be read: since Linux 5.10
// (CVE-2020-8694) only root may read it.
func (s *Source) Discover(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.sampling.Lock()
	defer s.sampling.Unlock()
	s.closeFiles()
	s.zones = nil
	dir := filepath.Join(s.root, "class", "powercap")
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no powercap class at %s: %w", dir, errors.ErrUnsupported)
		}
		return err
	}
	var desc []string
	var denied []error
	for _, e := range entries {
		if !zoneDir.MatchString(e.Name()) {
			continue
		}
		zdir := filepath.Join(dir, e.Name())
		name, err := sysfs.ReadString(filepath.Join(zdir, "name"))
		if err != nil {
			continue // vanished, or not a zone
		}
		if !s.filter.Device(e.Name(), name) {
			continue
		}
		z := &zone{id: e.Name(), name: name, dir: zdir, energy: sysfs.NewAttr(filepath.Join(zdir, "energy_uj"))}
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
		z.tags = []point.Tag{{Key: "zone", Value: name}, {Key: "zone_id", Value: z.id}}
		if z.c = s.state[z.id]; z.c == nil {
			z.c = &counter{}
			s.state[z.id] = z.c
		}
		s.zones = append(s.zones, z)
		desc = append(desc, line)
	}
	s.mu.Lock()
	s.desc = desc
	s.mu.Unlock()
	switch {
	case len(s.zones) == 0:
		return fmt.Errorf("no intel-rapl zones the filter keeps under %s: %w", dir, errors.ErrUnsupported)
	case len(denied) == len(s.zones):
		return fmt.Errorf("no RAPL zone's energy_uj is readable (root only since Linux 5.10): %w", errors.Join(append(denied, errors.ErrUnsupported)...))
	}
	return nil
}

// Describe implements collectors.Describer.
func (s *Source) Describe() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.desc...)
}

// Close closes the files kept open between samples. It does not wait for a
// sample still in flight: the process is then ending.
func (s *Source) Close() error {
	if !s.sampling.TryLock() {
		return nil
	}
	defer s.sampling.Unlock()
	s.closeFiles()
	return nil
}

func (s *Source) closeFiles() {
	for _, z := range s.zones {
		z.energy.Close()
	}
}

// Sample appends one point per zone: energy_j always, power_w from the
// second reading on. A zone that cannot be read is left out and its error
// joined into the result.
func (s *Source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	s.sampling.Lock()
	defer s.sampling.Unlock()
	var errs []error
	for _, z := range s.zones {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		// A file kept open may still read after its zone is gone from an
		// ordinary tree (a fixture; sysfs says ENODEV): one stat tells.
		if _, err := os.Stat(z.dir); err != nil {
			errs = append(errs, fmt.Errorf("rapl %s (%s) vanished: %w", z.id, z.name, err))
			continue
		}
		raw, err := z.energy.ReadUint()
		now := s.now()
		if err != nil {
			errs = append(errs, fmt.Errorf("rapl %s (%s): %w", z.id, z.name, err))
			continue
		}
		power, hasPower, err := z.c.add(raw, z.maxRange, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("rapl %s (%s): %s: %w", z.id, z.name, z.energy.Path(), err))
			continue
		}
		p := point.Point{Measurement: schema.RAPL, Tags: z.tags, Time: t, Fields: make([]point.Field, 0, 2)}
		p.AddFloat("energy_j", float64(z.c.total)/1e6)
		if hasPower {
			p.AddFloat("power_w", power)
		}
		buf = append(buf, p)
	}
	return buf, errors.Join(errs...)
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
