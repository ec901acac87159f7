// Package nvme is the source for NVMe drive temperatures: the hwmon node
// under /sys/class/nvme/nvmeN (Composite, the controller's own figure, and
// Sensor 1..8 where the drive has them), tagged with the controller, its
// model and serial, with the warning and critical thresholds it reports.
package nvme

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/hwmon"
	"github.com/heatsink-hpc/heatsink/sensors/sysfs"
)

// DefaultRefresh is how many samples pass between readings of the
// thresholds (warning and critical temperature), which the drive fixes.
const DefaultRefresh = 60

// Source samples the NVMe controllers of one sysfs tree. Its devices, as the
// filter sees them, are the controller (nvme0) and its model; its sensors
// are the label (Composite, Sensor 1) and the hwmon channel (temp1).
//
// Name, Discover, Sample, Describe and Close come from the embedded Poller;
// SetRefresh sets how many samples pass between readings of the thresholds
// (DefaultRefresh). A controller that vanished (hot-unplugged, or reset) is
// one error, and the controllers are discovered again before the next
// sample.
type Source struct {
	*sysfs.Poller[*controller]
	root   string
	filter filter.Filter
}

type controller struct {
	name, model, serial string
	hwmonDir            string
	sensors             []*hwmon.Sensor // Limits.MaxC is the drive's warning threshold
}

// New returns a source reading the sysfs tree at sysRoot ("/sys").
func New(sysRoot string, f filter.Filter) *Source {
	s := &Source{root: sysRoot, filter: f}
	s.Poller = sysfs.NewPoller(sysfs.PollerConfig[*controller]{Name: "nvme", Discover: s.discover, Read: s.read,
		Refresh: DefaultRefresh, Rediscover: true})
	return s
}

var ctrlDir = regexp.MustCompile(`^nvme([0-9]+)$`)

// discover lists the controllers and their temperature sensors. No NVMe
// class, or no controller with a hwmon node (a kernel built without
// CONFIG_NVME_HWMON), is errors.ErrUnsupported.
func (s *Source) discover() ([]*controller, error) {
	dir, names, err := sysfs.ReadClass(s.root, "nvme", ctrlDir)
	if err != nil {
		return nil, err
	}
	var ctrls []*controller
	var desc []string
	nctrl := len(names)
	for _, name := range names {
		cdir := filepath.Join(dir, name)
		c := &controller{name: name}
		c.model, _ = sysfs.ReadString(filepath.Join(cdir, "model"))
		c.serial, _ = sysfs.ReadString(filepath.Join(cdir, "serial"))
		if !s.filter.Device(c.name, c.model) {
			continue
		}
		line := fmt.Sprintf("%s %s (serial %s)", c.name, c.model, c.serial)
		c.hwmonDir = findHwmon(cdir)
		if c.hwmonDir == "" {
			desc = append(desc, line+": no hwmon node (kernel without CONFIG_NVME_HWMON?)")
			continue
		}
		chs, err := hwmon.Channels(c.hwmonDir)
		if err != nil {
			desc = append(desc, line+": "+err.Error())
			continue
		}
		var names []string
		for _, ch := range chs {
			if ch.Kind != hwmon.Temp {
				continue
			}
			label := ch.Label
			if label == "" {
				label = ch.Name
			}
			if !s.filter.Sensor(label, ch.Name) {
				continue
			}
			p := point.Point{Tags: make([]point.Tag, 0, 4)}
			p.AddTag(schema.TagDevice, c.name).AddTag(schema.TagModel, c.model).AddTag(schema.TagSerial, c.serial).AddTag(schema.TagSensor, label)
			c.sensors = append(c.sensors, &hwmon.Sensor{Channel: ch, Tags: p.Tags})
			names = append(names, label)
		}
		if len(c.sensors) == 0 {
			desc = append(desc, line+": no temperature sensor the filter keeps")
			continue
		}
		desc = append(desc, fmt.Sprintf("%s, %s: %s", line, filepath.Base(c.hwmonDir), strings.Join(names, ", ")))
		ctrls = append(ctrls, c)
	}
	s.SetDescription(desc)
	switch {
	case nctrl == 0:
		return ctrls, fmt.Errorf("no nvme controllers under %s: %w", dir, errors.ErrUnsupported)
	case len(ctrls) == 0:
		return ctrls, fmt.Errorf("none of %d nvme controllers has a hwmon temperature sensor the filter keeps: %w", nctrl, errors.ErrUnsupported)
	}
	return ctrls, nil
}

var hwmonName = regexp.MustCompile(`^hwmon([0-9]+)$`)

// findHwmon returns the hwmon directory of the controller at cdir. Newer
// kernels register it under the controller's class device (nvme0/hwmonN);
// the first ones with NVMe hwmon support put it under the PCI device, in
// the hwmon glue directory (nvme0/device/hwmon/hwmonN).
func findHwmon(cdir string) string {
	for _, d := range []string{cdir, filepath.Join(cdir, "device", "hwmon")} {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		var found []string
		for _, e := range entries {
			if hwmonName.MatchString(e.Name()) {
				found = append(found, e.Name())
			}
		}
		if len(found) > 0 {
			slices.SortFunc(found, func(a, b string) int { return num(a) - num(b) })
			return filepath.Join(d, found[0])
		}
	}
	return ""
}

func num(hwmon string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(hwmon, "hwmon"))
	return n
}

func (c *controller) Dir() string    { return c.hwmonDir }
func (c *controller) String() string { return "nvme " + c.name }

// Close closes the files the controller's sensors keep open.
func (c *controller) Close() {
	for _, se := range c.sensors {
		se.Channel.Close()
	}
}

// read appends one point per temperature sensor of the controller.
func (s *Source) read(_ context.Context, c *controller, r *sysfs.Reading) {
	hwmon.ReadSensors(r, schema.NVMe, c.name, c.sensors, schema.FieldWarnC)
}
