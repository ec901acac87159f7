// Package cpufreq is the source for each CPU's clock: scaling_cur_freq, and
// the policy's scaling_min_freq and scaling_max_freq, from
// /sys/devices/system/cpu/cpuN/cpufreq. A CPU that runs hot clocks down;
// this is where heat accumulation shows up as lost performance.
package cpufreq

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
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/sysfs"
)

// DefaultRefresh is how many samples pass between readings of the policy
// limits (scaling_min_freq, scaling_max_freq), which change only when a
// governor, a user or a cooling device sets them.
const DefaultRefresh = 60

// maxKHz bounds a plausible frequency (100 GHz); beyond it a value is garbage.
const maxKHz = 100_000_000

// Source samples the cpufreq policies of one sysfs tree. Its devices, as
// the filter sees them, are "cpu0", "cpu1"...; it has no sensors to filter.
type Source struct {
	root    string
	dir     string // <root>/devices/system/cpu
	filter  filter.Filter
	refresh int

	cpus    []*cpu
	samples int
	rescan  bool

	sampling sync.Mutex // held by Sample, so Close cannot pull files from under it

	mu   sync.Mutex
	desc []string
}

type cpu struct {
	name             string // cpu0
	link             string // cpuN/cpufreq, gone while the CPU is offline
	cur              *sysfs.Attr
	minPath, maxPath string
	tags             []point.Tag
	min, max         float64 // MHz
	hasMin, hasMax   bool
}

// New returns a source reading the sysfs tree at sysRoot ("/sys").
func New(sysRoot string, f filter.Filter) *Source {
	return &Source{root: sysRoot, dir: filepath.Join(sysRoot, "devices", "system", "cpu"), filter: f, refresh: DefaultRefresh}
}

// SetRefresh sets how many samples pass between readings of the policy
// limits (DefaultRefresh); 1 reads them every sample.
func (s *Source) SetRefresh(n int) { s.refresh = max(n, 1) }

// Name implements collectors.Source.
func (s *Source) Name() string { return "cpufreq" }

var cpuDir = regexp.MustCompile(`^cpu([0-9]+)$`)

// Discover lists the CPUs that have a cpufreq policy. None (a virtual
// machine, or no cpufreq driver) is errors.ErrUnsupported.
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
	s.cpus, s.samples, s.rescan = nil, 0, false
	dir := s.dir
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no cpu devices at %s: %w", dir, errors.ErrUnsupported)
		}
		return err
	}
	type numbered struct {
		n int
		c *cpu
	}
	var found []numbered
	for _, e := range entries {
		m := cpuDir.FindStringSubmatch(e.Name())
		if m == nil || !s.filter.Device(e.Name()) {
			continue
		}
		pol := filepath.Join(dir, e.Name(), "cpufreq")
		cur := filepath.Join(pol, "scaling_cur_freq")
		if _, err := os.Stat(cur); err != nil {
			continue // offline, or no cpufreq driver
		}
		n, _ := strconv.Atoi(m[1])
		found = append(found, numbered{n, &cpu{
			name:    e.Name(),
			link:    pol,
			cur:     sysfs.NewAttr(cur),
			minPath: filepath.Join(pol, "scaling_min_freq"),
			maxPath: filepath.Join(pol, "scaling_max_freq"),
			tags:    []point.Tag{{Key: "cpu", Value: e.Name()}},
		}})
	}
	slices.SortFunc(found, func(a, b numbered) int { return a.n - b.n })
	for _, f := range found {
		s.cpus = append(s.cpus, f.c)
	}
	var desc []string
	if len(s.cpus) > 0 {
		desc = []string{fmt.Sprintf("%d cpus with a cpufreq policy: %s..%s", len(s.cpus), s.cpus[0].name, s.cpus[len(s.cpus)-1].name)}
		if drv, err := sysfs.ReadString(filepath.Join(dir, s.cpus[0].name, "cpufreq", "scaling_driver")); err == nil {
			desc[0] += " (" + drv + ")"
		}
	}
	s.mu.Lock()
	s.desc = desc
	s.mu.Unlock()
	if len(s.cpus) == 0 {
		return fmt.Errorf("no cpu under %s has a cpufreq policy the filter keeps (no cpufreq driver?): %w", dir, errors.ErrUnsupported)
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
	for _, c := range s.cpus {
		c.cur.Close()
	}
}

// Sample appends one point per CPU. A CPU whose frequency cannot be read is
// left out and its error joined into the result; a CPU that went offline
// (its cpufreq link is gone; the kernel keeps the policy, which then
// answers EBUSY) sends the source back to discovery before the next sample.
func (s *Source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	s.sampling.Lock()
	defer s.sampling.Unlock()
	if s.rescan {
		if err := s.discover(); err != nil {
			return buf, err
		}
	}
	// Kept-open files outlive a removed tree on an ordinary file system
	// (a fixture); one stat tells the whole tree is gone.
	if _, err := os.Stat(s.dir); err != nil {
		s.rescan = true
		return buf, fmt.Errorf("cpufreq: cpu devices vanished: %w", err)
	}
	refresh := s.samples%s.refresh == 0
	s.samples++
	var errs []error
	for i, c := range s.cpus {
		if i%16 == 0 {
			if err := ctx.Err(); err != nil {
				errs = append(errs, err)
				break
			}
		}
		f, err := curMHz(c.cur)
		if err != nil {
			if _, lerr := os.Stat(c.link); lerr != nil || sysfs.Gone(err) {
				s.rescan = true
			}
			errs = append(errs, fmt.Errorf("cpufreq %s: %w", c.name, err))
			continue
		}
		if refresh {
			if c.min, err = readMHz(c.minPath); err != nil {
				errs = append(errs, fmt.Errorf("cpufreq %s: %w", c.name, err))
			}
			c.hasMin = err == nil
			if c.max, err = readMHz(c.maxPath); err != nil {
				errs = append(errs, fmt.Errorf("cpufreq %s: %w", c.name, err))
			}
			c.hasMax = err == nil
		}
		p := point.Point{Measurement: schema.Cpufreq, Tags: c.tags, Time: t, Fields: make([]point.Field, 0, 3)}
		p.AddFloat("freq_mhz", f)
		if c.hasMin {
			p.AddFloat("min_mhz", c.min)
		}
		if c.hasMax {
			p.AddFloat("max_mhz", c.max)
		}
		buf = append(buf, p)
	}
	return buf, errors.Join(errs...)
}

// readMHz reads a frequency attribute (kHz) as MHz.
func readMHz(path string) (float64, error) {
	khz, err := sysfs.ReadInt(path)
	if err != nil {
		return 0, err
	}
	return toMHz(path, khz)
}

// curMHz is readMHz for the attribute kept open.
func curMHz(a *sysfs.Attr) (float64, error) {
	khz, err := a.ReadInt()
	if err != nil {
		return 0, err
	}
	return toMHz(a.Path(), khz)
}

func toMHz(path string, khz int64) (float64, error) {
	if khz < 0 || khz > maxKHz {
		return 0, fmt.Errorf("%s: %d kHz is not a plausible frequency", path, khz)
	}
	return float64(khz) / 1000, nil
}
