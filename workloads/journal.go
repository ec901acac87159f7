package workloads

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// journal records the run's timeline twice: as points (measurements `event`
// and `iteration`), so an analysis can work from InfluxDB alone, and in
// run.json, so a run directory is self-contained. run.json is rewritten at
// every phase boundary and guard action, and after iterations at most every
// saveEvery, so a long run of short iterations does not rewrite a growing
// file thousands of times.
type journal struct {
	mu       sync.Mutex
	emit     func(...point.Point)
	runID    string
	dir      string
	meta     *rundir.Meta
	log      *slog.Logger
	lastSave time.Time
	saveErr  error
}

const saveEvery = 5 * time.Second

func (j *journal) event(t time.Time, kind, phase, msg string, attrs map[string]string, inMeta bool, fields func(*point.Point)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.emit != nil {
		p := point.New("event", t)
		p.AddTag("run", j.runID).AddTag("kind", kind).AddTag("phase", phase)
		p.AddString("message", msg)
		if fields != nil {
			fields(&p)
		}
		j.emit(p)
	}
	if inMeta && j.meta != nil {
		if phase != "" {
			if attrs == nil {
				attrs = map[string]string{}
			}
			attrs["phase"] = phase
		}
		j.meta.Events = append(j.meta.Events, rundir.Event{Time: t, Kind: kind, Message: msg, Attrs: attrs})
		j.saveLocked()
	}
}

func (j *journal) phaseStart(t time.Time, name, msg string) {
	j.mu.Lock()
	if j.meta != nil {
		j.meta.Phases = append(j.meta.Phases, rundir.Phase{Name: name, Start: t})
	}
	j.mu.Unlock()
	j.event(t, "phase_start", name, msg, nil, false, nil)
	j.save(true)
}

func (j *journal) phaseEnd(t time.Time, name, msg string) {
	j.mu.Lock()
	if j.meta != nil {
		for i := len(j.meta.Phases) - 1; i >= 0; i-- {
			if j.meta.Phases[i].Name == name && j.meta.Phases[i].End == nil {
				end := t
				j.meta.Phases[i].End = &end
				break
			}
		}
	}
	j.mu.Unlock()
	j.event(t, "phase_end", name, msg, nil, false, nil)
	j.save(true)
}

// iteration records one finished iteration of the job.
func (j *journal) iteration(workload string, it rundir.Iteration) {
	j.event(it.End, "iteration_end", "load", iterationMessage(it), nil, false, func(p *point.Point) {
		p.AddInt("iteration", int64(it.N))
		p.AddInt("exit_status", int64(it.ExitStatus))
		p.AddFloat("runtime_s", it.RuntimeS)
	})
	j.mu.Lock()
	if j.emit != nil {
		p := point.New("iteration", it.End)
		p.AddTag("run", j.runID).AddTag("workload", workload)
		p.AddInt("n", int64(it.N))
		p.AddFloat("runtime_s", it.RuntimeS)
		p.AddInt("exit_status", int64(it.ExitStatus))
		for _, k := range slices.Sorted(maps.Keys(it.Metrics)) {
			p.AddFloat(k, it.Metrics[k])
		}
		j.emit(p)
	}
	if j.meta != nil && j.meta.Workload != nil {
		j.meta.Workload.Iterations = append(j.meta.Workload.Iterations, it)
	}
	j.mu.Unlock()
	j.save(false)
}

func iterationMessage(it rundir.Iteration) string {
	if it.Error != "" {
		return fmt.Sprintf("iteration %d: exit status %d after %.3fs: %s", it.N, it.ExitStatus, it.RuntimeS, it.Error)
	}
	return fmt.Sprintf("iteration %d: exit status %d after %.3fs", it.N, it.ExitStatus, it.RuntimeS)
}

// update changes run.json's description under the journal's lock.
func (j *journal) update(fn func(m *rundir.Meta)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.meta != nil {
		fn(j.meta)
	}
}

// save writes run.json when forced or when saveEvery has passed.
func (j *journal) save(force bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if force || time.Since(j.lastSave) >= saveEvery {
		j.saveLocked()
	}
}

func (j *journal) saveLocked() {
	if j.meta == nil || j.dir == "" {
		return
	}
	j.lastSave = time.Now()
	if err := rundir.WriteMeta(j.dir, j.meta); err != nil {
		if j.saveErr == nil {
			j.saveErr = err
		}
		j.log.Error("cannot record the run", "err", err)
	}
}

func (j *journal) err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.saveErr
}
