package analysis

import (
	"math"
	"strings"

	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// HoldResult is how `heatsink run --hold` held its component: run.json's
// record of the hold (the target, the model, mean |T−Tset| after 3τ, its
// 95th percentile, the overshoot, the share of the load the job ran) with
// the throughput the hold cost against the free run the model came from.
type HoldResult struct {
	rundir.Hold
	// WorkPerS and IterationsPerS are this run's over its load; VsFree is
	// WorkPerS against the free run's (iterations per second where the
	// job reports no work).
	WorkPerS       *float64 `json:"work_per_s"`
	WorkUnit       string   `json:"work_unit,omitempty"`
	IterationsPerS *float64 `json:"iterations_per_s"`
	VsFree         *float64 `json:"throughput_vs_free"`
	// AtS, ReadingC, SetAtC and DutyAt are the hold points (s since the
	// run's start), for the figure; not part of the JSON.
	AtS, ReadingC, SetAtC, DutyAt []float64 `json:"-"`
}

// minIterationsVsFree is the fewest successful iterations of a job that
// reports no work for its iterations per second to stand for its
// throughput: a command run once for the whole load (the bench's cupy)
// takes the load's length whatever its pace, so one iteration against one
// says nothing of what the hold cost.
const minIterationsVsFree = 3

// doneIterations counts the run's successful iterations.
func doneIterations(r *Run) int {
	n := 0
	if r.Meta.Workload != nil {
		for _, it := range r.Meta.Workload.Iterations {
			if it.ExitStatus == 0 && it.Error == "" {
				n++
			}
		}
	}
	return n
}

// Hold is the run's hold, nil when it had none.
func Hold(r *Run) *HoldResult {
	if r.Meta == nil || r.Meta.Hold == nil {
		return nil
	}
	h := &HoldResult{Hold: *r.Meta.Hold}
	h.WorkPerS, h.WorkUnit, h.IterationsPerS = r.Meta.Throughput()
	switch {
	case h.WorkPerS != nil && h.FreeWorkPerS != nil && *h.FreeWorkPerS > 0 && h.WorkUnit == h.FreeWorkUnit:
		v := *h.WorkPerS / *h.FreeWorkPerS
		h.VsFree = &v
	case h.IterationsPerS != nil && h.FreeIterationsPerS != nil && *h.FreeIterationsPerS > 0 && doneIterations(r) >= minIterationsVsFree:
		v := *h.IterationsPerS / *h.FreeIterationsPerS
		h.VsFree = &v
	}
	duty := r.Find(schema.Hold, schema.FieldDuty, nil)
	if len(duty) == 0 {
		return h
	}
	// One held component per run: its series share the ticks.
	temps := map[float64]float64{}
	for _, s := range r.Find(schema.Hold, schema.FieldTempC, nil) {
		for i, t := range s.T {
			temps[t] = s.V[i]
		}
	}
	sets := map[float64]float64{}
	for _, s := range r.Find(schema.Hold, schema.FieldSetpointC, nil) {
		for i, t := range s.T {
			sets[t] = s.V[i]
		}
	}
	d := duty[0]
	for i, t := range d.T {
		tc, ok := temps[t]
		if !ok {
			continue
		}
		h.AtS = append(h.AtS, t)
		h.ReadingC = append(h.ReadingC, tc)
		h.SetAtC = append(h.SetAtC, sets[t])
		h.DutyAt = append(h.DutyAt, d.V[i])
	}
	if h.GPUDuty == nil && len(d.T) > 1 {
		h.GPUDuty = gpuDutyOver(r, h.Target, d.T[0], d.T[len(d.T)-1])
	}
	return h
}

// gpuDutyOver is the held GPU's mean NVML utilisation, as a share, over
// the hold's ticks after the first (whose sample window began before the
// hold), from the recorded gpu points: run.json's gpu_duty for a run
// recorded before the hold kept it. Nil where the component is no GPU,
// the target names no GPU and the run has several, or none reported
// utilisation.
func gpuDutyOver(r *Run, target string, fromS, toS float64) *float64 {
	comp, _, _ := strings.Cut(target, "<=")
	kind, dev, _ := strings.Cut(comp, ":")
	if kind != "gpu_core" && kind != "gpu_mem" {
		return nil
	}
	util := r.Find(schema.GPU, schema.FieldUtilPct, func(s *Series) bool { return dev == "" || s.Tag(schema.TagGPU) == dev })
	if len(util) != 1 {
		return nil
	}
	var sum float64
	n := 0
	for i, t := range util[0].T {
		if t > fromS && t <= toS && !math.IsNaN(util[0].V[i]) {
			sum += util[0].V[i]
			n++
		}
	}
	if n == 0 {
		return nil
	}
	v := sum / float64(n) / 100
	return &v
}
