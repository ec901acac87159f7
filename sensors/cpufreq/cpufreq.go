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
//
// Name, Discover, Sample, Describe and Close come from the embedded Poller;
// SetRefresh sets how many samples pass between readings of the policy
// limits (DefaultRefresh). Its one device is the tree of policies: one
// stat a sample tells whether the tree is still there, and a CPU that went
// offline sends the source back to discovery.
type Source struct {
	*sysfs.Poller[*policies]
	root   string
	dir    string // <root>/devices/system/cpu
	filter filter.Filter
}

// New returns a source reading the sysfs tree at sysRoot ("/sys").
func New(sysRoot string, f filter.Filter) *Source {
	s := &Source{root: sysRoot, dir: filepath.Join(sysRoot, "devices", "system", "cpu"), filter: f}
	s.Poller = sysfs.NewPoller(sysfs.PollerConfig[*policies]{Name: "cpufreq", Discover: s.discover, Read: s.read,
		Refresh: DefaultRefresh, Rediscover: true})
	return s
}

var cpuDir = regexp.MustCompile(`^cpu([0-9]+)$`)

// discover lists the CPUs that have a cpufreq policy. None (a virtual
// machine, or no cpufreq driver) is errors.ErrUnsupported. The tree is
// returned whatever is found in it, so that a sample still tells when it
// is gone.
func (s *Source) discover() ([]*policies, error) {
	dir := s.dir
	pols := &policies{dir: dir}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []*policies{pols}, fmt.Errorf("no cpu devices at %s: %w", dir, errors.ErrUnsupported)
		}
		return []*policies{pols}, err
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
			tags:    []point.Tag{{Key: schema.TagCPU, Value: e.Name()}},
		}})
	}
	slices.SortFunc(found, func(a, b numbered) int { return a.n - b.n })
	for _, f := range found {
		pols.cpus = append(pols.cpus, f.c)
	}
	cpus := pols.cpus
	var desc []string
	if len(cpus) > 0 {
		desc = []string{fmt.Sprintf("%d cpus with a cpufreq policy: %s..%s", len(cpus), cpus[0].name, cpus[len(cpus)-1].name)}
		if drv, err := sysfs.ReadString(filepath.Join(dir, cpus[0].name, "cpufreq", "scaling_driver")); err == nil {
			desc[0] += " (" + drv + ")"
		}
	}
	s.SetDescription(desc)
	if len(cpus) == 0 {
		return []*policies{pols}, fmt.Errorf("no cpu under %s has a cpufreq policy the filter keeps (no cpufreq driver?): %w", dir, errors.ErrUnsupported)
	}
	return []*policies{pols}, nil
}

// policies are the cpufreq policies of the CPUs that have one.
type policies struct {
	dir  string // <root>/devices/system/cpu
	cpus []*cpu
}

func (p *policies) Dir() string    { return p.dir }
func (p *policies) String() string { return "cpufreq: cpu devices" }

// Close closes the current-frequency files kept open.
func (p *policies) Close() {
	for _, c := range p.cpus {
		c.cur.Close()
	}
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

// read appends one point per CPU. A CPU whose frequency cannot be read is
// left out and its error recorded; a CPU that went offline (its cpufreq
// link is gone; the kernel keeps the policy, which then answers EBUSY)
// sends the source back to discovery before the next sample.
func (s *Source) read(ctx context.Context, pols *policies, r *sysfs.Reading) {
	for i, c := range pols.cpus {
		if i%16 == 0 {
			if err := ctx.Err(); err != nil {
				r.Fail(err)
				break
			}
		}
		f, err := curMHz(c.cur)
		if err != nil {
			if _, lerr := os.Stat(c.link); lerr != nil {
				r.Rescan()
			}
			r.FailRead(fmt.Errorf("cpufreq %s: %w", c.name, err))
			continue
		}
		if r.Refresh {
			if c.min, err = readMHz(c.minPath); err != nil {
				r.Fail(fmt.Errorf("cpufreq %s: %w", c.name, err))
			}
			c.hasMin = err == nil
			if c.max, err = readMHz(c.maxPath); err != nil {
				r.Fail(fmt.Errorf("cpufreq %s: %w", c.name, err))
			}
			c.hasMax = err == nil
		}
		p := point.Point{Measurement: schema.Cpufreq, Tags: c.tags, Time: r.Time, Fields: make([]point.Field, 0, 3)}
		p.AddFloat(schema.FieldFreqMHz, f)
		if c.hasMin {
			p.AddFloat(schema.FieldMinMHz, c.min)
		}
		if c.hasMax {
			p.AddFloat(schema.FieldMaxMHz, c.max)
		}
		r.Points = append(r.Points, p)
	}
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
