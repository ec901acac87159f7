package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/recordings"
	"github.com/spf13/cobra"
)

func newImportCmd() *cobra.Command {
	var xf importCmdFlags
	cmd := &cobra.Command{
		Use:   "import SOURCE... (--out RUN_DIR | --influx-url URL --influx-bucket B)",
		Short: "Read recordings made by other tools into a run directory or InfluxDB",
		Long:  importLong,
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runImportCmd(cmd, args, &xf) },
	}
	f := cmd.Flags()
	f.StringVar(&xf.configPath, "config", "", "configuration file (YAML), for its sinks.influx section")
	f.StringVar(&xf.to, "out", "", "write a run directory here (it must not hold a run already)")
	// --to was its first name; it stays for the scripts that use it.
	f.StringVar(&xf.to, "to", "", "the same as --out")
	f.MarkHidden("to")
	f.StringVar(&xf.host, "host", "", "host tag for readings that name none (nvidia-smi, LibSensorsTools)")
	f.StringVar(&xf.start, "start", "", "wall-clock time a LibSensorsTools recording started (RFC 3339 or 2006-01-02 15:04:05 in --timezone)")
	f.StringVar(&xf.tz, "timezone", "", "time zone of times without one: nvidia-smi timestamps, --start, --phase (default local)")
	f.StringVar(&xf.precision, "precision", "", "line protocol timestamp precision: ns, us, ms or s (default: detected per file)")
	f.StringVar(&xf.format, "format", "", "force the format: lp, nvidia-smi-csv or libsensorstools-json (default: detected)")
	f.StringVar(&xf.runID, "run-id", "", "run ID (default START-HOST)")
	f.StringArrayVar(&xf.phases, "phase", nil, "a phase, NAME=START..END, NAME one of baseline, wait_nominal, load, cooldown (repeatable)")
	addInfluxFlags(cmd)
	return cmd
}

// importCmdFlags are the command's flags.
type importCmdFlags struct {
	configPath, to, host, start, tz, precision, format, runID string
	phases                                                    []string
}

func runImportCmd(cmd *cobra.Command, args []string, xf *importCmdFlags) error {
	loc := time.Local
	if xf.tz != "" {
		var err error
		if loc, err = time.LoadLocation(xf.tz); err != nil {
			return fmt.Errorf("--timezone: %w", err)
		}
	}
	o := recordings.ImportOptions{Options: recordings.Options{
		Format: recordings.Format(xf.format), Host: xf.host, Location: loc, Precision: xf.precision,
	}, RunID: xf.runID}
	if xf.start != "" {
		t, err := recordings.ParseTime(xf.start, loc)
		if err != nil {
			return fmt.Errorf("--start: %w", err)
		}
		o.Start = t
	}
	for _, s := range xf.phases {
		ps, err := recordings.ParsePhase(s, loc)
		if err != nil {
			return fmt.Errorf("--phase: %w", err)
		}
		o.Phases = append(o.Phases, ps)
	}
	cfg, err := loadConfig(cmd, xf.configPath)
	if err != nil {
		return err
	}
	if err := applyInfluxFlags(cmd, cfg); err != nil {
		return err
	}
	if xf.to == "" && !influx.ConfigOf(cfg).Enabled() {
		return errors.New("nowhere to write: give --out RUN_DIR, --influx-url, or both")
	}
	if err := recordings.Preflight(args, o.Options); err != nil {
		return err
	}
	return runImport(cmd, args, o, xf.to, cfg)
}
