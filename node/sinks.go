package node

import (
	"errors"
	"fmt"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
)

// configured is a sink a registered kind built from its section under
// sinks:, so that a reload can tell whether the section changed and
// /healthz can ask the kind about it.
type configured struct {
	kind registry.SinkKind
	// sink is what the kind built, what its Health describes; a reload
	// through the handoff replaces it (under Agent.mu), and it is nil
	// when neither the new nor the old section could be opened.
	sink registry.Sink
	// out is what the collector writes to: sink itself, or the handoff
	// standing for it.
	out collectors.Sink
	// handoff is set for an Exclusive kind in a collection that reloads,
	// and for a sink a reload turned on (it holds the points until the
	// sink opens).
	handoff *agent.Handoff
	// problem says, while sink is nil, why (under Agent.mu).
	problem string
}

const (
	// drainWait bounds how long a sink turned back on waits for its
	// removed predecessor to drain and close (InfluxDB: up to 10 s,
	// after the tick that stops writing to it).
	drainWait = 20 * time.Second
	// retryEvery is how often a configured sink that could not open is
	// tried again.
	retryEvery = 10 * time.Second
)

// openPending opens e, a sink behind a handoff holding its points, from
// section sec; a failure leaves the points held, says why in /healthz and
// is retried (retryPending).
func (a *Agent) openPending(e *configured, env registry.Env, sec any) {
	err := e.handoff.Replace(func() (collectors.Sink, error) {
		a.waitDrained(e.kind.Name)
		s, err := e.kind.Build(env, sec)
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, errors.New("its kind built no sink for an enabled section")
		}
		a.mu.Lock()
		e.sink, e.problem = s, ""
		a.mu.Unlock()
		return s, nil
	}, nil)
	if err != nil {
		a.mu.Lock()
		e.problem = fmt.Sprintf("not open: %v; retried every %v, points wait in memory", err, retryEvery)
		a.mu.Unlock()
		a.log.Error("sink could not open; it is retried, its points held meanwhile", "sink", e.kind.Name, "err", err)
		return
	}
	a.log.Info("sink open", "sink", e.kind.Name)
}

// retryPending tries again to open every configured sink that is not
// open, from the running configuration's section.
func (a *Agent) retryPending() {
	a.reloading.Lock()
	defer a.reloading.Unlock()
	a.mu.Lock()
	var pending []*configured
	for _, e := range a.c.configured {
		if e.sink == nil && e.handoff != nil {
			pending = append(pending, e)
		}
	}
	cfg := a.cfg
	a.mu.Unlock()
	for _, e := range pending {
		a.openPending(e, envOf(cfg), sinkSection(cfg, e.kind))
	}
}

// waitDrained waits, at most drainWait, for a removed sink of kind name
// to have closed, so that its successor can take what it held (the
// spool's lock).
func (a *Agent) waitDrained(name string) {
	a.mu.Lock()
	h := a.draining[name]
	a.mu.Unlock()
	if h == nil {
		return
	}
	select {
	case <-h.Closed():
		a.mu.Lock()
		if a.draining[name] == h {
			delete(a.draining, name)
		}
		a.mu.Unlock()
	case <-time.After(drainWait):
		a.log.Warn("the removed sink has not finished draining; opening its successor anyway", "sink", name, "waited", drainWait)
	}
}

// envOf is what every source and sink of cfg is built with.
func envOf(cfg *configs.Config) registry.Env {
	return registry.Env{SysfsRoot: cfg.SysfsRoot, ProcfsRoot: cfg.ProcfsRoot, Host: HostOf(cfg)}
}

// sinkSection is kind k's section of cfg.
func sinkSection(cfg *configs.Config, k registry.SinkKind) any { return cfg.Section("sinks." + k.Name) }

// HasSinks reports whether cfg turns on any registered sink, so a command
// can refuse to collect to nowhere before anything starts.
func HasSinks(cfg *configs.Config) bool {
	for _, k := range registry.SinkKinds() {
		if k.Enabled(sinkSection(cfg, k)) {
			return true
		}
	}
	return false
}

// buildSinks opens every registered sink cfg turns on, in the registry's
// order; reloadable puts an Exclusive one behind a handoff, which a reload
// can point at its successor. On an error the sinks already open are
// closed.
func buildSinks(cfg *configs.Config, reloadable bool) ([]*configured, error) {
	env := envOf(cfg)
	var out []*configured
	for _, k := range registry.SinkKinds() {
		sec := sinkSection(cfg, k)
		if !k.Enabled(sec) {
			continue
		}
		e, err := openSink(k, env, sec, reloadable)
		if err != nil {
			closeConfigured(out)
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// openSink builds kind k's sink of section sec.
func openSink(k registry.SinkKind, env registry.Env, sec any, reloadable bool) (*configured, error) {
	s, err := k.Build(env, sec)
	if err != nil {
		return nil, fmt.Errorf("sinks.%s: %w", k.Name, err)
	}
	if s == nil {
		return nil, fmt.Errorf("sinks.%s: its kind built no sink for an enabled section", k.Name)
	}
	e := &configured{kind: k, sink: s, out: s}
	if reloadable && k.Exclusive {
		e.handoff = agent.NewHandoff(s)
		e.out = e.handoff
	}
	return e, nil
}

func closeConfigured(es []*configured) error {
	var errs []error
	for _, e := range es {
		if err := e.out.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close sink %s: %w", e.kind.Name, err))
		}
	}
	return errors.Join(errs...)
}

// sinkOuts are what the collector writes to for es.
func sinkOuts(es []*configured) []collectors.Sink {
	out := make([]collectors.Sink, len(es))
	for i, e := range es {
		out[i] = e.out
	}
	return out
}
