package node

import (
	"context"
	"time"

	"github.com/heatsink-hpc/heatsink/slurm"
)

// watchJobs follows the jobs directory the Prolog and Epilog maintain: the
// job and jobs tags go on the points from the next tick (a GPU's points
// carry only the jobs holding that GPU; see slurm.JobTags), job_start and
// job_end events mark the job's span.
func (a *Agent) watchJobs(ctx context.Context) {
	w := slurm.NewWatcher(a.o.JobsDir)
	iv := a.c.collector.Interval()
	t := time.NewTicker(min(iv, time.Second))
	defer t.Stop()
	var lastErr string
	for {
		ch, changed, err := w.Poll(time.Now())
		if err != nil && err.Error() != lastErr {
			a.log.Warn("jobs directory", "dir", a.o.JobsDir, "err", err)
		}
		lastErr = ""
		if err != nil {
			lastErr = err.Error()
		}
		if changed {
			a.jobsChanged(ch)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (a *Agent) jobsChanged(ch slurm.Change) {
	if len(ch.Jobs) == 0 {
		a.c.collector.SetTagger(nil)
	} else {
		a.c.collector.SetTagger(ch.Tags)
	}
	a.c.outbox.Emit(ch.Events...)
	ids := make([]string, len(ch.Jobs))
	for i, j := range ch.Jobs {
		ids[i] = j.ID
	}
	a.mu.Lock()
	a.jobs = ids
	a.mu.Unlock()
	a.log.Info("slurm jobs on the node", "jobs", ch.Tag)
}
