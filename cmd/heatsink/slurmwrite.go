package main

import (
	"fmt"
	"os"

	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/spf13/cobra"
)

// writeSummaryCmd is the name of the hidden sub-command `slurm summary`
// re-executes, as the job's user, to create the summary file.
const writeSummaryCmd = "write-summary"

// newSlurmWriteSummaryCmd is the writer child of `slurm summary` run as
// root: started with the job's user's uid, gid and groups, it reads the
// summary on standard input and writes it into DIR, so the kernel checks
// the user's rights, not root's. It prints the file's path.
func newSlurmWriteSummaryCmd() *cobra.Command {
	return &cobra.Command{
		Use:    writeSummaryCmd + " DIR JOB",
		Short:  "Write a job summary read on standard input into DIR (run by slurm summary as the job's user)",
		Hidden: true,
		Args:   cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := slurm.ReceiveSummary(args[0], args[1], cmd.InOrStdin())
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}
}

// summaryWriter is the argv that runs the writer child: this very binary.
func summaryWriter() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("job summary: locate the heatsink binary to run as the job's user: %w", err)
	}
	return []string{exe, "slurm", writeSummaryCmd}, nil
}
