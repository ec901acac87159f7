package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/recordings"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/spf13/cobra"
)

func newExportCmd() *cobra.Command {
	var (
		configPath, runID, from, to, tz, out string
		hosts                                []string
	)
	cmd := &cobra.Command{
		Use:   "export (--run ID | --host H --from T --to T) --out RUN_DIR",
		Short: "Read a run, or a host's readings, back from InfluxDB into a run directory",
		Long: `export queries InfluxDB with Flux (InfluxDB 2.x, or 1.8 with flux-enabled) and
writes a run directory: points.lp, and a run.json whose phases, events and
workload iterations are rebuilt from the run's event and iteration points. With
--run, the run's hosts and time span come from its events; otherwise give
--host and --from/--to (RFC 3339, or 2006-01-02 15:04:05 in --timezone).
The server comes from --influx-* flags or the sinks.influx section of --config.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, configPath)
			if err != nil {
				return err
			}
			if err := applyInfluxFlags(cmd, cfg); err != nil {
				return err
			}
			if !influx.ConfigOf(cfg).Enabled() {
				return errors.New("no InfluxDB to export from: give --influx-url and --influx-bucket, or a config with sinks.influx")
			}
			if out == "" {
				return errors.New("give --out RUN_DIR")
			}
			if runID == "" && (len(hosts) == 0 || from == "" || to == "") {
				return errors.New("give --run ID, or --host with --from and --to")
			}
			loc := time.Local
			if tz != "" {
				var err error
				if loc, err = time.LoadLocation(tz); err != nil {
					return fmt.Errorf("--timezone: %w", err)
				}
			}
			o := influx.ExportOptions{RunID: runID, Hosts: hosts}
			for _, b := range []struct {
				flag, s string
				t       *time.Time
			}{{"--from", from, &o.From}, {"--to", to, &o.To}} {
				if b.s == "" {
					continue
				}
				t, err := recordings.ParseTime(b.s, loc)
				if err != nil {
					return fmt.Errorf("%s: %w", b.flag, err)
				}
				*b.t = t
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := influx.Export(ctx, *influx.ConfigOf(cfg), o, out)
			if errors.Is(err, rundir.ErrRunExists) {
				return fmt.Errorf("%w; export into a new directory", err)
			}
			if err != nil {
				return err
			}
			m := res.Meta
			m.Command = os.Args
			m.Versions = versions()
			if err := rundir.WriteMeta(out, m); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: run %s: %d points, %d phases -> %s\n", m.ID, res.Points, len(m.Phases), absDir(out))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "configuration file (YAML), for its sinks.influx section")
	f.StringVar(&runID, "run", "", "the run's ID (its event points carry it as the run tag)")
	f.StringArrayVar(&hosts, "host", nil, "host whose readings to export (repeatable)")
	f.StringVar(&from, "from", "", "start of the time range")
	f.StringVar(&to, "to", "", "end of the time range (exclusive)")
	f.StringVar(&tz, "timezone", "", "time zone of --from/--to without one (default local)")
	f.StringVar(&out, "out", "", "run directory to write (must not hold a run)")
	addInfluxFlags(cmd)
	f.MarkHidden("influx-spool")
	f.Lookup("influx-url").Usage = "InfluxDB to read from (overrides sinks.influx.url)"
	return cmd
}
