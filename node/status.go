package node

import (
	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/prom"
	"time"
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

// sinkHealth describes the InfluxDB sink for /healthz.
func (a *Agent) sinkHealth() map[string]agent.SinkHealth {
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
