package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRootCmd() *cobra.Command {
	var logLevel string
	root := &cobra.Command{
		Use:           "heatsink",
		Short:         "Run HPC and GPU workloads under thermal monitoring and analyse the heat",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
				return err
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})))
			return nil
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	// One line per command; each lives in the file named for it.
	root.AddCommand(
		newSensorsCmd(),
		newCollectCmd(),
		newImportCmd(),
		newExportCmd(),
		newRunCmd(),
		newWorkloadsCmd(),
		newAlertsCmd(),
		newGPUsCmd(),
		newTankSimCmd(),
		newReportCmd(),
		newCompareCmd(),
		newRICmd(),
		newSlurmCmd(),
		newHealthCheckCmd(),
	)
	return root
}
