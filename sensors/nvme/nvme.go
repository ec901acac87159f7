// Package nvme is the source for NVMe drive temperatures: the hwmon node
// under /sys/class/nvme/nvmeN (Composite, the controller's own figure, and
// Sensor 1..8 where the drive has them), tagged with the controller, its
// model and serial, with the warning and critical thresholds it reports.
package nvme

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

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
type Source struct {
	root    string
	filter  filter.Filter
	refresh int

	ctrls   []*controller
	samples int
	rescan  bool

	sampling sync.Mutex // held by Sample, so Close cannot pull files from under it

	mu   sync.Mutex
	desc []string
}

type controller struct {
	name, model, serial string
	hwmonDir            string
	sensors             []*sensor
}

type sensor struct {
	*hwmon.Channel
	tags   []point.Tag
	limits hwmon.Limits // MaxC is the drive's warning threshold
}

// New returns a source reading the sysfs tree at sysRoot ("/sys").
func New(sysRoot string, f filter.Filter) *Source {
	return &Source{root: sysRoot, filter: f, refresh: DefaultRefresh}
}

// SetRefresh sets how many samples pass between readings of the thresholds
// (DefaultRefresh); 1 reads them every sample.
func (s *Source) SetRefresh(n int) { s.refresh = max(n, 1) }

// Name implements collectors.Source.
func (s *Source) Name() string { return "nvme" }

var ctrlDir = regexp.MustCompile(`^nvme([0-9]+)$`)

// Discover lists the controllers and their temperature sensors. No NVMe
// class, or no controller with a hwmon node (a kernel built without
// CONFIG_NVME_HWMON), is errors.ErrUnsupported.
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
	s.ctrls, s.samples, s.rescan = nil, 0, false
	dir := filepath.Join(s.root, "class", "nvme")
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no nvme class at %s: %w", dir, errors.ErrUnsupported)
		}
		return err
	}
	var desc []string
	nctrl := 0
	for _, e := range entries {
		m := ctrlDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		nctrl++
		cdir := filepath.Join(dir, e.Name())
		c := &controller{name: e.Name()}
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
			p.AddTag("device", c.name).AddTag("model", c.model).AddTag("serial", c.serial).AddTag("sensor", label)
			c.sensors = append(c.sensors, &sensor{Channel: &ch, tags: p.Tags})
			names = append(names, label)
		}
		if len(c.sensors) == 0 {
			desc = append(desc, line+": no temperature sensor the filter keeps")
			continue
		}
		desc = append(desc, fmt.Sprintf("%s, %s: %s", line, filepath.Base(c.hwmonDir), strings.Join(names, ", ")))
		s.ctrls = append(s.ctrls, c)
	}
	s.mu.Lock()
	s.desc = desc
	s.mu.Unlock()
	switch {
	case nctrl == 0:
		return fmt.Errorf("no nvme controllers under %s: %w", dir, errors.ErrUnsupported)
	case len(s.ctrls) == 0:
		return fmt.Errorf("none of %d nvme controllers has a hwmon temperature sensor the filter keeps: %w", nctrl, errors.ErrUnsupported)
	}
	return nil
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

// Describe implements collectors.Describer.
func (s *Source) Describe() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.desc...)
}

// Close closes the files kept open between samples. It does not wait for a
// sample still in flight (a hung drive): the process is then ending.
func (s *Source) Close() error {
	if !s.sampling.TryLock() {
		return nil
	}
	defer s.sampling.Unlock()
	s.closeFiles()
	return nil
}

func (s *Source) closeFiles() {
	for _, c := range s.ctrls {
		for _, se := range c.sensors {
			se.Close()
		}
	}
}

// Sample appends one point per sensor. A sensor that cannot be read is left
// out and its error joined into the result; a controller that vanished
// (hot-unplugged, or reset) is one error, and the controllers are discovered
// again before the next sample.
func (s *Source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	s.sampling.Lock()
	defer s.sampling.Unlock()
	if s.rescan {
		if err := s.discover(); err != nil {
			return buf, err
		}
	}
	refresh := s.samples%s.refresh == 0
	s.samples++
	var errs []error
	for _, c := range s.ctrls {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		// One stat a controller: a file kept open may still read after
		// the drive is gone (sysfs says ENODEV, a fixture tree does not).
		if _, err := os.Stat(c.hwmonDir); err != nil {
			s.rescan = true
			errs = append(errs, fmt.Errorf("nvme %s vanished: %w", c.name, err))
			continue
		}
		for _, se := range c.sensors {
			v, err := se.Read()
			if err != nil {
				if sysfs.Gone(err) {
					s.rescan = true
				}
				errs = append(errs, fmt.Errorf("nvme %s %s: %w", c.name, se.Name, err))
				continue
			}
			if refresh {
				if se.limits, err = se.ReadLimits(); err != nil {
					errs = append(errs, fmt.Errorf("nvme %s %s: %w", c.name, se.Name, err))
				}
			}
			p := point.Point{Measurement: schema.NVMe, Tags: se.tags, Time: t, Fields: make([]point.Field, 0, 3)}
			p.AddFloat("temp_c", v)
			if se.limits.HasMax {
				p.AddFloat("warn_c", se.limits.MaxC)
			}
			if se.limits.HasCrit {
				p.AddFloat("crit_c", se.limits.CritC)
			}
			buf = append(buf, p)
		}
	}
	return buf, errors.Join(errs...)
}
