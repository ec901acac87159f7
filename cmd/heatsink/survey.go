package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/spf13/cobra"
)

// surveyFlags are heatsink survey's flags.
type surveyFlags struct {
	configPath, out, workload, against string
	sets                               []string
	loadInProcess                      bool
	plan                               node.SurveyPlan
	fleet                              surveyFleetFlags
}

func newSurveyCmd() *cobra.Command {
	sf := surveyFlags{plan: node.DefaultSurveyPlan()}
	cmd := &cobra.Command{
		Use:   "survey --out DIR [--workload NAME [--set key=value]... | -- CMD ARGS...] [--against DIR|influx] [--launcher slurm --nodes N]",
		Short: "Load every GPU of this node alone, then all together: fingerprints, neighbour heating, outliers and drift",
		Long:  surveyLong + surveyFleetLong,
		RunE:  func(cmd *cobra.Command, args []string) error { return runSurveyOrFleet(cmd, &sf, args) },
	}
	f := cmd.Flags()
	f.SetInterspersed(false)
	f.StringVar(&sf.configPath, "config", "", "configuration file (YAML)")
	f.StringVar(&sf.out, "out", "", "write the survey's run directory here (required)")
	f.StringVar(&sf.workload, "workload", "", "built-in workload to load each GPU with (default dgemm; its device parameter is set to each GPU)")
	f.StringArrayVar(&sf.sets, "set", nil, "workload parameter key=value (repeatable)")
	f.BoolVar(&sf.loadInProcess, "load-in-process", false, "run the built-in workload in this process, not in a process per GPU and load: its CUDA context then outlives each load and holds that GPU's clocks and idle power up for the rest of the survey (for comparison)")
	f.StringVar(&sf.against, "against", "", "an earlier survey's run directory, or influx (influx:BUCKET) for each GPU's last survey in the configured InfluxDB: flag GPUs (by UUID) whose cooling degraded since")
	f.DurationVar(&sf.plan.Baseline, "baseline", sf.plan.Baseline, "idle baseline before the first load")
	f.DurationVar(&sf.plan.Load, "load", 0, "length of every load (default: 3 τ_slow, measured on the first GPU, within --min-load and --max-load and the --load-budget)")
	f.DurationVar(&sf.plan.MinLoad, "min-load", sf.plan.MinLoad, "shortest load when measured from τ_slow")
	f.DurationVar(&sf.plan.MaxLoad, "max-load", sf.plan.MaxLoad, "longest load when measured from τ_slow")
	f.DurationVar(&sf.plan.LoadBudget, "load-budget", sf.plan.LoadBudget, "all the loads together last at most this when measured from τ_slow (0: no budget)")
	f.BoolVar(&sf.plan.Together, "together", sf.plan.Together, "end with every GPU loaded at once (--together=false: the alone loads only)")
	f.DurationVar(&sf.plan.MaxCooldown, "max-cooldown", sf.plan.MaxCooldown, "longest wait for the GPUs to return to baseline after a load (4 τ_slow when it was measured, within --min-return and this)")
	addSurveyFleetFlags(f, &sf)
	addRootFlags(cmd)
	return cmd
}

const surveyLong = `survey measures every GPU of this node in minutes and judges it: an idle
baseline; each GPU loaded alone in turn (the fixed-seed dgemm by default, any
built-in workload with a device parameter, or a command after --, which gets
CUDA_VISIBLE_DEVICES), each load 3 τ_slow long (τ_slow, the heatsink's time
constant rather than the die's first jump, measured on the first GPU; 30 s to
2 min, five minutes of load in all; --load fixes it), followed by a wait
until every GPU is back within 2 °C of its baseline (at most 4 τ_slow or
--max-cooldown); then all GPUs together; then a cooldown.

DIR is a run directory (heatsink report DIR reads it). DIR/survey.json holds
each GPU (host, index, UUID, model), its fingerprint alone and together, the
neighbour-heating matrix, the verdicts against like GPUs and the flags of the
rule it states (docs/survey.md): a GPU much hotter per watt than its peers,
one that heats a neighbour, and with --against one whose cooling degraded.

Exit status: 0 nothing flagged, 1 something flagged, 2 the survey could not
run or judge.`

// runSurveyCmd is heatsink survey: every failure before a judgement is
// exit status 2.
func runSurveyCmd(cmd *cobra.Command, sf *surveyFlags, args []string) error {
	s, err := survey(cmd, sf, args)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if err := s.WriteText(cmd.OutOrStdout()); err != nil {
		return &exitError{code: 2, err: err}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: survey %s: %d GPUs, %s -> %s\n", s.RunID, len(s.GPUs), s.Status, filepath.Join(absDir(sf.out), analysis.SurveyFile))
	if code := s.ExitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

func survey(cmd *cobra.Command, sf *surveyFlags, args []string) (analysis.Survey, error) {
	var none analysis.Survey
	if sf.out == "" {
		return none, errors.New("--out DIR is required: the survey is a run directory")
	}
	if err := errors.Join(checkNewRunDir(sf.out), sf.plan.Check()); err != nil {
		return none, err
	}
	cfg, err := loadConfig(cmd, sf.configPath)
	if err != nil {
		return none, err
	}
	against, err := newSurveyAgainst(sf.against, cfg)
	if err != nil {
		return none, err
	}
	load, its, err := surveyLoad(sf, args)
	if err != nil {
		return none, err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	o := node.SurveyOptions{Options: node.Options{OutDir: sf.out, Command: os.Args, Versions: versions()},
		Plan: sf.plan, Load: load, Iterations: its, Progress: node.SurveyPrinter(cmd.ErrOrStderr(), progressEvery)}
	if err := node.RecordSurvey(ctx, cfg, o); err != nil {
		return none, err
	}
	run, err := analysis.Load(sf.out)
	if err != nil {
		return none, fmt.Errorf("analyse the survey: %w", err)
	}
	s, err := judgeSurvey(ctx, run, surveyAnalysisOptions(sf.plan), against, cfg, sf.out)
	if err != nil {
		return s, err
	}
	if len(s.GPUs) == 0 {
		return s, fmt.Errorf("no GPU could be judged: %s", s.NotComputed["gpus"])
	}
	return s, nil
}
