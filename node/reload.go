package node

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
)

// reload applies the configuration again, if the file is complete and
// deliberate (reloadguard.go): read until it stopped changing, ending with
// a newline, parsed, and dropping no key of the running file (a sink, an
// alert rule, a PDU) merely by not mentioning it;
// otherwise the running configuration stays and the error says why.
// Sources and sinks whose configuration did not change are kept as they
// are (their state, such as the previous CPU times that usage is derived
// from, goes on); the others are replaced between two ticks: a registered
// sink whose section under sinks: changed is reopened (reloadSinks), and
// one that fails to open leaves the running one in place. What cannot
// change while running (the interval, the host tag) keeps its value, with
// a warning.
func (a *Agent) reload(ctx context.Context) error {
	// Only one reload or sink retry at a time: both replace sinks.
	a.reloading.Lock()
	defer a.reloading.Unlock()
	var file []byte
	if a.o.ConfigPath != "" {
		var err error
		if file, err = readSettled(ctx, a.o.ConfigPath, settleGap, settleLimit); err != nil {
			return err
		}
		if err := endsMidLine(a.o.ConfigPath, file); err != nil {
			return err
		}
	}
	cfg, err := a.o.Load(file)
	if err != nil {
		return err
	}
	// The lock guards the fields the HTTP endpoint reads, and is not held
	// while a sink drains.
	a.mu.Lock()
	old, engine, cur, sinks := a.cfg, a.engine, a.built, append([]collectors.Sink(nil), a.sinks...)
	a.mu.Unlock()
	if err := refuseRemovals(old, cfg); err != nil {
		return err
	}
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
	cs, opens := a.reloadSinks(old, cfg, replace)
	srcs := make([]collectors.Source, len(bs))
	for i, b := range bs {
		srcs[i] = b.src
	}
	a.c.collector.Reconfigure(srcs, sinks)
	a.mu.Lock()
	a.cfg, a.engine, a.built, a.sinks = cfg, engine, bs, sinks
	a.c.cfg, a.c.configured = cfg, cs
	a.mu.Unlock()
	// A sink turned on opens now that the collector writes to its handoff,
	// which holds the points while it waits for its predecessor to drain.
	for _, open := range opens {
		open()
	}
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
// the configured sinks to run, and the opens to run once the collector
// writes to them: a kind turned on gets a handoff holding its points and
// opens after the reload (openPending), one turned off is removed (the
// collector drains and closes it), one whose section changed is replaced.
// A changed section that fails to open leaves the running sink in place,
// and its section in cfg is put back to the running one's, so that cfg
// says what runs and the next reload tries again.
func (a *Agent) reloadSinks(old, cfg *configs.Config, replace func(prev, next collectors.Sink)) ([]*configured, []func()) {
	a.mu.Lock()
	running := map[string]*configured{}
	for _, e := range a.c.configured {
		running[e.kind.Name] = e
	}
	a.mu.Unlock()
	env := envOf(cfg)
	var out []*configured
	var opens []func()
	for _, k := range registry.SinkKinds() {
		prev, next := sinkSection(old, k), sinkSection(cfg, k)
		e := running[k.Name]
		if reflect.DeepEqual(prev, next) {
			if e != nil {
				out = append(out, e)
			}
			continue
		}
		ne, open, err := a.reloadSink(k, env, e, prev, next, replace)
		switch {
		case err != nil:
			a.log.Error("reload: sink not replaced; it goes on as configured before", "sink", k.Name, "err", err)
			reflect.ValueOf(next).Elem().Set(reflect.ValueOf(prev).Elem())
		case open != nil:
			opens = append(opens, open)
		default:
			a.log.Info("reload: sink reconfigured", "sink", k.Name, "on", ne != nil)
		}
		if ne != nil {
			out = append(out, ne)
		}
	}
	return out, opens
}

// reloadSink applies kind k's changed section (prev to next) to e, its
// running sink (nil for none), and returns the sink to run (nil for none)
// and, for a sink turned on, its open to run after the reload.
func (a *Agent) reloadSink(k registry.SinkKind, env registry.Env, e *configured, prev, next any,
	replace func(prev, next collectors.Sink)) (*configured, func(), error) {
	on := k.Enabled(next)
	switch {
	case e == nil && !on:
		return nil, nil, nil
	case e == nil:
		// Turned on, or back on after a removal whose sink may still be
		// draining (and holding the spool's lock): it opens once that one
		// has closed, its points held meanwhile, so no tick is lost and a
		// failure is retried rather than run without.
		h := agent.NewHandoff(nil)
		ne := &configured{kind: k, out: h, handoff: h, problem: "opening"}
		replace(nil, h)
		return ne, func() { a.openPending(ne, env, next) }, nil
	case !on:
		if e.handoff != nil {
			a.mu.Lock()
			a.draining[k.Name] = e.handoff
			a.mu.Unlock()
		}
		replace(e.out, nil) // the collector drains and closes it
		return nil, nil, nil
	case e.handoff != nil:
		// The old sink must close before the new one opens (the spool's
		// lock): closing drains it (InfluxDB: up to 10 s) while the ticks
		// go on, their points waiting in the handoff. When the new
		// section fails to open, the old one is opened again.
		var replaced bool
		open := func(sec any, isNext bool) func() (collectors.Sink, error) {
			return func() (collectors.Sink, error) {
				a.waitDrained(k.Name)
				s, err := k.Build(env, sec)
				if err != nil {
					return nil, err
				}
				a.mu.Lock()
				e.sink, e.problem = s, ""
				a.mu.Unlock()
				replaced = isNext
				return s, nil
			}
		}
		err := e.handoff.Replace(open(next, true), open(prev, false))
		if e.handoff.Sink() == nil {
			a.mu.Lock()
			e.sink = nil // both failed: the handoff holds the points, and retryPending tries again
			e.problem = fmt.Sprintf("not open: a reload could open neither the new nor the old configuration: %v; retried every %v, points wait in memory", err, retryEvery)
			a.mu.Unlock()
		}
		if replaced && err != nil {
			// The new sink runs; what went wrong was closing the old one.
			a.log.Warn("reload: sink replaced; closing the old one failed", "sink", k.Name, "err", err)
			return e, nil, nil
		}
		return e, nil, err
	default:
		// Opened before the old one closes, so a failure changes nothing;
		// the collector swaps them between two ticks and closes the old.
		ne, err := openSink(k, env, next, true)
		if err != nil {
			return e, nil, err
		}
		replace(e.out, ne.out)
		return ne, nil, nil
	}
}
