package report

import (
	"fmt"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// fitSections are the fitted rise and cooldown of each component, with the
// study's heat interval and the band its definition leaves it; why a fit is
// missing is listed under the components table.
func fitSections(rep *analysis.Report) []section {
	load := section{Title: "Fitted rise over the load"}
	load.Table = &table{Head: []string{"component", "model", "τ s", "rise °C", "plateau °C", "fast τ s (share)", "R²", "RMS °C",
		"heat interval s/°C", "its band s/°C"}}
	cool := section{Title: "Fitted cooldown"}
	cool.Table = &table{Head: []string{"component", "model", "τ s", "fast τ s (share)", "asymptote °C", "drop °C", "R²", "RMS °C"}}
	load.Table.Optional = []string{"its band s/°C", "RMS °C", "plateau °C", "heat interval s/°C", "fast τ s (share)"}
	cool.Table.Optional = []string{"RMS °C", "asymptote °C", "fast τ s (share)"}
	for _, c := range rep.Components {
		band := dash
		if b := c.HeatIntervalBand; b != nil {
			band = fmt.Sprintf("%.2f–%.2f", b.LoSPerC, b.HiSPerC)
		}
		if f := c.LoadFit; f != nil {
			load.Table.Rows = append(load.Table.Rows, []string{c.ID, model(f.Model, f.ModelWeight, len(f.Models)), interval(f.TauS, f.TauLoS, f.TauHiS, 1),
				interval(f.RiseC, f.RiseLoC, f.RiseHiC, 1), fmt.Sprintf("%.1f", f.PlateauC), fast(f.TauFastS, f.FastShare),
				fmt.Sprintf("%.3f", f.FitR2), fmt.Sprintf("%.2f", f.RMSC), num(c.HeatIntervalSPerC, 2), band})
		} else if c.HeatIntervalBand != nil {
			load.Table.Rows = append(load.Table.Rows, []string{c.ID, dash, dash, dash, dash, dash, dash, dash, num(c.HeatIntervalSPerC, 2), band})
		}
		if f := c.CooldownFit; f != nil {
			cool.Table.Rows = append(cool.Table.Rows, []string{c.ID, model(f.Model, f.ModelWeight, len(f.Models)), interval(f.CoolTauS, f.CoolTauLoS, f.CoolTauHiS, 1),
				fast(f.CoolTauFastS, f.FastShare), fmt.Sprintf("%.1f", f.AsymptoteC), fmt.Sprintf("%.1f", f.DropC),
				fmt.Sprintf("%.3f", f.FitR2), fmt.Sprintf("%.2f", f.RMSC)})
		}
	}
	var out []section
	for _, s := range []section{load, cool} {
		if len(s.Table.Rows) > 0 {
			s.Table.dropEmptyColumns(2)
			out = append(out, s)
		}
	}
	if len(out) > 0 {
		level := 95.0
		for _, c := range rep.Components {
			if c.LoadFit != nil {
				level = 100 * c.LoadFit.Level
			} else if c.CooldownFit != nil {
				level = 100 * c.CooldownFit.Level
			}
		}
		out[0].Paras = append(out[0].Paras, fmt.Sprintf("Intervals in brackets are %.3g %% confidence intervals; the model (one or two exponentials) is the one with the smaller AICc, with its Akaike weight where both were fitted, and τ, the rise and their intervals are averaged over both models by those weights. Formulas under Definitions.", level))
	}
	return out
}

// model prints the chosen model, with its Akaike weight when n models
// were weighed.
func model(name string, weight float64, n int) string {
	if n < 2 {
		return name
	}
	return fmt.Sprintf("%s (w %.2f)", name, weight)
}

// interval prints v [lo, hi].
func interval(v, lo, hi float64, prec int) string {
	return fmt.Sprintf("%.*f [%.*f, %.*f]", prec, v, prec, lo, prec, hi)
}

// fast prints a fast time constant and its share of the change; a share
// without a time constant is a change quicker than the sampling.
func fast(tau, share *float64) string {
	switch {
	case share == nil:
		return dash
	case tau == nil:
		return fmt.Sprintf("< sampling (%.0f %%)", 100**share)
	}
	return fmt.Sprintf("%.1f (%.0f %%)", *tau, 100**share)
}
