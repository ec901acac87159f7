// Package hwmon is the source for what libsensors reads: every temperature,
// fan and power channel under /sys/class/hwmon, with the chip, the driver's
// label and the thresholds, and a class that lets analysis find the CPU
// packages and cores whatever the vendor.
//
// A chip is identified by its device path, as node_exporter does
// (platform_coretemp_0, pci0000:00_0000:00:18_3, nvme_nvme0), never by its
// hwmonN number, which changes from boot to boot. Chips sharing a device
// add their driver name (ieee80211_phy0_mt7996_phy0_0); see dedupIDs.
package hwmon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/sysfs"
)

// A chip that stays gone past the rescan its vanishing caused (a driver
// reload takes seconds) would never be found again: while fewer chips are
// found than before, discovery is repeated every MissingRescan, and every
// SlowRescan in any case (a chip that appears later).
const (
	MissingRescan = 2 * time.Second
	SlowRescan    = time.Minute
)

// DefaultRefresh is how many samples pass between readings of the
// thresholds (_max, _crit): they rarely change, and reading them every
// second would triple the files read.
const DefaultRefresh = 60

// Source samples the hwmon chips of one sysfs tree. A chip's devices, as the
// filter sees them, are its id and its driver name; its sensors are the
// channel name and the label.
//
// Name, Discover, Sample, Describe and Close come from the embedded Poller;
// SetRefresh sets how many samples pass between readings of the thresholds
// (DefaultRefresh). A chip that vanished is one error, and the chips are
// discovered again before the next sample, so a reloaded driver comes back
// under its new hwmonN.
//
// Each chip is read on a goroutine of its own, so that an attribute whose
// read blocks in the driver costs only its own reading (see StallAfter and
// Stalled).
type Source struct {
	*sysfs.Poller[*chip]
	root   string
	filter filter.Filter

	stallAfter time.Duration
	stuck      atomic.Int64 // goroutines stuck in a read
	// Used by samples and discovery only, which the Poller serialises:
	timer   *time.Timer        // await's, reused
	flights map[string]*flight // by attribute path
}

type chip struct {
	id    string // platform_coretemp_0
	name  string // coretemp
	hwmon string // hwmon3, for messages
	dir   string // <root>/class/hwmon/hwmon3
	chans []*Sensor

	// Of the sample in progress (see readChip):
	out        []outcome
	idle       *readJob // the last job, reused unless it was left stuck
	stallAfter time.Duration
}

// New returns a source reading the sysfs tree at sysRoot ("/sys").
func New(sysRoot string, f filter.Filter) *Source {
	s := &Source{root: sysRoot, filter: f, stallAfter: StallAfter, timer: time.NewTimer(time.Hour)}
	s.timer.Stop()
	s.Poller = sysfs.NewPoller(sysfs.PollerConfig[*chip]{Name: "hwmon", Discover: s.discover, Read: s.read,
		Refresh: DefaultRefresh, Rediscover: true, MissingRescan: MissingRescan})
	s.SetRescanEvery(SlowRescan)
	return s
}

// discover lists the chips and their channels. No hwmon class, or no
// channel left after the filter, is errors.ErrUnsupported.
func (s *Source) discover() ([]*chip, error) {
	classDir, names, err := sysfs.ReadClass(s.root, "hwmon", hwmonDir)
	if err != nil {
		return nil, err
	}
	// Every chip is named before any is filtered out, so that a chip's
	// name does not depend on whether the chips sharing its device are
	// kept, and the filter sees the names the points carry.
	all := make([]*chip, 0, len(names))
	for _, name := range names {
		all = append(all, identify(filepath.Join(classDir, name), name))
	}
	dedupIDs(all)
	var chips []*chip
	nchips := len(names)
	for _, c := range all {
		keep, err := s.readChannels(c)
		if err != nil {
			// Vanished between ReadDir and now, or unreadable: skip it.
			continue
		}
		if keep {
			chips = append(chips, c)
		}
	}
	slices.SortFunc(chips, func(a, b *chip) int { return strings.Compare(a.id, b.id) })
	s.shareFlights(chips)
	for _, c := range chips {
		for _, ch := range c.chans {
			ch.Tags = tags(c, &ch.Channel)
		}
	}
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
	s.SetDescription(desc)
	switch {
	case nchips == 0:
		return chips, fmt.Errorf("no hwmon chips under %s: %w", classDir, errors.ErrUnsupported)
	case len(chips) == 0:
		return chips, fmt.Errorf("none of %d hwmon chips under %s has a temperature, fan or power channel the filter keeps: %w",
			nchips, classDir, errors.ErrUnsupported)
	}
	return chips, nil
}

var hwmonDir = regexp.MustCompile(`^hwmon[0-9]+$`)

// identify returns the chip at dir, named, without its channels.
func identify(dir, hwmon string) *chip {
	name, err := sysfs.ReadString(filepath.Join(dir, "name"))
	if err != nil {
		name, _ = sysfs.ReadString(filepath.Join(dir, "device", "name"))
	}
	return &chip{id: chipID(dir, name, hwmon), name: name, hwmon: hwmon, dir: dir}
}

// readChannels gives c the channels the filter keeps, and reports whether
// it keeps any.
func (s *Source) readChannels(c *chip) (bool, error) {
	if !s.filter.Device(c.id, c.name) {
		return false, nil
	}
	chs, err := Channels(c.dir)
	if err != nil {
		return false, err
	}
	for _, ch := range chs {
		if s.filter.Sensor(ch.Name, ch.Label) {
			c.chans = append(c.chans, &Sensor{Channel: ch})
		}
	}
	return len(c.chans) > 0, nil
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

// dedupIDs tells apart the chips that share an id: several chips of one
// device (a Wi-Fi card's three under ieee80211/phy0, asus-nb-wmi's two),
// or chips without a device link that share a driver name. As node_exporter
// does, so that both name a chip alike, each gets its driver name appended
// when that tells the sharers apart (ieee80211_phy0_mt7996_phy0_0), else its
// hwmonN, the one part that may change at the next boot. A chip alone on
// its device keeps the device's name.
func dedupIDs(chips []*chip) {
	type idName struct{ id, name string }
	ids := map[string]int{}
	names := map[idName]int{}
	for _, c := range chips {
		ids[c.id]++
		names[idName{c.id, c.name}]++
	}
	suffixed := make([]string, len(chips))
	for i, c := range chips {
		suffixed[i] = c.id
		if ids[c.id] < 2 {
			continue
		}
		suffix := cleanID(c.name)
		if suffix == "" || names[idName{c.id, c.name}] > 1 {
			suffix = c.hwmon
		}
		suffixed[i] = c.id + "_" + suffix
	}
	for i, c := range chips {
		c.id = suffixed[i]
	}
}

func tags(c *chip, ch *Channel) []point.Tag {
	p := point.Point{Tags: make([]point.Tag, 0, 5)}
	p.AddTag(schema.TagChip, c.id)
	p.AddTag(schema.TagChipName, c.name)
	p.AddTag(schema.TagSensor, ch.Name)
	p.AddTag(schema.TagLabel, ch.Label)
	p.AddTag(schema.TagClass, schema.HwmonClass(c.name, ch.Label))
	return p.Tags
}

func (c *chip) Dir() string    { return c.dir }
func (c *chip) String() string { return fmt.Sprintf("hwmon chip %s (%s)", c.id, c.hwmon) }

// Close closes the files the chip's channels keep open; a file whose read
// is stuck is closed when the read returns.
func (c *chip) Close() {
	for _, se := range c.chans {
		se.close()
	}
}

// read appends one point per channel of the chip that answered in time.
func (s *Source) read(ctx context.Context, c *chip, r *sysfs.Reading) {
	s.readChip(ctx, c, r.Refresh)
	emit(r, c)
}
