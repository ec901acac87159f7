package main

import (
	"time"

	"github.com/heatsink-hpc/heatsink/node"
	"github.com/spf13/cobra"
)

func newWatchCmd() *cobra.Command {
	var configPath string
	var opts node.WatchOptions
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Print the node's temperatures, power and clocks, one line per second (like nvidia-smi dmon)",
		Long: `watch samples the node's sources as collect does and prints one line per
interval, a column per component and quantity, as nvidia-smi dmon does:

  #   time    cpu0   nvme0    pkg0    cpus    gpu0    gpu0    gpu0     cpu     mem
  #              C       C       W     MHz       C       W     MHz       %     GiB
  14:02:07    46.0    38.9    61.2    4368    54.0     212    1980    12.5    41.3

cpuN is a CPU chip's package temperature (else its hottest sensor), nvmeN a
drive's composite temperature, pkgN RAPL's package power (from the second
line on: power is the energy between two samples), cpus the mean clock of
the CPUs, gpuN a GPU's temperature, power and SM clock, then each immersion
tank's coolant temperature and power and each PDU's power, and last the
CPUs' use and the memory in use, which a VM without sensors still has (CPU
use needs two samples: "-" on the first line). The columns are
the first sample's; "-" is a reading missing from a later one. The header
comes back every --header-every lines; --count ends it (Ctrl-C otherwise).
It reads the sources itself, beside a running agent or without one;
--sysfs-root and --proc-root read another machine's tree.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, configPath)
			if err != nil {
				return err
			}
			return node.Watch(cmd.Context(), cfg, cmd.OutOrStdout(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "configuration file (YAML): its sources, interval and facility devices")
	f.IntVarP(&opts.Lines, "count", "c", 0, "stop after this many lines (default: until interrupted)")
	f.IntVar(&opts.HeaderEvery, "header-every", 20, "repeat the header every this many lines (0: once)")
	f.Duration("interval", time.Second, "sampling interval")
	addRootFlags(cmd)
	return cmd
}
