package node

import (
	"reflect"
	"strings"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
)

// reload applies the configuration again. Sources and sinks whose
// configuration did not change are kept as they are (their state, such as
// the previous CPU times that usage is derived from, goes on); the others
// are replaced between two ticks: a registered sink whose section under
// sinks: changed is reopened (reloadSinks), and one that fails to open
// leaves the running one in place. What cannot change while running (the
// interval, the host tag) keeps its value, with a warning.
func (a *Agent) reload() error {
	cfg, err := a.o.Load()
	if err != nil {
		return err
	}
	// Only this goroutine reloads; the lock guards the fields the HTTP
	// endpoint reads, and is not held while a sink drains.
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
	cs := a.reloadSinks(old, cfg, replace)
	srcs := make([]collectors.Source, len(bs))
	for i, b := range bs {
		srcs[i] = b.src
	}
	a.c.collector.Reconfigure(srcs, sinks)
	a.mu.Lock()
	a.cfg, a.engine, a.built, a.sinks = cfg, engine, bs, sinks
	a.c.cfg, a.c.configured = cfg, cs
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

// reloadSinks applies the sections under sinks: that changed and returns
// the configured sinks to run: a kind turned on is opened, one turned off
// is removed (the collector closes it), one whose section changed is
// replaced. A sink that fails to open is logged and leaves the running one
// (or none) in place, and its section in cfg is put back to the running
// one's, so that cfg says what runs and the next reload tries again.
func (a *Agent) reloadSinks(old, cfg *configs.Config, replace func(prev, next collectors.Sink)) []*configured {
	a.mu.Lock()
	running := map[string]*configured{}
	for _, e := range a.c.configured {
		running[e.kind.Name] = e
	}
	a.mu.Unlock()
	env := envOf(cfg)
	var out []*configured
	for _, k := range registry.SinkKinds() {
		prev, next := sinkSection(old, k), sinkSection(cfg, k)
		e := running[k.Name]
		if reflect.DeepEqual(prev, next) {
			if e != nil {
				out = append(out, e)
			}
			continue
		}
		ne, err := a.reloadSink(k, env, e, prev, next, replace)
		if err != nil {
			a.log.Error("reload: sink not replaced; it goes on as configured before", "sink", k.Name, "err", err)
			reflect.ValueOf(next).Elem().Set(reflect.ValueOf(prev).Elem())
		} else {
			a.log.Info("reload: sink reconfigured", "sink", k.Name, "on", ne != nil)
		}
		if ne != nil {
			out = append(out, ne)
		}
	}
	return out
}

// reloadSink applies kind k's changed section (prev to next) to e, its
// running sink (nil for none), and returns the sink to run (nil for none).
func (a *Agent) reloadSink(k registry.SinkKind, env registry.Env, e *configured, prev, next any,
	replace func(prev, next collectors.Sink)) (*configured, error) {
	on := k.Enabled(next)
	switch {
	case e == nil && !on:
		return nil, nil
	case e == nil:
		ne, err := openSink(k, env, next, true)
		if err != nil {
			return nil, err
		}
		replace(nil, ne.out)
		return ne, nil
	case !on:
		replace(e.out, nil) // the collector closes it
		return nil, nil
	case e.handoff != nil:
		// The old sink must close before the new one opens (the spool's
		// lock): closing drains it (InfluxDB: up to 10 s) while the ticks
		// go on, their points waiting in the handoff. When the new
		// section fails to open, the old one is opened again.
		var replaced bool
		open := func(sec any, isNext bool) func() (collectors.Sink, error) {
			return func() (collectors.Sink, error) {
				s, err := k.Build(env, sec)
				if err != nil {
					return nil, err
				}
				a.mu.Lock()
				e.sink = s
				a.mu.Unlock()
				replaced = isNext
				return s, nil
			}
		}
		err := e.handoff.Replace(open(next, true), open(prev, false))
		if e.handoff.Sink() == nil {
			a.mu.Lock()
			e.sink = nil // both failed: the handoff holds the points
			a.mu.Unlock()
		}
		if replaced && err != nil {
			// The new sink runs; what went wrong was closing the old one.
			a.log.Warn("reload: sink replaced; closing the old one failed", "sink", k.Name, "err", err)
			return e, nil
		}
		return e, err
	default:
		// Opened before the old one closes, so a failure changes nothing;
		// the collector swaps them between two ticks and closes the old.
		ne, err := openSink(k, env, next, true)
		if err != nil {
			return e, err
		}
		replace(e.out, ne.out)
		return ne, nil
	}
}
