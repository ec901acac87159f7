package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/analysis/plot"
	"github.com/heatsink-hpc/heatsink/analysis/report"
)

func newCompareCmd() *cobra.Command {
	opts := analysis.DefaultOptions()
	var format, out string
	var ro report.Options
	cmd := &cobra.Command{
		Use:   "compare RUN_DIR RUN_DIR...",
		Short: "Compare runs side by side per component kind (immersion vs air, workload vs workload)",
		Long: `compare analyses each run as report does and sets them side by side per
component kind, with the first run as the reference: heat-accumulation
intervals and their ratios ("CPU accumulates heat 1.30x faster in B than in
A"), return-to-idle times, cooling energy, each workload metric's median and
its change against the first run (on any machine, temperatures or not), and
each run's component table. Runs recorded without phases (heatsink collect on
a shared node) are compared by their GPUs' load episodes: each GPU's thermal
fingerprint against the like GPUs of every run and host (verdicts), and each
run's neighbour heating.
With --out it writes comparison.<format> and the heat-interval bar chart
(SVG and PNG) into that directory.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("give two or more run directories: heatsink compare RUN_DIR RUN_DIR... (got %s)", count(len(args), "argument"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := report.ParseFormat(format)
			if err != nil {
				return err
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			return writeComparison(cmd, args, opts, analysisFlagsSet(cmd.Flags()), f, out, ro)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, md, html or json")
	cmd.Flags().StringVar(&out, "out", "", "write comparison.<format> and the figure into this directory")
	cmd.Flags().BoolVar(&ro.Definitions, "definitions", false, "text, md, html: end with how every quantity is computed")
	addAnalysisFlags(cmd.Flags(), &opts)
	return cmd
}

// writeComparison analyses each run directory and writes their comparison
// in format f, as heatsink compare (and heatsink report of several runs)
// prints it, or into out beside its figures.
func writeComparison(cmd *cobra.Command, dirs []string, opts analysis.Options, explicit bool, f report.Format, out string, ro report.Options) error {
	var reps []*analysis.Report
	for _, dir := range dirs {
		rep, err := analyseRun(dir, opts, explicit)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	cmp := analysis.Compare(reps)
	return emit(cmd, out, "comparison", f, func(w io.Writer, figs []report.Figure) error {
		return report.WriteComparisonWith(w, f, cmp, figs, ro)
	}, func(dir string) ([]report.Figure, error) { return plot.WriteComparison(dir, cmp) })
}
