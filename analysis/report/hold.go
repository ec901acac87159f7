package report

import (
	"fmt"
	"strings"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// holdSection is how heatsink run --hold held its component: the answer
// first (how close to the set point, at what cost in throughput), then
// how (the model, the duty cycle, the mode), then the table.
func holdSection(rep *analysis.Report) section {
	h := rep.Hold
	s := section{Title: "Hold: " + h.Target}
	s.Lead = append(s.Lead, holdAnswer(h))
	how := "It paced the job with the plain pause (" + orDash(h.NoModel) + ")"
	if m := h.Model; m != nil {
		how = fmt.Sprintf("Its model came from %s: idle %.1f °C, rise %.1f °C of which %.1f °C within a second, τ %.1f s; the controller took its rises ×%.2f by the end",
			orDash(m.Source), m.BaseC, m.FastC+m.SlowC, m.FastC, m.TauS, m.Gain)
		if m.Gain == 2 {
			how += " (×2 is its cautious start: no steady stretch of τ refined it)"
		}
	}
	how += fmt.Sprintf(", with a duty cycle of period %.3g s; mode at the end: %s.", h.PeriodS, h.Mode)
	if h.Fallback != "" {
		how += " It fell back to the plain pause: " + h.Fallback + "."
	}
	s.Lead = append(s.Lead, how)
	if g := gpuDutySentence(h); g != "" {
		s.Lead = append(s.Lead, g)
	}
	s.Table = &table{Head: []string{"mean |T−Tset| °C", "p95 °C", "overshoot °C", "peak °C", "duty %", "GPU duty %", "work/s", "vs free %"}}
	work := dash
	if h.WorkPerS != nil {
		work = analysis.SI(*h.WorkPerS) + " " + h.WorkUnit
	} else if h.IterationsPerS != nil {
		work = fmt.Sprintf("%.3g iterations", *h.IterationsPerS)
	}
	s.Table.Rows = append(s.Table.Rows, []string{num(h.MeanAbsC, 2), num(h.P95AbsC, 2),
		num(&h.OvershootC, 2), num(h.PeakC, 1), num(percent(&h.Duty), 1), num(percent(h.GPUDuty), 1), work, num(percent(h.VsFree), 1)})
	s.Paras = append(s.Paras, fmt.Sprintf("Over %d readings. Mean |T−Tset| and its 95th percentile from %.0f s (3τ) after the load started; overshoot: the highest reading above the set point once it had been reached. Duty: the share of the load the job ran. GPU duty: the held GPU's mean NVML utilisation over the load. vs free: this run's throughput against the free run the model came from (%s).", h.Readings, h.SettleS, orDash(h.FreeRun)))
	return s
}

// holdAnswer is the hold's result in one sentence: how closely the
// component was held, and what it cost.
func holdAnswer(h *analysis.HoldResult) string {
	comp, _, _ := strings.Cut(h.Target, "<=")
	var b strings.Builder
	var notes []string // in brackets after the verdict
	switch {
	case h.PeakC != nil && *h.PeakC < h.SetC:
		// |T − Tset| is then no holding error: the job barely needed
		// pacing, or the set point was above what it reaches.
		fmt.Fprintf(&b, "Kept %s under %g °C without reaching it", comp, h.SetC)
	case h.P95AbsC != nil && h.MeanAbsC != nil:
		fmt.Fprintf(&b, "Held %s at %g °C within %.1f °C", comp, h.SetC, *h.P95AbsC)
		notes = append(notes, fmt.Sprintf("95 %% of the readings from 3τ on; mean %.2f °C", *h.MeanAbsC))
	case h.Readings > 0:
		fmt.Fprintf(&b, "Held %s at %g °C, not judged: the load ended before 3τ (%.0f s) had passed", comp, h.SetC, h.SettleS)
	default:
		fmt.Fprintf(&b, "Could not hold %s at %g °C: no reading of the component came", comp, h.SetC)
	}
	if h.PeakC != nil {
		notes = append(notes, fmt.Sprintf("peak %.1f °C", *h.PeakC))
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, ", ") + ")")
	}
	pct := func(v float64) string { return fmt.Sprintf("%.0f %%", 100*v) }
	if h.VsFree != nil {
		fmt.Fprintf(&b, ", at a cost of %s of the throughput (%.3f of the free run's); the job ran %s of the time", pct(max(0, 1-*h.VsFree)), *h.VsFree, pct(h.Duty))
	} else {
		fmt.Fprintf(&b, "; the job ran %s of the time (its throughput against free running is not known)", pct(h.Duty))
	}
	if h.Fallback != "" {
		b.WriteString(", ending in the plain pause")
	}
	return b.String() + "."
}

// gpuDutySentence sets the GPU's own duty beside the job's: a command's
// kernels queued before SIGSTOP run on, unseen by the duty cycle.
func gpuDutySentence(h *analysis.HoldResult) string {
	if h.GPUDuty == nil {
		return ""
	}
	s := fmt.Sprintf("The GPU worked %.0f %% of the time by its NVML utilisation", 100**h.GPUDuty)
	switch d := *h.GPUDuty - h.Duty; {
	case d > 0.1:
		s += fmt.Sprintf(", more than the job's %.0f %%: work queued before each pause ran on while the job was stopped, so the duty cycle paced the GPU less than it believed", 100*h.Duty)
	case d < -0.1:
		s += fmt.Sprintf(", less than the job's %.0f %%: the job did host work while it ran", 100*h.Duty)
	}
	if h.GPUHeldUtilPct != nil {
		s += fmt.Sprintf("; in the %d ticks the job did not run at all it was %.0f %% busy", h.GPUHeldTicks, *h.GPUHeldUtilPct)
	}
	return s + ". NVML's utilisation is the share of its last sample window (1/6 s to 1 s, by product) in which any kernel ran: it says whether the card worked, not how hard."
}

// percent is a share as a percentage; nil stays nil.
func percent(v *float64) *float64 {
	if v == nil {
		return nil
	}
	p := 100 * *v
	return &p
}
