package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/analysis/report"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

// runFlags are heatsink run's flags.
type runFlags struct {
	configPath, out, stdout, workload, cooldown string
	tuned                                       string
	sets                                        []string
	baseline, load, grace                       time.Duration
	waitNominal, withReport                     bool
	launcher, partition, hold, holdModel        string
	nodes                                       int
	duty                                        float64
	holdPeriod                                  time.Duration
}

func newRunCmd() *cobra.Command {
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] [--workload NAME [--set key=value]... | -- CMD ARGS...]",
		Short: "Run a job under thermal monitoring: idle baseline, load, cooldown, recorded as one run",
		Long:  runLong + holdLong,
		RunE:  func(cmd *cobra.Command, args []string) error { return runJob(cmd, &rf, args) },
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // heatsink run [flags] CMD ARGS...: the command's own flags stay its own
	f.StringVar(&rf.configPath, "config", "", "configuration file (YAML)")
	f.StringVar(&rf.out, "out", "", "write a run directory here")
	f.StringVar(&rf.stdout, "stdout", "", "also print points: lp (line protocol) or json")
	f.Lookup("stdout").NoOptDefVal = "lp"
	f.StringVar(&rf.workload, "workload", "", "built-in workload to run (see heatsink workloads)")
	f.StringArrayVar(&rf.sets, "set", nil, "workload parameter key=value (repeatable)")
	f.StringVar(&rf.tuned, "tuned", "", "run heatsink tune's recommendation: a tuning directory or its best.yaml (the workload and --set, or the command)")
	f.DurationVar(&rf.baseline, "baseline", 0, "idle baseline before the load (the reference study used 30m)")
	f.DurationVar(&rf.load, "load", 0, "repeat the job until this much time has passed (default: run it once)")
	f.StringVar(&rf.cooldown, "cooldown", "", "record this long after the load, or auto: until temperatures are back to baseline (default: no cooldown)")
	f.BoolVar(&rf.waitNominal, "wait-nominal", false, "before the load, wait until temperatures are back to the baseline or the configured limits")
	f.StringVar(&rf.launcher, "launcher", "local", "local, or slurm: run the command with srun on --nodes nodes of an allocation held for the whole run, recorded by the nodes' agents")
	f.IntVar(&rf.nodes, "nodes", 1, "with --launcher slurm, the number of nodes")
	f.StringVar(&rf.partition, "partition", "", "with --launcher slurm, the partition")
	addHoldFlags(f, &rf)
	f.BoolVar(&rf.withReport, "report", false, "after the run, print its report and write report.html and its figures into the run directory (needs --out)")
	f.DurationVar(&rf.grace, "grace", workloads.DefaultGrace, "time between SIGTERM and SIGKILL when the job is stopped (overrides runner.grace)")
	f.Duration("interval", time.Second, "sampling interval")
	f.Duration("deadline", 0, "per-source deadline (default half the interval)")
	addRootFlags(cmd)
	addInfluxFlags(cmd)
	return cmd
}

const runLong = `run starts the collector and performs the protocol of the reference study,
recording each phase as events (points of measurement "event" and entries in
run.json):

  baseline   the node idles for --baseline (skipped when 0)
  wait       with --wait-nominal, until every watched temperature is back within
             runner.tolerance_c of its baseline mean (or under runner.nominal's
             absolute limits) for runner.hold
  load       the job, once, or repeated until --load has passed; every
             iteration's start, end, exit status, runtime and metrics recorded
  cooldown   recorded for --cooldown, or with --cooldown auto until every watched
             temperature has been within runner.tolerance_c (default 2 °C) of its
             baseline mean for runner.hold (default 60s), at most
             runner.cooldown_max (default 1h)

The job is a built-in workload (see heatsink workloads) or any command given
after --, or with --tuned DIR the configuration heatsink tune recommended
(DIR/best.yaml; a --set given too overrides one of its parameters). A command runs in its own process group with HEATSINK_RUN_ID,
HEATSINK_RUN_DIR and HEATSINK_ITERATION in its environment; its output is shown
and saved as job.stdout and job.stderr in the run directory. SIGINT, SIGTERM or SIGHUP
stops the job (SIGTERM to its group, SIGKILL after runner.grace, default 10s;
a second signal kills it at once), finishes the records and flushes every
sink. heatsink exits with the job's exit status.

With --launcher slurm --nodes N [--partition P], heatsink allocates N nodes
(salloc, job name heatsink-RUN_ID) for the whole run, baseline and cooldown
included, and runs the command once per node with srun in the load phase. The
nodes' agents (heatsink collect --jobs-dir, with the Prolog of deploy/slurm)
record the sensors into InfluxDB, which this needs; at the end their readings
are gathered into the run directory, so heatsink report covers every node, and
the job's thermal summary is written there as job-ID-thermal.json.

With --report, once the run is closed, heatsink analyses it as heatsink report
does (default thresholds): the text report on stdout (stderr when stdout
carries points), and report.html with its figures (SVG and PNG) in the run
directory. It is off by default: the run directory is the record, stdout
belongs to the job, and heatsink report RUN_DIR re-analyses a run at any time
with other thresholds.`

// checkNewRunDir refuses a directory that already holds a run: the new run's
// points would be appended to the old one's and its run.json replaced. It
// refuses a symbolic link and any other non-empty directory too: heatsink
// often runs as root, and what another user left there (a link where a run
// file goes) must not decide where root writes.
func checkNewRunDir(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("--out %s %w: give a directory", dir, rundir.ErrSymlink)
	}
	for _, name := range []string{rundir.MetaFile, rundir.PointsFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return fmt.Errorf("--out %s already holds a run (%s): give a new directory", dir, name)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("--out %s is not empty and holds no run (%s found): give a new or empty directory", dir, ents[0].Name())
	}
	return nil
}

// reportRun analyses the run just recorded in dir: the text report on the
// command's output, report.html and its figures in dir.
func reportRun(cmd *cobra.Command, dir string) error {
	rep, err := analyseRun(dir, analysis.DefaultOptions(), false)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := writeReport(cmd, rep, report.Text, ""); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return writeReport(cmd, rep, report.HTML, dir)
}
