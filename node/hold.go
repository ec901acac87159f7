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
//
// A free run whose load lasted under three time constants has no load fit
// (its plateau is not in the data), but the fit's rough estimate is taken
// where it is tight enough (roughEnough), and the model's source says it
// is rough. That is safer than the alternative, the plain pause's
// sawtooth: the controller starts cautious (twice the model's gain until
// the first second has measured it), refines the gain online, and falls
// back to the pause by itself when the plant contradicts the model.
func ModelFromRun(dir string, t hold.Target) (hold.Model, error) {
	run, err := analysis.Load(dir)
	if err != nil {
		return hold.Model{}, err
	}
	rep := analysis.Analyze(run, analysis.DefaultOptions())
	best, f := hottestFit(rep, t, func(c *analysis.ComponentResult) *analysis.LoadFit { return c.LoadFit })
	rough := ""
	if best == nil {
		if best, f = hottestFit(rep, t, func(c *analysis.ComponentResult) *analysis.LoadFit { return c.RoughLoadFit }); best != nil {
			why := best.NotComputed["load_fit"]
			if err := roughEnough(f); err != nil {
				return hold.Model{}, fmt.Errorf("run %s has no load fit of %s (%s), and its rough estimate will not do: %w", dir, best.ID, why, err)
			}
			rough = "; rough: " + why
		}
	}
	if best == nil {
		return hold.Model{}, fmt.Errorf("run %s has no load fit of %s (heatsink report %s says why)", dir, t.Component, dir)
	}
	share, tauFast := math.NaN(), math.NaN()
	if f.FastShare != nil {
		share = *f.FastShare
	}
	if f.TauFastS != nil {
		tauFast = *f.TauFastS
	}
	src := fmt.Sprintf("run %s (%s, %s%s)", rep.Run.ID, best.ID, filepath.Base(dir), rough)
	m, err := hold.FromLoadFit(*best.IdleMeanC, f.StartC, f.RiseC, share, f.TauS, tauFast, src)
	if err != nil {
		return hold.Model{}, err
	}
	return m, nil
}

// hottestFit is the component of the target's kind (and device) whose fit,
// as fit picks it, has the highest plateau; nil where none has one.
func hottestFit(rep *analysis.Report, t hold.Target, fit func(*analysis.ComponentResult) *analysis.LoadFit) (*analysis.ComponentResult, *analysis.LoadFit) {
	var best *analysis.ComponentResult
	var bf *analysis.LoadFit
	for i := range rep.Components {
		c := &rep.Components[i]
		f := fit(c)
		if c.Kind != kindOf[t.Component] || f == nil || c.IdleMeanC == nil {
			continue
		}
		if t.Device != "" && !strings.HasSuffix(c.ID, ":"+t.Device) {
			continue
		}
		if bf == nil || f.PlateauC > bf.PlateauC {
			best, bf = c, f
		}
	}
	return best, bf
}

// roughEnough accepts a load fit refused for a short load as the hold's
// model where the data pin it down as far as the controller needs: τ
// within a factor 10 (what the report asks of any fit) and the rise's
// interval within ±50 % of the rise, the model error the controller is
// built to absorb (docs/hold.md's simulation: rises and τ 50 % off).
func roughEnough(f *analysis.LoadFit) error {
	switch {
	case !(f.TauLoS > 0 && f.TauHiS/f.TauLoS <= 10):
		return fmt.Errorf("its τ %.3g s has the interval [%.3g, %.3g] s, over a factor 10", f.TauS, f.TauLoS, f.TauHiS)
	case !(f.RiseC > 0 && f.RiseHiC <= 1.5*f.RiseC && f.RiseLoC >= f.RiseC/1.5):
		return fmt.Errorf("its rise %.3g °C has the interval [%.3g, %.3g] °C, beyond the ±50 %% the controller absorbs", f.RiseC, f.RiseLoC, f.RiseHiC)
	}
	return nil
}
