package main

import (
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/spf13/cobra"
)

// loadConfig reads --config when given, else the defaults, then applies the
// flags common to commands that sample (--sysfs-root, --proc-root, --interval).
func loadConfig(cmd *cobra.Command, path string) (*configs.Config, error) {
	cfg := configs.Default()
	if path != "" {
		var err error
		if cfg, err = configs.Load(path); err != nil {
			return nil, err
		}
	}
	f := cmd.Flags()
	if f.Changed("sysfs-root") {
		cfg.SysfsRoot, _ = f.GetString("sysfs-root")
	}
	if f.Changed("proc-root") {
		cfg.ProcfsRoot, _ = f.GetString("proc-root")
	}
	if f.Changed("interval") {
		cfg.Interval, _ = f.GetDuration("interval")
		if !f.Changed("deadline") {
			cfg.Deadline = cfg.Interval / 2
		}
	}
	return cfg, nil
}

func addRootFlags(cmd *cobra.Command) {
	cmd.Flags().String("sysfs-root", "/sys", "root of the sysfs tree to read (a fixture tree in tests)")
	cmd.Flags().String("proc-root", "/proc", "root of the procfs tree to read")
}
