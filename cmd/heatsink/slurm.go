package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/spf13/cobra"
)

func newSlurmCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "slurm",
		Short: "Slurm integration: Prolog and Epilog for per-job tagging, per-job thermal summaries",
		Long: `The slurm commands plug heatsink into Slurm (see deploy/slurm/):

  prolog    Slurm's Prolog: records the job and its GPUs (SLURM_JOB_GPUS) in the
            node agent's jobs directory, so the agent tags the job's GPUs'
            points with job=ID, and the node's shared readings with jobs=ID,...
  epilog    Slurm's Epilog: removes the record
  summary   EpilogSlurmctld (or by hand): the job's thermal summary, from the
            nodes' readings in InfluxDB, written beside the job's output as
            job-ID-thermal.json and into InfluxDB as job_summary points

prolog and epilog never fail the job: a Prolog that fails drains the node, so
heatsink's own problems are printed and the exit status is 0.`,
	}
	cmd.AddCommand(newSlurmPrologCmd(true), newSlurmPrologCmd(false), newSlurmSummaryCmd(), newSlurmWriteSummaryCmd())
	return cmd
}

func newSlurmPrologCmd(start bool) *cobra.Command {
	var jobsDir string
	use, short := "prolog", "Record the job starting on this node (Slurm's Prolog)"
	if !start {
		use, short = "epilog", "Remove the job's record on this node (Slurm's Epilog)"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := slurm.JobFromEnv(os.Getenv)
			if err == nil {
				if start {
					if job.Name == "" {
						// Slurm 22.05 gives the Prolog no job name; the
						// controller has it (and the run id in it).
						ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
						if name, jerr := (slurm.Client{Timeout: 10 * time.Second}).JobName(ctx, job.ID); jerr == nil {
							job.Name, job.Run = name, slurm.RunOf(name)
						}
						cancel()
					}
					var gerr error
					job.GPUs, job.GPUSource, gerr = slurm.JobGPUs(os.Getenv)
					if gerr == nil && job.GPUSource == "" {
						gerr = slurm.NoGPUsOnGresNode(cmd.Context(), slurm.Client{Timeout: 10 * time.Second}, os.Getenv("SLURMD_NODENAME"), &job)
					}
					if gerr != nil {
						// Recorded all the same, counted on every GPU.
						fmt.Fprintf(cmd.ErrOrStderr(), "heatsink slurm prolog: %v (job %s counted on every GPU)\n", gerr, job.ID)
					}
					err = slurm.StartJob(jobsDir, job)
				} else {
					err = slurm.EndJob(jobsDir, job.ID)
				}
			}
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "heatsink slurm %s: %v (the job goes on untagged)\n", use, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&jobsDir, "jobs-dir", slurm.DefaultJobsDir, "the jobs directory the node agent watches (collect --jobs-dir)")
	return cmd
}

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
				text, err := (slurm.Client{}).AdminComment(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				a, ok := slurm.ParseAdminSummary(text)
				if !ok {
					return fmt.Errorf("job %s has no heatsink summary in its AdminComment (did EpilogSlurmctld run heatsink slurm summary?)", args[0])
				}
				return a.Print(cmd.OutOrStdout())
			}
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
