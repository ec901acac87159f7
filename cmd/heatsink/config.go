package main

import (
	"fmt"
	"os"
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/spf13/cobra"
)

// loadConfig reads --config when given, else the defaults, then applies the
// flags common to commands that sample (--sysfs-root, --proc-root, --interval).
func loadConfig(cmd *cobra.Command, path string) (*configs.Config, error) {
	return loadConfigFile(cmd, path, nil)
}

// loadConfigFile is loadConfig of the file's content already read (a
// reload reads it until it stopped changing); nil reads path.
func loadConfigFile(cmd *cobra.Command, path string, file []byte) (*configs.Config, error) {
	cfg := configs.Default()
	if path != "" {
		var err error
		if file != nil {
			cfg, err = configs.Parse(path, file)
		} else {
			cfg, err = configs.Load(path)
		}
		if err != nil {
			return nil, err
		}
	}
	f := cmd.Flags()
	// A root given by hand that does not exist is a typo, not a machine
	// without sensors: every source would quietly report itself unavailable.
	for _, r := range []struct {
		flag string
		dst  *string
	}{{"sysfs-root", &cfg.SysfsRoot}, {"proc-root", &cfg.ProcfsRoot}} {
		if !f.Changed(r.flag) {
			continue
		}
		*r.dst, _ = f.GetString(r.flag)
		if st, err := os.Stat(*r.dst); err != nil {
			return nil, fmt.Errorf("--%s: %w", r.flag, err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("--%s: %s is not a directory", r.flag, *r.dst)
		}
	}
	if f.Changed("interval") {
		cfg.Interval, _ = f.GetDuration("interval")
		if !f.Changed("deadline") {
			cfg.Deadline = cfg.Interval / 2
		}
	}
	if f.Changed("deadline") {
		cfg.Deadline, _ = f.GetDuration("deadline")
	}
	// The configuration was validated as loaded; the flags are checked
	// against the same limits here.
	if f.Changed("interval") && cfg.Interval < 10*time.Millisecond {
		return nil, fmt.Errorf("--interval %v: below the 10ms minimum", cfg.Interval)
	}
	if f.Changed("interval") || f.Changed("deadline") {
		if cfg.Deadline <= 0 || cfg.Deadline > cfg.Interval {
			return nil, fmt.Errorf("--deadline %v: must be positive and at most the interval (%v)", cfg.Deadline, cfg.Interval)
		}
	}
	return cfg, nil
}

func addRootFlags(cmd *cobra.Command) {
	cmd.Flags().String("sysfs-root", "/sys", "root of the sysfs tree to read (a fixture tree in tests)")
	cmd.Flags().String("proc-root", "/proc", "root of the procfs tree to read")
}
