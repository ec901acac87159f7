package main

import (
	"strings"

	"github.com/heatsink-hpc/heatsink/buildinfo"
	"github.com/heatsink-hpc/heatsink/console"
	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	var logLevel, logFormat string
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
		Version:       buildinfo.Read().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return setLogger(logLevel, logFormat)
		},
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(suggestFlag)
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: "+strings.Join(console.Levels(), ", "))
	root.PersistentFlags().StringVar(&logFormat, "log-format", "auto", "log format: human (a terminal's default), logfmt (otherwise), json")
	// One line per command; each lives in the file named for it.
	root.AddCommand(
		newSensorsCmd(),
		newWatchCmd(),
		newCollectCmd(),
		newImportCmd(),
		newExportCmd(),
		newRunCmd(),
		newSurveyCmd(),
		newSurveyLoadCmd(),
		newTuneCmd(),
		newTuneEvalCmd(),
		newWorkloadsCmd(),
		newAlertsCmd(),
		newGPUsCmd(),
		newTankSimCmd(),
		newReportCmd(),
		newCompareCmd(),
		newRICmd(),
		newSlurmCmd(),
		newHealthCheckCmd(),
		newSpoolCmd(),
		newW2VTrainCmd(),
		newW2VEvalCmd(),
		newVersionCmd(),
		newManCmd(),
	)
	registerCompletions(root)
	return root
}
