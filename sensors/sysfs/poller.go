package sysfs

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
)

// Device is what a sysfs source samples: a hwmon chip, an NVMe controller,
// a RAPL zone, the cpufreq policies.
type Device interface {
	// Dir is the device's directory. A file kept open may still read after
	// its device is gone from an ordinary tree (a fixture; sysfs itself
	// answers ENODEV), so one stat of Dir a sample tells for sure.
	Dir() string
	// String names the device in errors ("hwmon chip platform_coretemp_0
	// (hwmon3)").
	String() string
	// Close closes the files the device keeps open between samples.
	Close()
}

// PollerConfig is what a source gives its Poller: how to find its devices
// and how to read one.
type PollerConfig[D Device] struct {
	// Name names the source in self-metrics and errors ("hwmon").
	Name string
	// Discover lists the devices; the poller has closed those of the
	// previous discovery and holds its lock. The devices it returns are
	// kept even with an error (a discovery that found devices it cannot
	// read says so), and the error is Discover's.
	Discover func() ([]D, error)
	// Read appends the device's points to r.Points and records what failed
	// in r. A device whose Dir is gone is not read.
	Read func(ctx context.Context, d D, r *Reading)
	// Refresh is how many samples pass between readings of slow-changing
	// attributes (thresholds, policy limits), which r.Refresh announces;
	// 0 is 1, every sample.
	Refresh int
	// Rediscover makes a vanished device (its Dir gone, or a read that
	// FailRead finds gone) send the source back to discovery before the
	// next sample, so that a reloaded driver is found under its new name.
	// Without it a vanished device is an error every sample until the
	// source is discovered again from outside.
	Rediscover bool
	// MissingRescan, when positive, rediscovers this often while discovery
	// finds fewer devices than it once did: a driver reload takes seconds,
	// longer than the one rescan a vanished device causes, and the device
	// comes back under a new name.
	MissingRescan time.Duration
}

// Poller is the lifecycle every sysfs source shares, embedded by each:
// Discover, Sample, Describe and Close. Discovery and samples hold one lock,
// so that Close cannot pull files from under a sample in flight; a sample
// rediscovers first when a device vanished (Rediscover) or a rescan
// interval has passed (SetRescanEvery); every Refresh samples it announces
// the re-reading of slow-changing attributes. The source keeps its own
// discovery, parsing and naming in its own file.
type Poller[D Device] struct {
	cfg PollerConfig[D]

	// sampling is held by Discover and Sample, and tried by Close.
	sampling    sync.Mutex
	devices     []D
	samples     int // since discovery
	rescan      bool
	rescanEvery time.Duration
	scanned     time.Time // last discovery, monotonic
	most        int       // the most devices a discovery found
	r           Reading   // reused by every sample

	mu   sync.Mutex // guards desc, which Describe reads from any goroutine
	desc []string
}

// NewPoller returns a poller over cfg.
func NewPoller[D Device](cfg PollerConfig[D]) *Poller[D] {
	cfg.Refresh = max(cfg.Refresh, 1)
	return &Poller[D]{cfg: cfg}
}

// Name implements collectors.Source.
func (p *Poller[D]) Name() string { return p.cfg.Name }

// SetRefresh sets how many samples pass between readings of the
// slow-changing attributes; 1 reads them every sample.
func (p *Poller[D]) SetRefresh(n int) {
	p.sampling.Lock()
	defer p.sampling.Unlock()
	p.cfg.Refresh = max(n, 1)
}

// SetRescanEvery makes Sample discover again once d has passed since the
// last discovery, for devices that vanish and come back without a read
// failing in between (a chip re-registered under a new hwmonN); 0, the
// default, rediscovers only after a device vanished.
func (p *Poller[D]) SetRescanEvery(d time.Duration) {
	p.sampling.Lock()
	defer p.sampling.Unlock()
	p.rescanEvery = d
}

// Discover implements collectors.Source: it closes the devices of the
// previous discovery and lists them again.
func (p *Poller[D]) Discover(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.sampling.Lock()
	defer p.sampling.Unlock()
	return p.discover()
}

func (p *Poller[D]) discover() error {
	p.closeDevices()
	p.samples, p.rescan, p.scanned = 0, false, time.Now()
	var err error
	p.devices, err = p.cfg.Discover()
	p.most = max(p.most, len(p.devices))
	return err
}

func (p *Poller[D]) closeDevices() {
	for _, d := range p.devices {
		d.Close()
	}
}

// Sample implements collectors.Source: one reading of every device still
// present. A device that cannot be read is left out and its error joined
// into the result; the others are kept. Sampling stops at the end of ctx.
func (p *Poller[D]) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	p.sampling.Lock()
	defer p.sampling.Unlock()
	since := time.Since(p.scanned)
	if p.rescan || (p.rescanEvery > 0 && since >= p.rescanEvery) ||
		(p.cfg.MissingRescan > 0 && len(p.devices) < p.most && since >= p.cfg.MissingRescan) {
		if err := p.discover(); err != nil {
			return buf, err
		}
	}
	r := &p.r
	*r = Reading{Time: t, Refresh: p.samples%p.cfg.Refresh == 0, Points: buf, errs: r.errs[:0], rescan: &p.rescan, rediscover: p.cfg.Rediscover}
	p.samples++
	for _, d := range p.devices {
		if err := ctx.Err(); err != nil {
			r.errs = append(r.errs, err)
			break
		}
		if _, err := os.Stat(d.Dir()); err != nil {
			r.Rescan()
			r.errs = append(r.errs, fmt.Errorf("%v vanished: %w", d, err))
			continue
		}
		p.cfg.Read(ctx, d, r)
	}
	buf, err := r.Points, errors.Join(r.errs...)
	clear(r.errs) // keep no error alive until the next sample
	r.Points = nil
	return buf, err
}

// SetDescription records what discovery found, one line per device, for
// Describe.
func (p *Poller[D]) SetDescription(desc []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.desc = desc
}

// Describe implements collectors.Describer: what the last discovery found.
func (p *Poller[D]) Describe() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.desc...)
}

// Close closes the files kept open between samples. It does not wait for a
// sample still in flight (a hung driver): the process is then ending, and
// its files go with it.
func (p *Poller[D]) Close() error {
	if !p.sampling.TryLock() {
		return nil
	}
	defer p.sampling.Unlock()
	p.closeDevices()
	return nil
}

// Reading is one sample in progress, as a source's Read sees it.
type Reading struct {
	Time time.Time
	// Refresh says this sample re-reads the slow-changing attributes.
	Refresh bool
	// Points is where Read appends the device's points.
	Points []point.Point
	errs   []error
	// rescan is the poller's flag, set when it rediscovers at all.
	rescan     *bool
	rediscover bool
}

// Fail records an error of this sample; the device's other readings go on.
func (r *Reading) Fail(err error) { r.errs = append(r.errs, err) }

// FailRead records a failed read of a device's file, and has the source
// rediscover before the next sample when the error says the file is gone.
func (r *Reading) FailRead(err error) {
	if Gone(err) {
		r.Rescan()
	}
	r.Fail(err)
}

// Rescan has the source rediscover before the next sample (when its
// poller rediscovers at all): a device vanished, or went offline.
func (r *Reading) Rescan() {
	if r.rediscover {
		*r.rescan = true
	}
}

// ReadClass lists the devices of a sysfs class (<root>/class/<class>)
// whose names match device, in directory order. A kernel without the class
// (no driver registered one) is errors.ErrUnsupported, so the source is
// reported as not applicable rather than failing.
func ReadClass(root, class string, device *regexp.Regexp) (dir string, names []string, err error) {
	dir = filepath.Join(root, "class", class)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return dir, nil, fmt.Errorf("no %s class at %s: %w", class, dir, errors.ErrUnsupported)
		}
		return dir, nil, err
	}
	for _, e := range entries {
		if device.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	return dir, names, nil
}
