package node

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/hold"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// HoldOptions are heatsink run --hold's: the target, and where the model
// comes from.
type HoldOptions struct {
	Target hold.Target
	// FixedDuty runs the job at this duty instead of the controller's.
	FixedDuty *float64
	// ModelFrom is an earlier run directory of the same workload on this
	// node to take the model from; "" looks for the newest beside the new
	// run's directory (--out's parent).
	ModelFrom string
	// Period is the duty cycle's period; 0 takes it from the model
	// (hold.PeriodFor).
	Period time.Duration
}

// kindOf is the report's component kind for each kind --hold names.
var kindOf = map[string]string{"gpu_core": analysis.KindGPUCore, "gpu_mem": analysis.KindGPUMem,
	"cpu_package": analysis.KindCPU, "coolant": analysis.KindCoolant}

// holdModel finds the model of the target's component: from ModelFrom, or
// from the newest finished run of the same job on this host beside outDir.
// No model is not an error (the hold is then the plain pause, and the
// string says why); a ModelFrom that gives none is.
func holdModel(o HoldOptions, outDir, host string, job *rundir.Workload) (*hold.Model, string, rundir.Hold, error) {
	if o.ModelFrom != "" {
		m, err := ModelFromRun(o.ModelFrom, o.Target)
		if err != nil {
			return nil, "", rundir.Hold{}, fmt.Errorf("--hold-model: %w", err)
		}
		return &m, "", freeOf(o.ModelFrom), nil
	}
	if outDir == "" {
		return nil, hold.ErrNoModel.Error() + "; give --out so earlier runs beside it are found", rundir.Hold{}, nil
	}
	dirs, err := earlierRuns(filepath.Dir(filepath.Clean(outDir)), host, job)
	if err != nil {
		return nil, "", rundir.Hold{}, err
	}
	var why []string
	for _, d := range dirs {
		m, err := ModelFromRun(d, o.Target)
		if err == nil {
			return &m, "", freeOf(d), nil
		}
		why = append(why, err.Error())
	}
	if len(why) > 0 {
		return nil, hold.ErrNoModel.Error() + ": " + strings.Join(why, "; "), rundir.Hold{}, nil
	}
	return nil, hold.ErrNoModel.Error(), rundir.Hold{}, nil
}

// freeOf is the free run in dir's throughput, for the hold's record.
func freeOf(dir string) rundir.Hold {
	h := rundir.Hold{FreeRun: dir}
	if m, err := rundir.ReadMeta(dir); err == nil {
		h.FreeWorkPerS, h.FreeWorkUnit, h.FreeIterationsPerS = m.Throughput()
	}
	return h
}

// earlierRuns lists the finished, unheld runs of the same job on host in
// parent, newest first.
func earlierRuns(parent, host string, job *rundir.Workload) ([]string, error) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return nil, fmt.Errorf("look for earlier runs: %w", err)
	}
	type found struct {
		dir  string
		meta rundir.Meta
	}
	var runs []found
	for _, e := range ents {
		dir := filepath.Join(parent, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, rundir.MetaFile))
		if err != nil || !e.IsDir() {
			continue
		}
		var m rundir.Meta
		if json.Unmarshal(b, &m) != nil || m.Host != host || m.Status != "complete" || m.Hold != nil || m.Workload == nil {
			continue
		}
		if m.Workload.Name != job.Name || !slices.Equal(m.Workload.Command, job.Command) {
			continue
		}
		runs = append(runs, found{dir, m})
	}
	slices.SortFunc(runs, func(a, b found) int { return b.meta.Start.Compare(a.meta.Start) })
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.dir
	}
	return out, nil
}

// ModelFromRun analyses the run in dir and builds the hold's model from
// the load fit of the target's component (the hottest one, where several
// match): its idle mean, fitted start, rise and τ.
func ModelFromRun(dir string, t hold.Target) (hold.Model, error) {
	run, err := analysis.Load(dir)
	if err != nil {
		return hold.Model{}, err
	}
	rep := analysis.Analyze(run, analysis.DefaultOptions())
	var best *analysis.ComponentResult
	for i := range rep.Components {
		c := &rep.Components[i]
		if c.Kind != kindOf[t.Component] || c.LoadFit == nil || c.IdleMeanC == nil {
			continue
		}
		if t.Device != "" && !strings.HasSuffix(c.ID, ":"+t.Device) {
			continue
		}
		if best == nil || c.LoadFit.PlateauC > best.LoadFit.PlateauC {
			best = c
		}
	}
	if best == nil {
		return hold.Model{}, fmt.Errorf("run %s has no load fit of %s (heatsink report %s says why)", dir, t.Component, dir)
	}
	f := best.LoadFit
	share, tauFast := math.NaN(), math.NaN()
	if f.FastShare != nil {
		share = *f.FastShare
	}
	if f.TauFastS != nil {
		tauFast = *f.TauFastS
	}
	src := fmt.Sprintf("run %s (%s, %s)", rep.Run.ID, best.ID, filepath.Base(dir))
	m, err := hold.FromLoadFit(*best.IdleMeanC, f.StartC, f.RiseC, share, f.TauS, tauFast, src)
	if err != nil {
		return hold.Model{}, err
	}
	return m, nil
}
