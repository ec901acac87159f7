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
	"github.com/heatsink-hpc/heatsink/recordings/influxhistory"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/spf13/cobra"
)

func newExportCmd() *cobra.Command {
	var xf exportFlags
	cmd := &cobra.Command{
		Use:   "export (--run ID | --host H --from T --to T | --prometheus URL --from T --to T (--host H | --job ID)) --out RUN_DIR",
		Short: "Read a run, or a host's readings, back from InfluxDB or Prometheus into a run directory",
		Long:  exportLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if xf.prom.url != "" {
				return xf.prom.runFlags(cmd, &xf)
			}
			return runExport(cmd, args, &xf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&xf.configPath, "config", "", "configuration file (YAML), for its sinks.influx section")
	f.StringVar(&xf.runID, "run", "", "the run's ID (its event points carry it as the run tag)")
	f.StringArrayVar(&xf.hosts, "host", nil, "host whose readings to export (repeatable)")
	f.StringVar(&xf.from, "from", "", "start of the time range")
	f.StringVar(&xf.to, "to", "", "end of the time range (exclusive)")
	f.StringVar(&xf.tz, "timezone", "", "time zone of --from/--to without one (default local)")
	f.StringVar(&xf.out, "out", "", "run directory to write (must not hold a run)")
	xf.prom.addFlags(cmd)
	addInfluxFlags(cmd)
	f.MarkHidden("influx-spool")
	f.Lookup("influx-url").Usage = "InfluxDB to read from (overrides sinks.influx.url)"
	return cmd
}

// exportFlags are the command's flags.
type exportFlags struct {
	configPath, runID, from, to, tz, out string
	hosts                                []string
	prom                                 promExport
}

func runExport(cmd *cobra.Command, args []string, xf *exportFlags) error {
	cfg, err := loadConfig(cmd, xf.configPath)
	if err != nil {
		return err
	}
	if err := applyInfluxFlags(cmd, cfg); err != nil {
		return err
	}
	if !influx.ConfigOf(cfg).Enabled() {
		return errors.New("no InfluxDB to export from: give --influx-url and --influx-bucket, or a config with sinks.influx")
	}
	if xf.out == "" {
		return errors.New("give --out RUN_DIR")
	}
	if xf.runID == "" && (len(xf.hosts) == 0 || xf.from == "" || xf.to == "") {
		return errors.New("give --run ID, or --host with --from and --to")
	}
	loc := time.Local
	if xf.tz != "" {
		var err error
		if loc, err = time.LoadLocation(xf.tz); err != nil {
			return fmt.Errorf("--timezone: %w", err)
		}
	}
	o := influxhistory.ExportOptions{RunID: xf.runID, Hosts: xf.hosts}
	for _, b := range []struct {
		flag, s string
		t       *time.Time
	}{{"--from", xf.from, &o.From}, {"--to", xf.to, &o.To}} {
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
	res, err := influxhistory.Export(ctx, *influx.ConfigOf(cfg), o, xf.out)
	if errors.Is(err, rundir.ErrRunExists) {
		return fmt.Errorf("%w; export into a new directory", err)
	}
	if err != nil {
		return err
	}
	m := res.Meta
	m.Command = os.Args
	m.Versions = versions()
	if err := rundir.WriteMeta(xf.out, m); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: run %s: %d points, %d phases -> %s\n", m.ID, res.Points, len(m.Phases), absDir(xf.out))
	return nil
}

const exportLong = `export queries InfluxDB with Flux (InfluxDB 2.x, or 1.8 with flux-enabled) and
writes a run directory: points.lp, and a run.json whose phases, events and
workload iterations are rebuilt from the run's event and iteration points. With
--run, the run's hosts and time span come from its events; otherwise give
--host and --from/--to (RFC 3339, or 2006-01-02 15:04:05 in --timezone).
The server comes from --influx-* flags or the sinks.influx section of --config.

With --prometheus, export reads a Prometheus server's history instead, by
range queries at --step: heatsink's own /metrics, the DCGM exporter's GPU
fields and node_exporter's hwmon, RAPL, cpufreq, CPU, memory and load metrics
(docs/prometheus.md). Phases come from --phase, or with --job from the span in
which the job's id labels the series (baseline before, cooldown after).`
