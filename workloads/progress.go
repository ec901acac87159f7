package workloads

import (
	"maps"
	"time"
)

// Progress is where a run stands, for a live display.
type Progress struct {
	// Phase is the phase under way, "" between phases.
	Phase   string
	Elapsed time.Duration
	// Planned is the phase's length: the protocol's duration, or for an
	// auto cooldown or a nominal wait its maximum (AtMost); 0 when the
	// phase lasts as long as a job run once does.
	Planned time.Duration
	AtMost  bool
	// Iterations finished so far, Failed of them failed; Metrics are the
	// last successful iteration's, runtime_s included.
	Iterations, Failed int
	Metrics            map[string]float64
}

// Progress reports where the run stands; safe to call while it runs.
func (r *Runner) Progress() Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := Progress{Phase: r.phase, Iterations: r.done, Failed: r.failed, Metrics: maps.Clone(r.metrics)}
	if r.phase != "" {
		p.Elapsed = time.Since(r.phaseStart)
	}
	proto, cfg := r.o.Protocol, r.o.Config
	switch r.phase {
	case PhaseBaseline:
		p.Planned = proto.Baseline
	case PhaseWaitNominal:
		p.Planned, p.AtMost = cfg.NominalMax, true
	case PhaseLoad:
		p.Planned = proto.Load
	case PhaseCooldown:
		p.Planned = proto.Cooldown
		if proto.CooldownAuto {
			p.Planned, p.AtMost = cfg.CooldownMax, true
		}
	}
	return p
}
