package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/collectors/agent"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/prom"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/spf13/cobra"
)

// nodeAgent is `heatsink collect` run as a service: it reloads its
// configuration on SIGHUP, serves /healthz, /metrics and /alerts with
// --listen, and tags every point with the Slurm job on the node with
// --jobs-dir.
type nodeAgent struct {
	cmd        *cobra.Command
	configPath string
	listen     string
	webConfig  string // --web.config.file: TLS and basic auth for listen
	jobsDir    string
	log        *slog.Logger

	c       *collection
	metrics *prom.Sink // nil without --listen
	srv     *http.Server
	wg      sync.WaitGroup

	mu      sync.Mutex // guards what a reload replaces
	cfg     *configs.Config
	engine  *alerts.Engine // nil without rules
	sources []collectors.Source
	sinks   []collectors.Sink
	jobs    []string
}

func newNodeAgent(cmd *cobra.Command, configPath, listen, jobsDir string, cfg *configs.Config) *nodeAgent {
	a := &nodeAgent{cmd: cmd, configPath: configPath, listen: listen, jobsDir: jobsDir, cfg: cfg, log: slog.Default()}
	if listen != "" {
		// Readings stay for five intervals, and at least a minute, after
		// their source last produced them.
		a.metrics = prom.New(prom.Options{Staleness: max(prom.DefaultStaleness, 5*cfg.Interval), Alerts: a.promAlerts})
	}
	return a
}

// alertSinks builds the alert engine of cfg, its points and events going
// to the collection.
func (a *nodeAgent) alertSinks(cfg *configs.Config) (*alerts.Engine, error) {
	_, eng, err := alertSinks(cfg, func(ps ...point.Point) { a.c.collector.Emit(ps...) }, func(ev rundir.Event) {
		if a.c.meta != nil {
			// run.json is written at the end; events only go there then.
			a.c.meta.Events = append(a.c.meta.Events, ev)
		}
	})
	return eng, err
}

// extraSinks are the sinks the agent adds to the collection's own.
func (a *nodeAgent) extraSinks() []collectors.Sink {
	var out []collectors.Sink
	if a.engine != nil {
		out = append(out, a.engine)
	}
	if a.metrics != nil {
		out = append(out, a.metrics)
	}
	return out
}

// start begins serving and watching; call it once the collection exists.
func (a *nodeAgent) start(ctx context.Context, c *collection) error {
	a.c = c
	a.sources = append([]collectors.Source(nil), c.sources...)
	a.sinks = append([]collectors.Sink(nil), c.sinks...)
	if a.listen != "" {
		l, err := net.Listen("tcp", a.listen)
		if err != nil {
			return fmt.Errorf("--listen: %w", err)
		}
		a.srv = &http.Server{Handler: agent.Handler(agent.Options{
			Collector: c.collector, Metrics: a.metrics, Alerts: a.agentAlerts, Sinks: a.sinkHealth, Jobs: a.currentJobs,
		}), ReadHeaderTimeout: 10 * time.Second}
		a.log.Info("agent listening", "addr", l.Addr().String())
		if agent.Unprotected(a.listen, a.webConfig) {
			a.log.Warn("--listen serves plain HTTP without authentication beyond this machine: give --web.config.file for TLS and basic auth, or listen on 127.0.0.1", "addr", a.listen)
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := agent.Serve(l, a.srv, a.webConfig, a.log); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("agent endpoint stopped", "err", err)
			}
		}()
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if err := a.reload(); err != nil {
					a.log.Error("reload failed; the running configuration stays", "config", a.configPath, "err", err)
				}
			}
		}
	}()
	if a.jobsDir != "" {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.watchJobs(ctx)
		}()
	}
	return nil
}

// stop ends the endpoint and the watchers; ctx must be done.
func (a *nodeAgent) stop() {
	if a.srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		a.srv.Shutdown(sctx)
		cancel()
	}
	a.wg.Wait()
}

// watchJobs follows the jobs directory the Prolog and Epilog maintain: the
// job tag goes on every point from the next tick, job_start and job_end
// events mark the job's span.
func (a *nodeAgent) watchJobs(ctx context.Context) {
	w := slurm.NewWatcher(a.jobsDir)
	iv := a.c.collector.Interval()
	t := time.NewTicker(min(iv, time.Second))
	defer t.Stop()
	var lastErr string
	for {
		ch, changed, err := w.Poll(time.Now())
		if err != nil && err.Error() != lastErr {
			a.log.Warn("jobs directory", "dir", a.jobsDir, "err", err)
		}
		lastErr = ""
		if err != nil {
			lastErr = err.Error()
		}
		if changed {
			var tags []point.Tag
			if ch.Tag != "" {
				tags = []point.Tag{{Key: "job", Value: ch.Tag}}
			}
			a.c.collector.SetTags(tags...)
			a.c.collector.Emit(ch.Events...)
			ids := make([]string, len(ch.Jobs))
			for i, j := range ch.Jobs {
				ids[i] = j.ID
			}
			a.mu.Lock()
			a.jobs = ids
			a.mu.Unlock()
			a.log.Info("slurm jobs on the node", "jobs", ch.Tag)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// reload applies the configuration file again. Sources and sinks whose
// configuration did not change are kept as they are (their state, such as
// the previous CPU times that usage is derived from, goes on); the others
// are replaced between two ticks. What cannot change while running (the
// interval, the host tag, stdout) keeps its value, with a warning.
func (a *nodeAgent) reload() error {
	cfg, err := loadConfig(a.cmd, a.configPath)
	if err != nil {
		return err
	}
	if err := applyInfluxFlags(a.cmd, cfg); err != nil {
		return err
	}
	// Only this goroutine reloads; the lock guards the fields the HTTP
	// endpoint reads, and is not held while the InfluxDB sink drains.
	a.mu.Lock()
	old, engine, curSources, curSinks := a.cfg, a.engine, a.sources, a.sinks
	a.mu.Unlock()
	var fixed []string
	if cfg.Interval != old.Interval || cfg.Deadline != old.Deadline {
		cfg.Interval, cfg.Deadline = old.Interval, old.Deadline
		fixed = append(fixed, "interval", "deadline")
	}
	if cfg.Host != old.Host {
		cfg.Host = old.Host
		fixed = append(fixed, "host")
	}
	if cfg.Sinks.Stdout != old.Sinks.Stdout {
		cfg.Sinks.Stdout = old.Sinks.Stdout
		fixed = append(fixed, "sinks.stdout")
	}
	if len(fixed) > 0 {
		a.log.Warn("reload: these settings take effect at the next start", "keys", strings.Join(fixed, ", "))
	}

	fresh, err := buildSources(cfg)
	if err != nil {
		return err
	}
	srcs, kept := make([]collectors.Source, 0, len(fresh)), 0
	byName := map[string]collectors.Source{}
	for _, s := range curSources {
		byName[s.Name()] = s
	}
	var unused, added []collectors.Source
	for _, s := range fresh {
		if o, ok := byName[s.Name()]; ok && reflect.DeepEqual(sourceConfig(old, s.Name()), sourceConfig(cfg, s.Name())) {
			srcs = append(srcs, o)
			unused = append(unused, s)
			kept++
			continue
		}
		srcs = append(srcs, s)
		added = append(added, s)
	}
	closeSources(unused)

	sinks := append([]collectors.Sink(nil), curSinks...)
	replace := func(old, next collectors.Sink) {
		for i, s := range sinks {
			if s == old {
				if next == nil {
					sinks = append(sinks[:i], sinks[i+1:]...)
				} else {
					sinks[i] = next
				}
				return
			}
		}
		if next != nil {
			sinks = append(sinks, next)
		}
	}
	if !reflect.DeepEqual(cfg.Alerts, old.Alerts) {
		eng, err := a.alertSinks(cfg)
		if err != nil {
			closeSources(added)
			return err
		}
		var prev, next collectors.Sink
		if engine != nil {
			prev = engine
		}
		if eng != nil {
			next = eng
		}
		replace(prev, next)
		engine = eng
		a.log.Info("reload: alert rules replaced", "rules", len(cfg.Alerts.Rules))
	}
	if !reflect.DeepEqual(cfg.Sinks.Influx, old.Sinks.Influx) {
		if err := a.reloadInflux(old, cfg, replace); err != nil {
			a.log.Error("reload: InfluxDB sink", "err", err)
			cfg.Sinks.Influx = old.Sinks.Influx
		}
	}
	a.c.collector.Reconfigure(srcs, sinks)
	a.mu.Lock()
	a.cfg, a.engine, a.sources, a.sinks = cfg, engine, srcs, sinks
	a.c.cfg = cfg
	a.mu.Unlock()
	a.log.Info("configuration reloaded", "config", a.configPath, "sources", len(srcs), "kept", kept, "sinks", len(sinks))
	return nil
}

// reloadInflux applies a changed sinks.influx: through the handoff when a
// sink exists (the spool's lock allows one sink at a time), by adding or
// removing the sink otherwise.
func (a *nodeAgent) reloadInflux(old, cfg *configs.Config, replace func(old, next collectors.Sink)) error {
	open := func(c *configs.Config) func() (collectors.Sink, error) {
		return func() (collectors.Sink, error) {
			s, err := startInfluxSink(c)
			if err != nil {
				return nil, err
			}
			s.SetMetrics(a.c.collector.Emit)
			a.mu.Lock()
			a.c.influx = s
			a.mu.Unlock()
			return s, nil
		}
	}
	switch {
	case a.c.handoff != nil && cfg.Sinks.Influx.Enabled():
		// Closing drains the old sink for up to 10 s; the ticks go on, and
		// their points wait in the handoff.
		return a.c.handoff.Replace(open(cfg), open(old))
	case a.c.handoff != nil:
		replace(a.c.handoff, nil) // the collector closes it
		a.mu.Lock()
		a.c.handoff, a.c.influx = nil, nil
		a.mu.Unlock()
		return nil
	case cfg.Sinks.Influx.Enabled():
		s, err := open(cfg)()
		if err != nil {
			return err
		}
		a.c.handoff = agent.NewHandoff(s)
		replace(nil, a.c.handoff)
		return nil
	}
	return nil
}

// sourceConfig is the part of the configuration a source is built from,
// to tell whether a reload changed it.
func sourceConfig(cfg *configs.Config, name string) any {
	roots := [2]string{cfg.SysfsRoot, cfg.ProcfsRoot}
	switch name {
	case "host":
		return []any{roots, cfg.Sources.Host}
	case "hwmon":
		return []any{roots, cfg.Sources.Hwmon}
	case "cpufreq":
		return []any{roots, cfg.Sources.Cpufreq}
	case "rapl":
		return []any{roots, cfg.Sources.Rapl}
	case "nvme":
		return []any{roots, cfg.Sources.Nvme}
	case "nvml":
		return cfg.Sources.Nvml
	}
	if n, ok := strings.CutPrefix(name, "pdu:"); ok {
		for _, p := range cfg.Sources.PDUs {
			if p.Name == n {
				return p
			}
		}
	}
	if n, ok := strings.CutPrefix(name, "tank:"); ok {
		for _, t := range cfg.Sources.Tanks {
			if t.Name == n {
				return t
			}
		}
	}
	return nil
}

func (a *nodeAgent) currentEngine() *alerts.Engine {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.engine
}

func (a *nodeAgent) currentJobs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.jobs...)
}

// agentAlerts serves /alerts from the alert engine.
func (a *nodeAgent) agentAlerts() []agent.Rule {
	eng := a.currentEngine()
	if eng == nil {
		return nil
	}
	var out []agent.Rule
	for _, r := range eng.Status() {
		ar := agent.Rule{Name: r.Name, Severity: r.Severity, Field: r.Field, Alerts: []agent.Alert{}}
		for _, s := range r.Alerts {
			al := agent.Alert{Measurement: s.Measurement, Tags: map[string]string{}, Firing: s.Firing, Since: s.Since}
			for _, t := range s.Tags {
				al.Tags[t.Key] = t.Value
			}
			if s.HasValue {
				v, th := s.Value, s.Threshold
				al.Value, al.Threshold = &v, &th
			}
			ar.Alerts = append(ar.Alerts, al)
		}
		out = append(out, ar)
	}
	return out
}

// promAlerts exports the alert engine's states as metrics.
func (a *nodeAgent) promAlerts() []prom.AlertRule {
	eng := a.currentEngine()
	if eng == nil {
		return nil
	}
	var out []prom.AlertRule
	for _, r := range eng.Status() {
		pr := prom.AlertRule{Name: r.Name, Severity: r.Severity}
		for _, s := range r.Alerts {
			pr.Alerts = append(pr.Alerts, prom.Alert{Measurement: s.Measurement, Tags: s.Tags, Firing: s.Firing})
		}
		out = append(out, pr)
	}
	return out
}

// sinkHealth describes the InfluxDB sink for /healthz.
func (a *nodeAgent) sinkHealth() map[string]agent.SinkHealth {
	a.mu.Lock()
	s := a.c.influx
	a.mu.Unlock()
	if s == nil {
		return nil
	}
	return map[string]agent.SinkHealth{"influx": influxHealth(s)}
}

func influxHealth(s *influx.Sink) agent.SinkHealth {
	st := s.Stats()
	ok, problem := s.Health()
	h := agent.SinkHealth{OK: ok, Problem: problem, SpoolDir: s.SpoolDir(),
		UnsentPoints: st.Spool.UnsentPoints, UnsentBytes: st.Spool.UnsentBytes,
		SentPointsTotal: st.SentPoints, RetriesTotal: st.Retries, DroppedPointsTotal: st.Spool.DroppedPoints,
		RejectedPointsTotal: st.RejectedPoints}
	if !st.Spool.Oldest.IsZero() {
		age := time.Since(st.Spool.Oldest).Seconds()
		h.OldestUnsentAgeS = &age
	}
	return h
}
