package analysis

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the survey as a person reads it: one row per GPU with
// its fingerprint alone (°C/W core and memory with their rank and robust z
// among its like peers, τ, throughput per watt alone and together), then
// the flags' reasons.
func (s Survey) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tUUID\tcore °C/W [95 %]\trank, z\tmemory °C/W\trank, z\tτ s\tthroughput/W alone, together\trank, z")
	for _, g := range s.GPUs {
		var r SurveyRank
		if g.Rank != nil {
			r = *g.Rank
		}
		var tau *float64
		if g.AloneCore != nil {
			tau = g.AloneCore.TauS
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s, %s\t%s\n", g.Index+onHost(g.Host), orDash(g.UUID),
			resistanceText(g.AloneCore), rankText(r.Core, r.CoreZ, r.Of), resistanceText(g.AloneMem), rankText(r.Mem, r.MemZ, r.Of),
			numText(tau, "%.1f"), throughputText(g.AloneCore), throughputText(g.TogetherCore), rankText(r.ThroughputPerW, r.ThroughputPerWZ, r.Of))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if g := firstThroughput(s.GPUs); g != "" {
		fmt.Fprintf(w, "throughput: %s per watt of the GPU's own power; rank 1 is the highest °C/W and the lowest throughput per watt\n", g)
	}
	for _, f := range s.Flags {
		if _, err := fmt.Fprintln(w, "flagged:", f.Reason); err != nil {
			return err
		}
	}
	return nil
}

func resistanceText(fp *Fingerprint) string {
	if fp == nil || fp.ThermalResistanceCPerW == nil {
		return "-"
	}
	v := *fp.ThermalResistanceCPerW
	switch {
	case fp.ThermalResistanceLoCPerW != nil && fp.ThermalResistanceHiCPerW != nil:
		return fmt.Sprintf("%.4f [%.4f, %.4f]", v, *fp.ThermalResistanceLoCPerW, *fp.ThermalResistanceHiCPerW)
	case strings.HasPrefix(fp.ThermalResistanceFrom, "lower bound"):
		return fmt.Sprintf("≥ %.4f", v)
	}
	return fmt.Sprintf("%.4f", v)
}

func rankText(rank *int, z *float64, of int) string {
	if rank == nil {
		return "-"
	}
	if z == nil {
		return fmt.Sprintf("%d/%d", *rank, of)
	}
	return fmt.Sprintf("%d/%d, %+.1f", *rank, of, *z)
}

func throughputText(fp *Fingerprint) string {
	if fp == nil {
		return "-"
	}
	if fp.ThroughputPerW == nil {
		return "-"
	}
	return SI(*fp.ThroughputPerW)
}

func firstThroughput(gs []SurveyGPU) string {
	for _, g := range gs {
		if g.AloneCore != nil && g.AloneCore.ThroughputMetric != "" {
			return g.AloneCore.ThroughputMetric
		}
	}
	return ""
}

func numText(p *float64, format string) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf(format, *p)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
