// Package host is the source every machine has: CPU utilisation (total and
// per core) from /proc/stat, memory from /proc/meminfo and the load average
// from /proc/loadavg. It makes sure every run records something real, even
// on a machine with no sensors at all.
package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/sysfs"
)

// Source samples /proc. Its devices, as the filter sees them, are "total"
// and "cpu0", "cpu1"... for the cpu points, "mem" and "load"; it has no
// sensors to filter.
type Source struct {
	root   string
	filter filter.Filter

	statPath, memPath, loadPath string
	keepMem, keepLoad           bool

	// CPU times of the previous sample, by /proc/stat name ("cpu", "cpu3").
	prev    map[string]*cpuState
	statBuf []byte
	fileBuf []byte

	mu   sync.Mutex
	desc []string
}

type cpuState struct {
	times cpuTimes
	seen  bool // times holds a previous reading
	keep  bool
	tags  []point.Tag
}

// New returns a source reading the procfs tree at procRoot ("/proc").
func New(procRoot string, f filter.Filter) *Source {
	return &Source{
		root:     procRoot,
		filter:   f,
		statPath: filepath.Join(procRoot, "stat"),
		memPath:  filepath.Join(procRoot, "meminfo"),
		loadPath: filepath.Join(procRoot, "loadavg"),
		keepMem:  f.Device("mem"),
		keepLoad: f.Device("load"),
		prev:     map[string]*cpuState{},
	}
}

// Name implements collectors.Source.
func (s *Source) Name() string { return "host" }

// Discover checks that the three files can be read and parsed, and forgets
// the previous CPU times, so utilisation restarts after a re-discovery.
func (s *Source) Discover(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := os.Stat(s.statPath); err != nil {
		return fmt.Errorf("no procfs at %s: %w", s.root, errors.Join(err, errors.ErrUnsupported))
	}
	clear(s.prev)
	var errs []error
	ncpu := 0
	b, err := sysfs.ReadFile(s.statPath, s.statBuf)
	s.statBuf = b
	if err == nil {
		err = parseStat(b, func(name []byte, _ cpuTimes) error {
			if string(name) != "cpu" {
				ncpu++
			}
			return nil
		})
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", s.statPath, err))
	}
	if b, err := sysfs.ReadFile(s.memPath, s.fileBuf); err != nil {
		errs = append(errs, err)
	} else if _, err := parseMeminfo(b); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", s.memPath, err))
	}
	if b, err := sysfs.ReadFile(s.loadPath, s.fileBuf); err != nil {
		errs = append(errs, err)
	} else if _, err := parseLoadavg(b); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", s.loadPath, err))
	}
	if len(errs) == 3 {
		return errors.Join(errs...)
	}
	s.mu.Lock()
	s.desc = []string{
		fmt.Sprintf("cpu: total and %d cpus (%s)", ncpu, s.statPath),
		"mem: " + s.memPath,
		"load: " + s.loadPath,
	}
	s.mu.Unlock()
	return errors.Join(errs...)
}

// Describe implements collectors.Describer.
func (s *Source) Describe() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.desc...)
}

// Sample appends a cpu point per CPU (from the second sample on: utilisation
// is a rate between two readings), a mem point and a load point. Each file
// fails on its own; the others' points are kept.
func (s *Source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	if err := ctx.Err(); err != nil {
		return buf, err
	}
	var errs []error
	var err error
	if buf, err = s.sampleCPU(t, buf); err != nil {
		errs = append(errs, err)
	}
	if s.keepMem {
		if buf, err = s.sampleMem(t, buf); err != nil {
			errs = append(errs, err)
		}
	}
	if s.keepLoad {
		if buf, err = s.sampleLoad(t, buf); err != nil {
			errs = append(errs, err)
		}
	}
	return buf, errors.Join(errs...)
}

func (s *Source) sampleCPU(t time.Time, buf []point.Point) ([]point.Point, error) {
	b, err := sysfs.ReadFile(s.statPath, s.statBuf)
	s.statBuf = b
	if err != nil {
		return buf, err
	}
	err = parseStat(b, func(name []byte, cur cpuTimes) error {
		st := s.prev[string(name)]
		if st == nil {
			st = s.newCPU(string(name))
		}
		prev, seen := st.times, st.seen
		st.times, st.seen = cur, true
		if !seen || !st.keep {
			return nil
		}
		u, ok := utilisation(prev, cur)
		if !ok {
			return nil
		}
		p := point.Point{Measurement: schema.CPU, Tags: st.tags, Time: t, Fields: make([]point.Field, 0, 5)}
		p.AddFloat(schema.FieldUsagePct, u.usage)
		p.AddFloat(schema.FieldUserPct, u.user)
		p.AddFloat(schema.FieldSystemPct, u.system)
		p.AddFloat(schema.FieldIowaitPct, u.iowait)
		p.AddFloat(schema.FieldIdlePct, u.idle)
		buf = append(buf, p)
		return nil
	})
	if err != nil {
		return buf, fmt.Errorf("%s: %w", s.statPath, err)
	}
	return buf, nil
}

func (s *Source) newCPU(name string) *cpuState {
	tag := name
	if name == "cpu" {
		tag = "total"
	}
	st := &cpuState{keep: s.filter.Device(tag), tags: []point.Tag{{Key: schema.TagCPU, Value: tag}}}
	s.prev[name] = st
	return st
}

func (s *Source) sampleMem(t time.Time, buf []point.Point) ([]point.Point, error) {
	b, err := sysfs.ReadFile(s.memPath, s.fileBuf)
	s.fileBuf = b
	if err != nil {
		return buf, err
	}
	m, err := parseMeminfo(b)
	if err != nil {
		return buf, fmt.Errorf("%s: %w", s.memPath, err)
	}
	p := point.Point{Measurement: schema.Mem, Time: t, Fields: make([]point.Field, 0, 4)}
	p.AddUint(schema.FieldTotalBytes, m.total)
	if m.haveAvailable {
		p.AddUint(schema.FieldAvailableBytes, m.available)
		p.AddUint(schema.FieldUsedBytes, m.total-m.available)
	}
	if m.haveSwap {
		p.AddUint(schema.FieldSwapUsedBytes, m.swapTotal-m.swapFree)
	}
	return append(buf, p), nil
}

func (s *Source) sampleLoad(t time.Time, buf []point.Point) ([]point.Point, error) {
	b, err := sysfs.ReadFile(s.loadPath, s.fileBuf)
	s.fileBuf = b
	if err != nil {
		return buf, err
	}
	l, err := parseLoadavg(b)
	if err != nil {
		return buf, fmt.Errorf("%s: %w", s.loadPath, err)
	}
	p := point.Point{Measurement: schema.Load, Time: t, Fields: make([]point.Field, 0, 4)}
	p.AddFloat(schema.FieldLoad1, l.load1)
	p.AddFloat(schema.FieldLoad5, l.load5)
	p.AddFloat(schema.FieldLoad15, l.load15)
	p.AddInt(schema.FieldProcsRunning, l.running)
	return append(buf, p), nil
}
