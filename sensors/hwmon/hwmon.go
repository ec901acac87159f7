// Package hwmon is the source for what libsensors reads: every temperature,
// fan and power channel under /sys/class/hwmon, with the chip, the driver's
// label and the thresholds, and a class that lets analysis find the CPU
// packages and cores whatever the vendor.
//
// A chip is identified by its device path, as node_exporter does
// (platform_coretemp_0, pci0000:00_0000:00:18_3, nvme_nvme0), never by its
// hwmonN number, which changes from boot to boot.
package hwmon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/sysfs"
)

// DefaultRefresh is how many samples pass between readings of the
// thresholds (_max, _crit): they rarely change, and reading them every
// second would triple the files read.
const DefaultRefresh = 60

// How often Sample discovers the chips again: while a chip that was there
// is missing, and in any case.
const (
	MissingRescan = 2 * time.Second
	SlowRescan    = time.Minute
)

// Source samples the hwmon chips of one sysfs tree. A chip's devices, as the
// filter sees them, are its id and its driver name; its sensors are the
// channel name and the label.
type Source struct {
	root    string
	filter  filter.Filter
	refresh int

	chips   []*chip
	samples int  // since discovery
	rescan  bool // a chip or channel vanished: discover again before sampling
	// A chip that stays gone past the rescan its vanishing caused (a driver
	// reload takes seconds) would never be found again: while fewer chips
	// are found than before, discovery is repeated every MissingRescan, and
	// every SlowRescan in any case (a chip that appears later).
	discoveredAt time.Time
	mostChips    int

	// sampling is held by Sample, so Close cannot pull files from under a
	// sample in flight.
	sampling sync.Mutex

	mu   sync.Mutex
	desc []string
}

type chip struct {
	id    string // platform_coretemp_0
	name  string // coretemp
	hwmon string // hwmon3, for messages
	dir   string // <root>/class/hwmon/hwmon3
	chans []*channel
}

type channel struct {
	Channel
	tags   []point.Tag
	limits Limits // read every refresh samples
}

// New returns a source reading the sysfs tree at sysRoot ("/sys").
func New(sysRoot string, f filter.Filter) *Source {
	return &Source{root: sysRoot, filter: f, refresh: DefaultRefresh}
}

// SetRefresh sets how many samples pass between readings of the thresholds
// (DefaultRefresh); 1 reads them every sample.
func (s *Source) SetRefresh(n int) { s.refresh = max(n, 1) }

// Name implements collectors.Source.
func (s *Source) Name() string { return "hwmon" }

// Discover lists the chips and their channels. No hwmon class, or no
// channel left after the filter, is errors.ErrUnsupported.
func (s *Source) Discover(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.sampling.Lock()
	defer s.sampling.Unlock()
	return s.discover()
}

func (s *Source) discover() error {
	s.closeFiles()
	s.chips, s.samples, s.rescan = nil, 0, false
	classDir := filepath.Join(s.root, "class", "hwmon")
	entries, err := os.ReadDir(classDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no hwmon class at %s: %w", classDir, errors.ErrUnsupported)
		}
		return err
	}
	var chips []*chip
	nchips := 0
	for _, e := range entries {
		if !hwmonDir.MatchString(e.Name()) {
			continue
		}
		nchips++
		c, err := s.readChip(filepath.Join(classDir, e.Name()), e.Name())
		if err != nil {
			// Vanished between ReadDir and now, or unreadable: skip it.
			continue
		}
		if c != nil {
			chips = append(chips, c)
		}
	}
	dedupIDs(chips)
	slices.SortFunc(chips, func(a, b *chip) int { return strings.Compare(a.id, b.id) })
	for _, c := range chips {
		for _, ch := range c.chans {
			ch.tags = tags(c, &ch.Channel)
		}
	}
	s.chips = chips
	s.discoveredAt = time.Now()
	s.mostChips = max(s.mostChips, len(chips))
	desc := make([]string, 0, len(chips))
	for _, c := range chips {
		names := make([]string, len(c.chans))
		for i, ch := range c.chans {
			names[i] = ch.Name
			if ch.Label != "" {
				names[i] += " " + ch.Label
			}
		}
		desc = append(desc, fmt.Sprintf("%s %s (%s): %s", c.id, c.name, c.hwmon, strings.Join(names, ", ")))
	}
	s.mu.Lock()
	s.desc = desc
	s.mu.Unlock()
	switch {
	case nchips == 0:
		return fmt.Errorf("no hwmon chips under %s: %w", classDir, errors.ErrUnsupported)
	case len(chips) == 0:
		return fmt.Errorf("none of %d hwmon chips under %s has a temperature, fan or power channel the filter keeps: %w",
			nchips, classDir, errors.ErrUnsupported)
	}
	return nil
}

var hwmonDir = regexp.MustCompile(`^hwmon[0-9]+$`)

// readChip returns the chip at dir with the channels the filter keeps, or
// nil when it keeps none.
func (s *Source) readChip(dir, hwmon string) (*chip, error) {
	name, err := sysfs.ReadString(filepath.Join(dir, "name"))
	if err != nil {
		name, _ = sysfs.ReadString(filepath.Join(dir, "device", "name"))
	}
	c := &chip{id: chipID(dir, name, hwmon), name: name, hwmon: hwmon, dir: dir}
	if !s.filter.Device(c.id, c.name) {
		return nil, nil
	}
	chs, err := Channels(dir)
	if err != nil {
		return nil, err
	}
	for _, ch := range chs {
		if s.filter.Sensor(ch.Name, ch.Label) {
			c.chans = append(c.chans, &channel{Channel: ch})
		}
	}
	if len(c.chans) == 0 {
		return nil, nil
	}
	return c, nil
}

var invalidIDChars = regexp.MustCompile(`[^a-z0-9:_]`)

func cleanID(s string) string {
	return strings.Trim(invalidIDChars.ReplaceAllLiteralString(strings.ToLower(s), "_"), "_")
}

// chipID names a chip after the last two elements of its device path
// (/sys/devices/platform/coretemp.0 -> platform_coretemp_0), which stay the
// same across boots; failing that after its driver name, then its hwmonN.
func chipID(dir, name, hwmon string) string {
	if dev, err := filepath.EvalSymlinks(filepath.Join(dir, "device")); err == nil {
		parent, base := filepath.Split(dev)
		typ := filepath.Base(parent)
		b, t := cleanID(base), cleanID(typ)
		if b != "" && t != "" {
			return t + "_" + b
		}
		if b != "" {
			return b
		}
	}
	if n := cleanID(name); n != "" {
		return n
	}
	return hwmon
}

// dedupIDs appends the hwmonN to ids that two chips share (possible only
// for chips without a device link), so no two chips write one series.
func dedupIDs(chips []*chip) {
	count := map[string]int{}
	for _, c := range chips {
		count[c.id]++
	}
	for _, c := range chips {
		if count[c.id] > 1 {
			c.id += "_" + c.hwmon
		}
	}
}

// Class groups sensors for analysis: "cpu_package" and "cpu_core" for Intel
// coretemp's "Package id N" and "Core N", "cpu" for AMD's k10temp and
// zenpower (Tctl, Tdie, TccdN) and other CPU sensors, "nvme", "acpi" for
// ACPI thermal zones, "gpu" for GPU drivers, else "other".
func Class(chipName, label string) string {
	switch chipName {
	case "coretemp":
		switch {
		case strings.HasPrefix(label, "Package id"), strings.HasPrefix(label, "Physical id"):
			return "cpu_package"
		case strings.HasPrefix(label, "Core"):
			return "cpu_core"
		}
		return "cpu"
	case "k10temp", "zenpower", "k8temp", "fam15h_power":
		return "cpu"
	case "nvme":
		return "nvme"
	case "acpitz":
		return "acpi"
	case "amdgpu", "radeon", "nouveau", "i915", "xe":
		return "gpu"
	}
	return "other"
}

func tags(c *chip, ch *Channel) []point.Tag {
	p := point.Point{Tags: make([]point.Tag, 0, 5)}
	p.AddTag("chip", c.id)
	p.AddTag("chip_name", c.name)
	p.AddTag("sensor", ch.Name)
	p.AddTag("label", ch.Label)
	p.AddTag("class", Class(c.name, ch.Label))
	return p.Tags
}

// Describe implements collectors.Describer: one line per chip with its channels.
func (s *Source) Describe() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.desc...)
}

// Close closes the files kept open between samples. It does not wait for a
// sample still in flight (a hung driver): the process is then ending, and
// its files go with it.
func (s *Source) Close() error {
	if !s.sampling.TryLock() {
		return nil
	}
	defer s.sampling.Unlock()
	s.closeFiles()
	return nil
}

func (s *Source) closeFiles() {
	for _, c := range s.chips {
		for _, ch := range c.chans {
			ch.Close()
		}
	}
}

// Sample appends one point per channel. A channel that cannot be read
// (vanished, empty, not a number, out of physical range) is left out and
// its error joined into the result; the other channels are kept. A chip that
// vanished is one error, and the chips are discovered again before the next
// sample, so a reloaded driver comes back under its new hwmonN.
func (s *Source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	s.sampling.Lock()
	defer s.sampling.Unlock()
	since := time.Since(s.discoveredAt)
	if s.rescan || since >= SlowRescan || (len(s.chips) < s.mostChips && since >= MissingRescan) {
		if err := s.discover(); err != nil {
			return buf, err
		}
	}
	refresh := s.samples%s.refresh == 0
	s.samples++
	var errs []error
	for _, c := range s.chips {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		// sysfs answers ENODEV to a file kept open after its chip is gone,
		// but a file in an ordinary tree (a fixture) still reads; one stat
		// a chip tells for sure either way.
		if _, err := os.Stat(c.dir); err != nil {
			s.rescan = true
			errs = append(errs, fmt.Errorf("hwmon chip %s (%s) vanished: %w", c.id, c.hwmon, err))
			continue
		}
		for _, ch := range c.chans {
			v, err := ch.Read()
			if err != nil {
				if sysfs.Gone(err) {
					s.rescan = true
				}
				errs = append(errs, fmt.Errorf("hwmon %s %s: %w", c.id, ch.Name, err))
				continue
			}
			if refresh && ch.Kind == Temp {
				if ch.limits, err = ch.ReadLimits(); err != nil {
					errs = append(errs, fmt.Errorf("hwmon %s %s: %w", c.id, ch.Name, err))
				}
			}
			p := point.Point{Measurement: "hwmon", Tags: ch.tags, Time: t, Fields: make([]point.Field, 0, 3)}
			switch ch.Kind {
			case Temp:
				p.AddFloat("temp_c", v)
				if ch.limits.HasMax {
					p.AddFloat("max_c", ch.limits.MaxC)
				}
				if ch.limits.HasCrit {
					p.AddFloat("crit_c", ch.limits.CritC)
				}
			case Fan:
				p.AddFloat("fan_rpm", v)
			case Power:
				p.AddFloat("power_w", v)
			}
			buf = append(buf, p)
		}
	}
	return buf, errors.Join(errs...)
}
