package report

import (
	"fmt"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// holdSection is how heatsink run --hold held its component: against the
// set point, at what duty, and at what cost in throughput.
func holdSection(rep *analysis.Report) section {
	h := rep.Hold
	s := section{Title: "Hold: " + h.Target}
	how := "the plain pause (" + orDash(h.NoModel) + ")"
	if m := h.Model; m != nil {
		how = fmt.Sprintf("the model from %s: idle %.1f °C, rise %.1f °C of which %.1f °C within a second, τ %.1f s; its rises refined ×%.2f as it ran",
			orDash(m.Source), m.BaseC, m.FastC+m.SlowC, m.FastC, m.TauS, m.Gain)
	}
	lead := fmt.Sprintf("Held at %g °C with %s, pacing the job with a duty cycle of period %g s; mode at the end: %s.", h.SetC, how, h.PeriodS, h.Mode)
	if h.Fallback != "" {
		lead += " It fell back to the plain pause: " + h.Fallback + "."
	}
	s.Lead = append(s.Lead, lead)
	s.Table = &table{Head: []string{"set °C", "mean |T−Tset| °C", "p95 °C", "overshoot °C", "peak °C", "readings", "duty", "work/s", "vs free"}}
	work := dash
	if h.WorkPerS != nil {
		work = siPrefix(*h.WorkPerS) + " " + h.WorkUnit
	} else if h.IterationsPerS != nil {
		work = fmt.Sprintf("%.3g iterations", *h.IterationsPerS)
	}
	duty := h.Duty
	s.Table.Rows = append(s.Table.Rows, []string{fmt.Sprintf("%g", h.SetC), num(h.MeanAbsC, 2), num(h.P95AbsC, 2),
		num(&h.OvershootC, 2), num(h.PeakC, 1), fmt.Sprint(h.Readings), num(&duty, 3), work, num(h.VsFree, 3)})
	s.Paras = append(s.Paras, fmt.Sprintf("Mean |T−Tset| and its 95th percentile from %.0f s (3τ) after the load started; overshoot: the highest reading above the set point once it had been reached. Duty: the share of the load the job ran. vs free: this run's throughput against the free run the model came from (%s).", h.SettleS, orDash(h.FreeRun)))
	return s
}
