package node

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/hold"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// holdSet is a run's hold: the one --hold starts with the load, or the one
// a rule's hold: action switches on. One job has one duty cycle, so a run
// holds one component; a second hold is refused, saying which one holds.
// It is the collector sink that feeds the hold its readings.
type holdSet struct {
	mk func(t hold.Target, running bool) (*hold.Runtime, error)

	mu      sync.Mutex
	rt      *hold.Runtime
	target  hold.Target
	loading bool
	runID   string
	emit    func(...point.Point)
}

// prepare builds the --hold hold, if any, so that a bad one fails before
// the run starts, and how later holds are built.
func (h *holdSet) prepare(cfg *configs.Config, o RunOptions, r *workloads.Runner) error {
	var job *rundir.Workload
	if c := o.Runner.Command; c != nil {
		job = &rundir.Workload{Name: c.Name(), Command: c.Argv}
	} else {
		job = &rundir.Workload{Name: o.Runner.Workload.Name()}
	}
	ho := HoldOptions{}
	if o.Hold != nil {
		ho = *o.Hold
	}
	h.mk = func(t hold.Target, running bool) (*hold.Runtime, error) {
		opts := ho
		opts.Target = t
		var m *hold.Model
		var noModel string
		var free rundir.Hold
		if opts.FixedDuty == nil || opts.ModelFrom != "" {
			var err error
			if m, noModel, free, err = holdModel(opts, o.OutDir, HostOf(cfg), job); err != nil {
				return nil, err
			}
		}
		return hold.NewRuntime(hold.Config{Target: t, Model: m, NoModel: noModel, FixedDuty: opts.FixedDuty, Free: free,
			IntervalS: cfg.Interval.Seconds(), Running: running, Builtin: o.Runner.Command == nil, Period: opts.Period, Switch: r, Event: r.Event, Logger: slog.Default(),
			Record: func(s rundir.Hold) { r.UpdateMeta(func(m *rundir.Meta) { m.Hold = &s }) }})
	}
	if o.Hold == nil {
		return nil
	}
	rt, err := h.mk(o.Hold.Target, false)
	if err != nil {
		return err
	}
	h.rt, h.target = rt, o.Hold.Target
	return nil
}

func (h *holdSet) setRun(runID string, emit func(...point.Point)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runID, h.emit = runID, emit
	if h.rt != nil {
		h.rt.SetRun(runID, emit)
	}
}

// phase starts the hold with the load and ends it with the load.
func (h *holdSet) phase(started bool) {
	h.mu.Lock()
	h.loading = started
	rt := h.rt
	h.mu.Unlock()
	if rt == nil {
		return
	}
	if started {
		rt.Start()
	} else {
		rt.Stop()
	}
}

// hold switches a hold on for a rule (alerts.Holder through guardJob). It
// returns at once: the model is looked for in the background, and the
// hold starts now if the load runs, else with the load.
func (h *holdSet) hold(target string) error {
	t, err := hold.ParseTarget(target)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rt != nil || h.mk == nil {
		if h.target == t {
			return nil
		}
		return fmt.Errorf("the job's duty cycle already holds %s", h.target)
	}
	h.target = t
	go func() {
		rt, err := h.mk(t, true)
		if err != nil {
			slog.Error("hold: "+err.Error(), "hold", target)
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.rt = rt
		rt.SetRun(h.runID, h.emit)
		if h.loading {
			rt.Start()
		}
	}()
	return nil
}

// Write implements collectors.Sink, feeding the hold its readings.
func (h *holdSet) Write(points []point.Point) error {
	h.mu.Lock()
	rt := h.rt
	h.mu.Unlock()
	if rt == nil {
		return nil
	}
	return rt.Write(points)
}

// Flush implements collectors.Sink.
func (h *holdSet) Flush() error { return nil }

// Close implements collectors.Sink.
func (h *holdSet) Close() error { return nil }

// guardJob is the runner as the alert engine's job, with the hold: action.
type guardJob struct {
	*workloads.Runner
	holds *holdSet
}

// Hold implements alerts.Holder.
func (g guardJob) Hold(target string) error { return g.holds.hold(target) }
