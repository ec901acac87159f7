package node

import (
	"cmp"
	"context"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors/prom"
	"github.com/heatsink-hpc/heatsink/registry"
)

func (a *Agent) currentEngine() *alerts.Engine {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.engine
}

func (a *Agent) currentJobs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.jobs...)
}

// agentAlerts serves /alerts from the alert engine.
func (a *Agent) agentAlerts() []agent.Rule {
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
func (a *Agent) promAlerts() []prom.AlertRule {
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

// sinkHealth describes, for /healthz, each configured sink whose kind
// has a Health. The sinks are read under the lock, which a reload holds to
// replace them, and asked outside it.
func (a *Agent) sinkHealth() map[string]agent.SinkHealth {
	type asked struct {
		kind registry.SinkKind
		sink registry.Sink
	}
	var as []asked
	out := map[string]agent.SinkHealth{}
	a.mu.Lock()
	for _, e := range a.c.configured {
		switch {
		case e.sink == nil:
			// Configured but not open, whether or not its kind describes
			// itself: the agent is not delivering what it was told to.
			out[e.kind.Name] = agent.SinkHealth{Problem: cmp.Or(e.problem, "not open (see the log); points wait in memory")}
		case e.kind.Health != nil:
			as = append(as, asked{e.kind, e.sink})
		}
	}
	a.mu.Unlock()
	for _, x := range as {
		out[x.kind.Name] = x.kind.Health(x.sink)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// reloadNoted reloads the configuration and notes the outcome for
// /healthz: a refused reload keeps the running configuration, logged and
// counted, and the agent is degraded until a later reload applies.
func (a *Agent) reloadNoted(ctx context.Context) {
	err := a.reload(ctx)
	now := time.Now()
	a.mu.Lock()
	a.reloads.ReloadsTotal++
	a.reloads.LastReload = &now
	a.reloads.Refused = ""
	if err != nil {
		a.reloads.RefusedTotal++
		a.reloads.Refused = err.Error()
	}
	a.mu.Unlock()
	if err != nil {
		a.log.Error("reload failed; the running configuration stays", "config", a.o.ConfigPath, "err", err)
	}
}

// configHealth is the reloads' part of /healthz.
func (a *Agent) configHealth() *agent.ConfigHealth {
	a.mu.Lock()
	defer a.mu.Unlock()
	h := a.reloads
	return &h
}
