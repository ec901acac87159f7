package main

import (
	"github.com/heatsink-hpc/heatsink/kernels"
	"github.com/spf13/cobra"
)

func newGPUsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "gpus",
		Short: "List the GPUs the CUDA driver sees (what --set device=N selects) and whether cuBLAS is available",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return kernels.Discover().WriteTable(cmd.OutOrStdout())
		},
	}
}
