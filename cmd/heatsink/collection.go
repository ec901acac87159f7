package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/collectors/agent"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// collection is a collector with its sources and sinks, and the run
// directory it records into (when one was asked for). `collect` and `run`
// share it.
type collection struct {
	cfg       *configs.Config
	collector *collectors.Collector
	sources   []collectors.Source
	sinks     []collectors.Sink
	runDir    string // "" without --out
	meta      *rundir.Meta
	runID     string // identifies the run, with or without a run directory
	// influx is the InfluxDB sink when one is configured; with
	// collectionOptions.handoff it is written through handoff, which a
	// configuration reload can point at a new one.
	influx  *influx.Sink
	handoff *agent.Handoff
	untrack func() // removes the run from the ledger of runs in progress
}

type collectionOptions struct {
	outDir string // run directory; "" for none
	stdout string // "", "lp" or "json"
	ticks  int
	// sinks are added to the configured ones: the runner's store of the
	// latest temperatures, the alert engine.
	sinks []collectors.Sink
	// handoff lets a reload replace the InfluxDB sink (the node agent).
	handoff bool
}

func newRunID(host string, t time.Time) string {
	return t.UTC().Format("20060102T150405Z") + "-" + host
}

func startCollection(cfg *configs.Config, o collectionOptions) (*collection, error) {
	host := cfg.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	srcs, err := buildSources(cfg)
	if err != nil {
		return nil, err
	}
	c := &collection{cfg: cfg, sources: srcs, runID: newRunID(host, time.Now())}
	// InfluxDB is checked first: a wrong URL or token fails before a run
	// directory exists.
	influxSink, err := startInfluxSink(cfg)
	if err != nil {
		closeSources(srcs)
		return nil, err
	}
	if influxSink != nil {
		c.influx = influxSink
		var s collectors.Sink = influxSink
		if o.handoff {
			c.handoff = agent.NewHandoff(influxSink)
			s = c.handoff
		}
		c.sinks = append(c.sinks, s)
	}
	if o.outDir != "" {
		w, err := rundir.Create(o.outDir)
		if err != nil {
			c.close()
			return nil, err
		}
		c.runDir = o.outDir
		c.sinks = append(c.sinks, w)
		now := time.Now()
		c.meta = &rundir.Meta{
			ID:        c.runID,
			Host:      host,
			Command:   os.Args,
			Versions:  versions(),
			Start:     now,
			IntervalS: cfg.Interval.Seconds(),
			Status:    "running",
			Labels:    cfg.Labels,
		}
		if b, err := configs.JSON(cfg); err == nil {
			c.meta.Config = b
		}
		// A run cut off by kill -9 says so in its run.json from here on.
		untrack, cut, err := rundir.Track(filepath.Join(stateDir(), "runs"), o.outDir)
		for _, d := range cut {
			slog.Warn("an earlier run was cut off (heatsink killed or crashed); its run.json now says so", "dir", d)
			c.meta.Events = append(c.meta.Events, rundir.Event{Time: now, Kind: "earlier_run_cut_off", Message: d})
		}
		if err != nil {
			slog.Warn("run ledger", "err", err)
		}
		c.untrack = untrack
		if err := rundir.WriteMeta(o.outDir, c.meta); err != nil {
			c.close()
			return nil, err
		}
	}
	stdout := o.stdout
	if stdout == "" {
		stdout = cfg.Sinks.Stdout
	}
	if stdout != "" {
		s, err := collectors.NewStreamSink(os.Stdout, stdout)
		if err != nil {
			c.close()
			return nil, err
		}
		c.sinks = append(c.sinks, s)
	}
	c.sinks = append(c.sinks, o.sinks...)
	c.collector = collectors.New(collectors.Options{
		Interval: cfg.Interval,
		Deadline: cfg.Deadline,
		Host:     host,
		Ticks:    o.ticks,
		Logger:   slog.Default(),
	}, srcs, c.sinks)
	if influxSink != nil {
		// The sink's own health (spool depth, retries, losses) goes to every sink.
		influxSink.SetMetrics(c.collector.Emit)
	}
	return c, nil
}

// describeSources records what each source found, for run.json. It runs at
// finish, when every source has been through discovery.
func (c *collection) describeSources() {
	if c.meta == nil {
		return
	}
	c.meta.Sources = c.meta.Sources[:0]
	status := c.collector.SourceStatus()
	for i, s := range c.collector.Sources() { // after any reload
		info := rundir.SourceInfo{Name: s.Name(), Error: status[i].LastError}
		if d, ok := s.(collectors.Describer); ok && !status[i].Unavailable {
			info.Devices = d.Describe()
		}
		c.meta.Sources = append(c.meta.Sources, info)
	}
}

// finish records the end of the run and closes sinks and sources.
func (c *collection) finish(status string) error {
	var errs []error
	if c.meta != nil {
		c.describeSources()
		end := time.Now()
		c.meta.End = &end
		c.meta.Status = status
	}
	// Sinks first: closing the run directory's writer settles its gaps.
	var writers []*rundir.Writer
	if c.collector != nil {
		for _, s := range c.collector.Sinks() {
			if w, ok := s.(*rundir.Writer); ok {
				writers = append(writers, w)
			}
		}
	}
	errs = append(errs, c.close())
	if c.meta != nil {
		for _, w := range writers {
			for _, g := range w.Gaps() {
				c.meta.Events = append(c.meta.Events, g.Event())
			}
		}
		if err := rundir.WriteMeta(c.runDir, c.meta); err != nil {
			errs = append(errs, err)
		} else if c.untrack != nil {
			c.untrack()
		}
	}
	return errors.Join(errs...)
}

// written is how many points the run directory holds from this collection
// (what its writer synced), not how many were collected.
func (c *collection) written() int {
	n := 0
	if c.collector != nil {
		for _, s := range c.collector.Sinks() {
			if w, ok := s.(*rundir.Writer); ok {
				n += w.Points()
			}
		}
	}
	return n
}

func (c *collection) close() error {
	sinks, sources := c.sinks, c.sources
	if c.collector != nil {
		// A reload may have replaced some; the collector closed those.
		sinks, sources = c.collector.Sinks(), c.collector.Sources()
	}
	var errs []error
	for _, s := range sinks {
		if err := s.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close sink %T: %w", s, err))
		}
	}
	closeSources(sources)
	return errors.Join(errs...)
}

func versions() map[string]string {
	v := map[string]string{"heatsink": version}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v["go"] = bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v["revision"] = s.Value
			}
		}
	}
	return v
}

func absDir(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}
