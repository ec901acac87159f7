package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/analysis/plot"
	"github.com/heatsink-hpc/heatsink/analysis/report"
)

func newReportCmd() *cobra.Command {
	opts := analysis.DefaultOptions()
	var format, out string
	var wide bool
	var ro report.Options
	cmd := &cobra.Command{
		Use:   "report RUN_DIR [RUN_DIR...]",
		Short: "Analyse a run: idle, heat accumulation, return to idle, pump cycles, cooling energy",
		Long: `report analyses a run directory: per temperature (GPU core and memory, each CPU
chip as the mean over its cores with the min-max band, NVMe, coolant, water) the
idle statistics over the baseline, the maximum, the heat-accumulation interval,
the steepest sustained rise, the return to idle and the lead over the coolant;
pump cycles with heat removed and pump energy; cooling energy; and thermal
slowdown of the workload. The report states every definition and says why
anything could not be computed. With --out it writes report.<format> and the
figures (SVG and PNG) into that directory; otherwise it prints the report.
HTML carries its figures inline, so report.html (or the page printed) stands
alone. Given several run directories (hosts of a fleet, or one node's
recordings over time), it compares them as heatsink compare does: GPUs are
judged against the like GPUs of every run and host.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("give a run directory: heatsink report RUN_DIR [RUN_DIR...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := report.ParseFormat(format)
			if err != nil {
				return err
			}
			if wide && f == report.Text {
				f = report.TextWide
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			if len(args) > 1 {
				return writeComparison(cmd, args, opts, analysisFlagsSet(cmd.Flags()), f, out, ro)
			}
			rep, err := analyseRun(args[0], opts, analysisFlagsSet(cmd.Flags()))
			if err != nil {
				return err
			}
			return writeReportWith(cmd, rep, f, out, ro)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text, md, html or json")
	cmd.Flags().StringVar(&out, "out", "", "write report.<format> and the figures into this directory")
	cmd.Flags().BoolVar(&wide, "wide", false, "text: every column, however wide (by default tables fit 100 columns)")
	cmd.Flags().BoolVar(&ro.Definitions, "definitions", false, "text, md, html: end with how every quantity is computed (docs/report-schema.md states them too)")
	addAnalysisFlags(cmd.Flags(), &opts)
	return cmd
}

// analyseRun loads the run directory dir and analyses it with opts, a
// survey's recording as the survey judged it unless an analysis flag was
// given (explicit).
func analyseRun(dir string, opts analysis.Options, explicit bool) (*analysis.Report, error) {
	run, err := analysis.Load(dir)
	if err != nil {
		return nil, err
	}
	return analysis.AnalyzeAsRecorded(run, opts, explicit)
}

// writeReport renders rep in format f to the command's output, or with out
// set writes out/report.<ext> beside its figures. heatsink report and
// heatsink run --report both go through it, so they always agree.
func writeReport(cmd *cobra.Command, rep *analysis.Report, f report.Format, out string) error {
	return writeReportWith(cmd, rep, f, out, report.Options{})
}

// writeReportWith is writeReport with the report's display options.
func writeReportWith(cmd *cobra.Command, rep *analysis.Report, f report.Format, out string, o report.Options) error {
	return emit(cmd, out, "report", f, func(w io.Writer, figs []report.Figure) error {
		return report.WriteWith(w, f, rep, figs, o)
	}, func(dir string) ([]report.Figure, error) { return plot.WriteReport(dir, rep) })
}

// emit prints to stdout, or with out set writes name.<ext> and the figures
// into out and says where. HTML printed to stdout carries its figures
// inline (figures("") draws them without writing files), so the page a
// user redirects to a file is complete.
func emit(cmd *cobra.Command, out, name string, f report.Format, write func(io.Writer, []report.Figure) error, figures func(string) ([]report.Figure, error)) error {
	if out == "" {
		var figs []report.Figure
		if f == report.HTML {
			var err error
			if figs, err = figures(""); err != nil {
				return err
			}
		}
		return write(cmd.OutOrStdout(), figs)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	figs, err := figures(out)
	if err != nil {
		return err
	}
	path := filepath.Join(out, name+"."+f.Ext())
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := write(file, figs); err != nil {
		file.Close()
		return err
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: %s written to %s\n", name, absDir(path))
	return nil
}
