// Package node is a node's collection as a whole: it builds the sources
// and sinks a configuration names (through the registry), runs them under
// one collector, reloads them on SIGHUP between two ticks, answers
// `heatsink sensors` with the same engine, and serves /healthz and
// /metrics. The CLI gives it flags and prints what it returns.
package node

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// Options shape a Collection beyond its configuration.
type Options struct {
	// OutDir is the run directory to record into; "" for none. It is an
	// option, not a registered sink: it is one run's (--out, a new
	// directory each time, with the run.json the collection writes), not
	// a node's setting a configuration file could hold or a reload change.
	OutDir string
	// Ticks stops the collector after this many ticks when positive.
	Ticks int
	// Sinks are added to the configured ones (the runner's store of the
	// latest readings, the agent's Prometheus sink, a progress display).
	// They are made by the code that reads them back, at run time, so
	// there is no section to register them by; a reload keeps them.
	Sinks []collectors.Sink
	// Job is what the alert guard pauses and stops (heatsink run); nil
	// without a job.
	Job alerts.Job
	// OnEvent receives the alert engine's firings, clearings and guard
	// actions; nil records them in run.json's events.
	OnEvent func(rundir.Event)
	// Handoff lets a reload replace the configured sinks (the node
	// agent): an Exclusive kind's sink (InfluxDB) is written through a
	// handoff, which holds the points while its successor opens.
	Handoff bool
	// Command and Versions are recorded in run.json.
	Command  []string
	Versions map[string]string
}

// Collection is a collector with its sources and sinks, and the run
// directory it records into when one was asked for. `collect` and `run`
// both record through one.
type Collection struct {
	cfg       *configs.Config
	collector *collectors.Collector
	outbox    *collectors.Outbox
	built     []built
	sinks     []collectors.Sink
	runDir    string
	meta      *rundir.Meta
	runID     string
	engine    *alerts.Engine // nil without rules
	// configured are the sinks registered kinds built from sinks:; a
	// reload replaces the list (under Agent.mu).
	configured []*configured
	untrack    func() // removes the run from the ledger of runs in progress
}

// NewRunID names a run after its start and host.
func NewRunID(host string, t time.Time) string {
	return t.UTC().Format("20060102T150405Z") + "-" + host
}

// Start builds the collection cfg configures: the sources, the sinks of
// sinks: (checked first, so a wrong InfluxDB URL or token fails before a
// run directory exists), the run directory, the alert engine and the
// extra sinks, in that order. Run it with Collector().Run, then Finish.
func Start(cfg *configs.Config, o Options) (*Collection, error) {
	host := HostOf(cfg)
	bs, err := buildSources(cfg)
	if err != nil {
		return nil, err
	}
	c := &Collection{cfg: cfg, built: bs, runID: NewRunID(host, time.Now()), outbox: &collectors.Outbox{}}
	// The alert engine emits into the outbox, which exists already: it
	// needs no collector, and a bad rule fails before a run directory exists.
	onEvent := o.OnEvent
	if onEvent == nil {
		onEvent = c.recordEvent
	}
	if c.engine, err = newEngine(cfg, c.outbox, onEvent); err != nil {
		closeBuilt(bs)
		return nil, err
	}
	if err := c.openSinks(o, host); err != nil {
		if c.engine != nil {
			c.engine.Close()
		}
		c.close()
		return nil, err
	}
	if c.engine != nil {
		if o.Job != nil {
			c.engine.SetJob(o.Job)
		}
		c.sinks = append(c.sinks, c.engine)
	}
	c.collector = collectors.New(collectors.Options{
		Interval: cfg.Interval,
		Deadline: cfg.Deadline,
		Host:     host,
		Ticks:    o.Ticks,
		Logger:   slog.Default(),
		Outbox:   c.outbox,
	}, c.Sources(), c.sinks)
	return c, nil
}

func (c *Collection) openSinks(o Options, host string) error {
	cs, err := buildSinks(c.cfg, o.Handoff)
	if err != nil {
		return err
	}
	c.configured = cs
	c.sinks = append(c.sinks, sinkOuts(cs)...)
	if o.OutDir != "" {
		if err := c.createRunDir(o, host); err != nil {
			return err
		}
	}
	c.sinks = append(c.sinks, o.Sinks...)
	return nil
}

func (c *Collection) createRunDir(o Options, host string) error {
	w, err := rundir.Create(o.OutDir)
	if err != nil {
		return err
	}
	c.runDir = o.OutDir
	c.sinks = append(c.sinks, w)
	c.meta = &rundir.Meta{
		ID:        c.runID,
		Host:      host,
		Command:   o.Command,
		Versions:  o.Versions,
		Start:     time.Now(),
		IntervalS: c.cfg.Interval.Seconds(),
		Status:    "running",
		Labels:    c.cfg.Labels,
	}
	if b, err := configs.JSON(c.cfg); err == nil {
		c.meta.Config = b
	}
	// A run cut off by kill -9 says so in its run.json from here on.
	untrack, cut, err := rundir.Track(filepath.Join(StateDir(), "runs"), o.OutDir)
	for _, d := range cut {
		slog.Warn("an earlier run was cut off (heatsink killed or crashed); its run.json now says so", "dir", d)
		c.meta.Events = append(c.meta.Events, rundir.Event{Time: c.meta.Start, Kind: "earlier_run_cut_off", Message: d})
	}
	if err != nil {
		slog.Warn("run ledger", "err", err)
	}
	c.untrack = untrack
	return rundir.WriteMeta(o.OutDir, c.meta)
}

// StateDir is where heatsink keeps its state between runs (the InfluxDB
// spool's parent: /var/lib/heatsink as root, $HEATSINK_STATE_DIR when set).
func StateDir() string { return filepath.Dir(influx.DefaultSpoolDir()) }

// recordEvent keeps an alert's event for run.json, written at the end.
func (c *Collection) recordEvent(ev rundir.Event) {
	if c.meta != nil {
		c.meta.Events = append(c.meta.Events, ev)
	}
}

// newEngine returns the alert engine of cfg's rules, nil when it has none.
// The engine is a sink (it reads every tick) but not a registered one: it
// is built from the alerts section, not one under sinks:, it emits into
// the outbox and acts on the run's job, which only the collection has, and
// /alerts and /metrics read it; so the collection builds and reloads it
// itself.
func newEngine(cfg *configs.Config, emit alerts.Emitter, onEvent func(rundir.Event)) (*alerts.Engine, error) {
	ac := alerts.ConfigOf(cfg)
	if len(ac.Rules) == 0 {
		return nil, nil
	}
	// Alert commands do not inherit the {env: NAME} secrets heatsink read.
	return alerts.NewEngine(*ac, alerts.Options{Emit: emit, OnEvent: onEvent, Logger: slog.Default(), Interval: cfg.Interval,
		DropEnv: cfg.SecretEnv()})
}

// Collector returns the collection's collector.
func (c *Collection) Collector() *collectors.Collector { return c.collector }

// Outbox returns where points from outside the tick loop go; it exists
// from the start, so what emits can be built at any time.
func (c *Collection) Outbox() *collectors.Outbox { return c.outbox }

// Sources returns the sources built at start.
func (c *Collection) Sources() []collectors.Source {
	out := make([]collectors.Source, len(c.built))
	for i, b := range c.built {
		out[i] = b.src
	}
	return out
}

// RunID identifies the run, with or without a run directory.
func (c *Collection) RunID() string { return c.runID }

// Dir is the run directory; "" without one.
func (c *Collection) Dir() string { return c.runDir }

// Meta is run.json's content; nil without a run directory.
func (c *Collection) Meta() *rundir.Meta { return c.meta }

// Config is the configuration the collection was built from.
func (c *Collection) Config() *configs.Config { return c.cfg }

// describeSources records what each source found, for run.json. It runs
// at finish, when every source has been through discovery.
func (c *Collection) describeSources() {
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

// Finish records the end of the run in run.json with status and closes
// the sinks and sources. The sinks close first: closing the run
// directory's writer settles its gaps (a full disk), which run.json then
// records as events.
func (c *Collection) Finish(status string) error {
	var errs []error
	if c.meta != nil {
		c.describeSources()
		end := time.Now()
		c.meta.End = &end
		c.meta.Status = status
	}
	writers := c.runWriters()
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

// runWriters are the collection's run-directory sinks.
func (c *Collection) runWriters() []*rundir.Writer {
	sinks := c.sinks
	if c.collector != nil {
		sinks = c.collector.Sinks()
	}
	var ws []*rundir.Writer
	for _, s := range sinks {
		if w, ok := s.(*rundir.Writer); ok {
			ws = append(ws, w)
		}
	}
	return ws
}

// Written is how many points the run directory holds from this
// collection (what its writer synced), not how many were collected.
func (c *Collection) Written() int {
	n := 0
	for _, w := range c.runWriters() {
		n += w.Points()
	}
	return n
}

func (c *Collection) close() error {
	sinks, sources := c.sinks, c.Sources()
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
	CloseSources(sources)
	return errors.Join(errs...)
}
