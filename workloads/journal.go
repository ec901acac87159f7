package workloads

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
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

// event records ev, stamped with this run: as a point always, and in
// run.json when inMeta, with attrs.
func (j *journal) event(ev schema.EventPoint, attrs map[string]string, inMeta bool) {
	t, kind, phase, msg := ev.Time, ev.Kind, ev.Phase, ev.Message
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.emit != nil {
		ev.Run = j.runID
		j.emit(ev.Point())
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
	j.event(schema.EventPoint{Time: t, Kind: schema.KindPhaseStart, Phase: name, Message: msg}, nil, false)
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
	j.event(schema.EventPoint{Time: t, Kind: schema.KindPhaseEnd, Phase: name, Message: msg}, nil, false)
	j.save(true)
}

// iteration records one finished iteration of the job.
func (j *journal) iteration(workload string, it rundir.Iteration) {
	j.event(schema.EventPoint{Time: it.End, Kind: schema.KindIterationEnd, Phase: PhaseLoad, Message: iterationMessage(it),
		Iteration: it.N, Ended: true, ExitStatus: it.ExitStatus, RuntimeS: it.RuntimeS}, nil, false)
	j.mu.Lock()
	if j.emit != nil {
		j.emit(schema.IterationPoint{Time: it.End, Run: j.runID, Workload: workload, N: it.N,
			RuntimeS: it.RuntimeS, ExitStatus: it.ExitStatus, Metrics: it.Metrics}.Point())
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
