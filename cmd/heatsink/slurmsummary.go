package main

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/heatsink-hpc/heatsink/slurm"
)

func newSlurmSummaryCmd() *cobra.Command {
	var (
		configPath, jobID, outDir string
		baseline, wait            time.Duration
		promURL                   string
	)
	cmd := &cobra.Command{
		Use:   "summary [--job ID | JOB]",
		Short: "Write a job's thermal summary beside its output, into InfluxDB and its AdminComment; or print a job's",
		Long: `summary reads the readings of the job's nodes from InfluxDB (the node agents
record them there), from --baseline before the job's start to its end, and
computes per component the idle mean over that baseline, the peak and the heat
interval, and the energy of every GPU and node over the job. It writes
job-ID-thermal.json into --out, by default the job's working directory, and
job_summary points into InfluxDB. As root, the job's working directory is
written by heatsink run as the job's user, through no symbolic link: what the
user cannot write gets no summary. --out is written as the operator. The job id defaults to
$SLURM_JOB_ID, so it runs as EpilogSlurmctld. It waits up to --wait for the
nodes' readings to reach the job's end. It also puts the summary, as one line
of JSON (energy and peak per GPU, the job's energy, the file's path), into the
job's AdminComment, where sacct -o AdminComment shows it; another tool's
AdminComment is left alone.

Given a job id as its argument, summary prints that job's summary from its
AdminComment for a person instead.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				return printJobSummary(cmd, args[0])
			}
			return writeJobSummary(cmd, configPath, jobID, outDir, promURL, baseline, wait)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "configuration file (YAML) with sinks.influx")
	f.StringVar(&jobID, "job", "", "job id (default $SLURM_JOB_ID)")
	f.StringVar(&outDir, "out", "", "directory for job-ID-thermal.json (default the job's working directory)")
	f.DurationVar(&baseline, "baseline", 5*time.Minute, "readings before the job's start taken as its idle reference (0: none)")
	f.DurationVar(&wait, "wait", time.Minute, "how long to wait for the nodes' readings to reach the job's end")
	f.StringVar(&promURL, "prometheus", "", "read the nodes' readings from this Prometheus server (heatsink, DCGM exporter, node_exporter metrics) instead of InfluxDB")
	addInfluxFlags(cmd)
	return cmd
}

// printJobSummary prints job id's summary from its AdminComment, for a
// person.
func printJobSummary(cmd *cobra.Command, id string) error {
	text, err := (slurm.Client{}).AdminComment(cmd.Context(), id)
	if err != nil {
		return err
	}
	a, ok := slurm.ParseAdminSummary(text)
	if !ok {
		return fmt.Errorf("job %s has no heatsink summary in its AdminComment (did EpilogSlurmctld run heatsink slurm summary?)", id)
	}
	return a.Print(cmd.OutOrStdout())
}

// writeJobSummary computes a job's summary from the nodes' readings and
// writes it where newSlurmSummaryCmd's help says.
func writeJobSummary(cmd *cobra.Command, configPath, jobID, outDir, promURL string, baseline, wait time.Duration) error {
	cfg := configs.Default()
	if configPath != "" {
		var err error
		if cfg, err = configs.Load(configPath); err != nil {
			return err
		}
	}
	if err := applyInfluxFlags(cmd, cfg); err != nil {
		return err
	}
	if !influx.ConfigOf(cfg).Enabled() && promURL == "" {
		return errors.New("the summary reads the nodes' readings from InfluxDB or Prometheus: give --influx-url and --influx-bucket (or a config with sinks.influx), or --prometheus URL")
	}
	writer, err := summaryWriter()
	if err != nil {
		return err
	}
	path, err := node.JobSummary(cmd.Context(), cfg, jobID, outDir, promURL, baseline, wait, writer)
	if errors.Is(err, node.ErrOwnSummary) {
		fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: %v\n", strings.TrimSuffix(err.Error(), ": "+node.ErrOwnSummary.Error()))
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: job %s thermal summary -> %s\n", cmp.Or(jobID, os.Getenv("SLURM_JOB_ID")), path)
	return nil
}
