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
		Use:   "heatsink",
		Short: "Run HPC and GPU workloads under thermal monitoring and analyse the heat",
		Long: `heatsink records a node's sensors (CPU and NVMe temperatures, cpufreq, RAPL,
NVIDIA GPUs, rack PDUs, immersion tanks) once a second while a workload runs,
and analyses the recording: how fast each component heats up, how long it
takes to return to idle, and what cooling cost.

  heatsink sensors        what this machine exposes, one sample of each
  heatsink run --workload cpu-stream --baseline 30s --load 2m --cooldown 2m --out run1 --report
                          idle, load, cooldown recorded into run1, then the report
  heatsink report run1    the report again (--format md, html or json)`,
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
		newTuneCmd(),
		newWorkloadsCmd(),
		newAlertsCmd(),
		newGPUsCmd(),
		newTankSimCmd(),
		newReportCmd(),
		newCompareCmd(),
		newRICmd(),
		newSlurmCmd(),
		newHealthCheckCmd(),
		newW2VTrainCmd(),
		newW2VEvalCmd(),
	)
	return root
}
