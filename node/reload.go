package node

import (
	"reflect"
	"strings"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
)

// reload applies the configuration again. Sources and sinks whose
// configuration did not change are kept as they are (their state, such as
// the previous CPU times that usage is derived from, goes on); the others
// are replaced between two ticks. What cannot change while running (the
// interval, the host tag, stdout) keeps its value, with a warning.
func (a *Agent) reload() error {
	cfg, err := a.o.Load()
	if err != nil {
		return err
	}
	// Only this goroutine reloads; the lock guards the fields the HTTP
	// endpoint reads, and is not held while the InfluxDB sink drains.
	a.mu.Lock()
	old, engine, cur, sinks := a.cfg, a.engine, a.built, append([]collectors.Sink(nil), a.sinks...)
	a.mu.Unlock()
	a.keepFixed(old, cfg)
	fresh, err := buildSources(cfg)
	if err != nil {
		return err
	}
	bs, added, kept := keepUnchanged(old, cfg, cur, fresh)
	replace := func(prev, next collectors.Sink) { sinks = replaceSink(sinks, prev, next) }
	if !reflect.DeepEqual(alerts.ConfigOf(cfg), alerts.ConfigOf(old)) {
		eng, err := newEngine(cfg, a.c.outbox, a.c.recordEvent)
		if err != nil {
			closeBuilt(added)
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
		a.log.Info("reload: alert rules replaced", "rules", len(alerts.ConfigOf(cfg).Rules))
	}
	if oi, ni := influx.ConfigOf(old), influx.ConfigOf(cfg); !reflect.DeepEqual(oi, ni) {
		if err := a.reloadInflux(oi, ni, replace); err != nil {
			a.log.Error("reload: InfluxDB sink", "err", err)
			*ni = *oi
		}
	}
	srcs := make([]collectors.Source, len(bs))
	for i, b := range bs {
		srcs[i] = b.src
	}
	a.c.collector.Reconfigure(srcs, sinks)
	a.mu.Lock()
	a.cfg, a.engine, a.built, a.sinks = cfg, engine, bs, sinks
	a.c.cfg = cfg
	a.mu.Unlock()
	a.log.Info("configuration reloaded", "config", a.o.ConfigPath, "sources", len(srcs), "kept", kept, "sinks", len(sinks))
	return nil
}

// keepFixed puts back in cfg what a running collection cannot change.
func (a *Agent) keepFixed(old, cfg *configs.Config) {
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
}

// keepUnchanged returns the sources to run after a reload: of the fresh
// ones, those whose part of the configuration is unchanged are replaced by
// the running source of that name (the fresh one is closed); added are
// the fresh sources kept.
func keepUnchanged(old, cfg *configs.Config, cur, fresh []built) (out, added []built, kept int) {
	byName := map[string]built{}
	for _, b := range cur {
		byName[b.src.Name()] = b
	}
	var unused []built
	for _, b := range fresh {
		name := b.src.Name()
		if o, ok := byName[name]; ok && o.kind.Name == b.kind.Name &&
			reflect.DeepEqual(sourcePart(old, o.kind, name), sourcePart(cfg, b.kind, name)) {
			out = append(out, o)
			unused = append(unused, b)
			kept++
			continue
		}
		out = append(out, b)
		added = append(added, b)
	}
	closeBuilt(unused)
	return out, added, kept
}

// replaceSink replaces prev by next in sinks: removes prev when next is
// nil, appends next when prev is absent.
func replaceSink(sinks []collectors.Sink, prev, next collectors.Sink) []collectors.Sink {
	for i, s := range sinks {
		if s == prev {
			if next == nil {
				return append(sinks[:i], sinks[i+1:]...)
			}
			sinks[i] = next
			return sinks
		}
	}
	if next != nil {
		sinks = append(sinks, next)
	}
	return sinks
}

// reloadInflux applies a changed sinks.influx: through the handoff when a
// sink exists (the spool's lock allows one sink at a time), by adding or
// removing the sink otherwise.
func (a *Agent) reloadInflux(old, cfg *influx.Config, replace func(prev, next collectors.Sink)) error {
	open := func(c *influx.Config) func() (collectors.Sink, error) {
		return func() (collectors.Sink, error) {
			s, err := StartInflux(c)
			if err != nil {
				return nil, err
			}
			a.mu.Lock()
			a.c.influx = s
			a.mu.Unlock()
			return s, nil
		}
	}
	switch {
	case a.c.handoff != nil && cfg.Enabled():
		// Closing drains the old sink for up to 10 s; the ticks go on, and
		// their points wait in the handoff.
		return a.c.handoff.Replace(open(cfg), open(old))
	case a.c.handoff != nil:
		replace(a.c.handoff, nil) // the collector closes it
		a.mu.Lock()
		a.c.handoff, a.c.influx = nil, nil
		a.mu.Unlock()
		return nil
	case cfg.Enabled():
		s, err := open(cfg)()
		if err != nil {
			return err
		}
		a.c.handoff = agent.NewHandoff(s)
		replace(nil, a.c.handoff)
	}
	return nil
}
