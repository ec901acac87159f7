package main

import (
	"context"
	"fmt"
	"os"
	"time"

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
