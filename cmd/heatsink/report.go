package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/analysis/plot"
	"github.com/heatsink-hpc/heatsink/analysis/report"
	"github.com/heatsink-hpc/heatsink/rundir"
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

// analyseRun loads the run directory dir and analyses it with opts.
// A survey's recording is read as heatsink survey judged it, on its own
// time scale unless an analysis flag was given (explicit), and with its
// verdict.
func analyseRun(dir string, opts analysis.Options, explicit bool) (*analysis.Report, error) {
	run, err := analysis.Load(dir)
	if err != nil {
		return nil, notARunDir(dir, err)
	}
	var note string
	if !explicit {
		opts, note = analysis.SurveyOptions(run, opts)
	}
	rep := analysis.Analyze(run, opts)
	if note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	sv, err := analysis.SurveyOf(run, rep)
	if err != nil {
		return nil, err
	}
	rep.Survey = sv
	return rep, nil
}

// analysisFlagsSet reports whether any of addAnalysisFlags' flags was
// given on the command line.
func analysisFlagsSet(flags *pflag.FlagSet) bool {
	names := pflag.NewFlagSet("", pflag.ContinueOnError)
	var o analysis.Options
	addAnalysisFlags(names, &o)
	set := false
	names.VisitAll(func(f *pflag.Flag) {
		if g := flags.Lookup(f.Name); g != nil && g.Changed {
			set = true
		}
	})
	return set
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

// addAnalysisFlags binds the analysis options shared by report and compare.
func addAnalysisFlags(fs *pflag.FlagSet, o *analysis.Options) {
	fs.Float64Var(&o.Tolerance, "tolerance", o.Tolerance, "°C above the idle maximum that still counts as back at idle")
	fs.DurationVar(&o.Hold, "hold", o.Hold, "how long a series must stay within --tolerance to count as back at idle")
	fs.DurationVar(&o.Window, "window", o.Window, "sliding linear-fit window of the steepest sustained rise")
	fs.Float64Var(&o.MinRise, "min-rise", o.MinRise, "°C above the idle mean below which no heat interval is computed")
	fs.DurationVar(&o.MaxGap, "max-gap", o.MaxGap, "longest stretch without readings treated as continuous (0: five sampling intervals)")
	fs.Float64Var(&o.AirCoolingFraction, "air-fraction", o.AirCoolingFraction, "share of the unaccounted above-idle node power charged to cooling on air-cooled nodes")
	fs.Float64Var(&o.PumpFlowLPM, "pump-flow", o.PumpFlowLPM, "coolant flow (L/min) above which circulation counts as a pump cycle, when no pump rpm or status is recorded")
	fs.Float64Var(&o.CoolantDensityKgPerL, "coolant-density", o.CoolantDensityKgPerL, "coolant density (kg/L) for heat removed from coolant flow")
	fs.Float64Var(&o.CoolantHeatCapacityKJPerKgK, "coolant-heat-capacity", o.CoolantHeatCapacityKJPerKgK, "coolant specific heat (kJ/(kg·K)) for heat removed from coolant flow")
	fs.StringVar(&o.Cooling, "cooling", o.Cooling, "immersion or air, overriding run.json's label cooling and what was recorded (tank readings: immersion)")
	fs.Float64Var(&o.NearLimitC, "near-limit", o.NearLimitC, "blind spot: °C below its own slowdown limit at which a component counts as near it (the alert rule gpu_core_near_slowdown's slowdown_c - 5)")
	fs.Float64Var(&o.ControllerC, "controller-c", o.ControllerC, "blind spot: coolant temperature (°C) at which the tank's controller acts (0: the setpoint the tank recorded)")
	fs.Float64Var(&o.CoolantMoveC, "coolant-move", o.CoolantMoveC, "blind spot: °C above its idle mean at which the coolant counts as having moved")
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

// notARunDir adds to a missing run.json what the directory is instead: a
// fleet survey's top directory holds its nodes' recordings under nodes/.
func notARunDir(dir string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	nodes, _ := filepath.Glob(filepath.Join(dir, "nodes", "*", rundir.MetaFile))
	if len(nodes) > 0 {
		return fmt.Errorf("%s is a fleet survey, not a run directory: its verdicts are %s; give a node's recording (heatsink report %s) or compare them all (heatsink report %s)",
			dir, filepath.Join(dir, analysis.SurveyFile), filepath.Dir(nodes[0]), filepath.Join(dir, "nodes", "*"))
	}
	return fmt.Errorf("%s is not a run directory (heatsink run, collect, survey or import --out write one): %w", dir, err)
}
