package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/recordings"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/spf13/cobra"
)

func newImportCmd() *cobra.Command {
	var (
		configPath, to, host, start, tz, precision, format, runID string
		phases                                                    []string
	)
	cmd := &cobra.Command{
		Use:   "import SOURCE... (--out RUN_DIR | --influx-url URL --influx-bucket B)",
		Short: "Read recordings made by other tools into a run directory or InfluxDB",
		Long: `import reads telemetry recorded by other tools and writes it as heatsink
points, into a run directory (--out) and/or InfluxDB (--influx-url ...):

  line protocol      InfluxDB line protocol, e.g. Telegraf's file output; the
                     timestamp precision is detected per file (--precision
                     overrides); Telegraf's nvidia_smi input becomes gpu points
  nvidia-smi CSV     nvidia-smi --query-gpu=timestamp,index,...,power.draw,...
                     --format=csv[,nounits] logs; timestamps are read in
                     --timezone (default local); [N/A] readings are left out
  LibSensorsTools    the JSON of the reference study's harness; its timestamps
                     count seconds from the tool's start, so give --start; its
                     events become the phases baseline, load and cooldown

The format is detected from each file's content (--format forces one). For
recordings without phases, --phase NAME=START..END sets them (times in RFC
3339 or "2006-01-02 15:04:05", or offsets from the recording's start such as
0s..30m); phases are written to run.json and as event points. A line or row
that cannot be read is reported with its file and line and skipped.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			loc := time.Local
			if tz != "" {
				var err error
				if loc, err = time.LoadLocation(tz); err != nil {
					return fmt.Errorf("--timezone: %w", err)
				}
			}
			o := recordings.ImportOptions{Options: recordings.Options{
				Format: recordings.Format(format), Host: host, Location: loc, Precision: precision,
			}, RunID: runID}
			if start != "" {
				t, err := recordings.ParseTime(start, loc)
				if err != nil {
					return fmt.Errorf("--start: %w", err)
				}
				o.Start = t
			}
			for _, s := range phases {
				ps, err := recordings.ParsePhase(s, loc)
				if err != nil {
					return fmt.Errorf("--phase: %w", err)
				}
				o.Phases = append(o.Phases, ps)
			}
			cfg, err := loadConfig(cmd, configPath)
			if err != nil {
				return err
			}
			if err := applyInfluxFlags(cmd, cfg); err != nil {
				return err
			}
			if to == "" && !cfg.Sinks.Influx.Enabled() {
				return errors.New("nowhere to write: give --out RUN_DIR, --influx-url, or both")
			}
			if err := recordings.Preflight(args, o.Options); err != nil {
				return err
			}
			return runImport(cmd, args, o, to, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "configuration file (YAML), for its sinks.influx section")
	f.StringVar(&to, "out", "", "write a run directory here (it must not hold a run already)")
	// --to was its first name; it stays for the scripts that use it.
	f.StringVar(&to, "to", "", "the same as --out")
	f.MarkHidden("to")
	f.StringVar(&host, "host", "", "host tag for readings that name none (nvidia-smi, LibSensorsTools)")
	f.StringVar(&start, "start", "", "wall-clock time a LibSensorsTools recording started (RFC 3339 or 2006-01-02 15:04:05 in --timezone)")
	f.StringVar(&tz, "timezone", "", "time zone of times without one: nvidia-smi timestamps, --start, --phase (default local)")
	f.StringVar(&precision, "precision", "", "line protocol timestamp precision: ns, us, ms or s (default: detected per file)")
	f.StringVar(&format, "format", "", "force the format: lp, nvidia-smi-csv or libsensorstools-json (default: detected)")
	f.StringVar(&runID, "run-id", "", "run ID (default START-HOST)")
	f.StringArrayVar(&phases, "phase", nil, "a phase, NAME=START..END (repeatable)")
	addInfluxFlags(cmd)
	return cmd
}

// fanout writes to every destination of the import.
type fanout []recordings.Writer

func (f fanout) Write(points []point.Point) error {
	var errs []error
	for _, w := range f {
		errs = append(errs, w.Write(points))
	}
	return errors.Join(errs...)
}

func runImport(cmd *cobra.Command, paths []string, o recordings.ImportOptions, to string, cfg *configs.Config) error {
	stderr := cmd.ErrOrStderr()
	var dests fanout
	var runW *rundir.Writer
	if to != "" {
		if err := rundir.CheckNew(to); err != nil {
			return fmt.Errorf("%w; import into a new directory", err)
		}
		w, err := rundir.Create(to)
		if err != nil {
			return err
		}
		runW = w
		dests = append(dests, w)
	}
	var sink *influx.Sink
	tempSpool := ""
	if cfg.Sinks.Influx.Enabled() {
		if cfg.Sinks.Influx.SpoolDir == "" {
			// Its own spool, so an import never waits behind (or locks out)
			// a running collector's.
			dir, err := os.MkdirTemp("", "heatsink-import-spool-")
			if err != nil {
				return err
			}
			tempSpool = dir
			cfg.Sinks.Influx.SpoolDir = dir
		}
		s, err := startInfluxSink(cfg)
		if err != nil {
			if runW != nil {
				runW.Close()
			}
			return err
		}
		sink = s
		dests = append(dests, s)
	}

	res, importErr := recordings.Import(paths, o, dests)
	if res != nil {
		reportImport(stderr, res)
	}
	var errs []error
	errs = append(errs, importErr)
	if runW != nil && importErr != nil {
		// A half-imported run would block the retry (CheckNew): leave nothing.
		runW.Close()
		errs = append(errs, rundir.Discard(to))
		runW = nil
	}
	if runW != nil {
		errs = append(errs, runW.Close())
		if res != nil && res.Meta != nil {
			m := res.Meta
			m.Command = os.Args
			if m.Versions == nil {
				m.Versions = map[string]string{}
			}
			for k, v := range versions() {
				m.Versions[k] = v
			}
			if importErr != nil {
				m.Status = "failed"
			}
			errs = append(errs, rundir.WriteMeta(to, m))
		}
	}
	if sink != nil && importErr != nil {
		errs = append(errs, sink.Abort())
		if tempSpool != "" {
			os.RemoveAll(tempSpool)
		}
		sink = nil
	}
	if sink != nil {
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		fmt.Fprintf(stderr, "heatsink: sending to %s (Ctrl-C stops; what is unsent stays in %s)\n", cfg.Sinks.Influx.URL, sink.SpoolDir())
		drainErr := sink.Drain(ctx)
		stop()
		st := sink.Stats()
		errs = append(errs, drainErr, sink.Abort())
		if drainErr == nil && tempSpool != "" {
			os.RemoveAll(tempSpool)
		}
		if st.RejectedPoints > 0 {
			errs = append(errs, fmt.Errorf("InfluxDB rejected %d points (see the log above)", st.RejectedPoints))
		}
		fmt.Fprintf(stderr, "heatsink: %d points sent to InfluxDB\n", st.SentPoints)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if res != nil && res.Meta != nil {
		dest := "InfluxDB"
		if to != "" {
			dest = absDir(to)
		}
		fmt.Fprintf(stderr, "heatsink: run %s: %d points from %s, %s skipped -> %s\n",
			res.Meta.ID, res.Points, count(len(res.Files), "file"), count(res.Bad, "line"), dest)
	}
	return nil
}

// reportImport lists, per file, what was read, what was skipped and why.
func reportImport(w io.Writer, res *recordings.Result) {
	const show = 20
	for _, fr := range res.Files {
		fmt.Fprintf(w, "%s: %s, %d points", fr.Path, fr.Format, fr.Points)
		if fr.Precision != "" {
			fmt.Fprintf(w, ", precision %s", fr.Precision)
		}
		if len(fr.Phases) > 0 {
			fmt.Fprintf(w, ", %d phases", len(fr.Phases))
		}
		fmt.Fprintf(w, ", %s skipped\n", count(len(fr.Bad), "line"))
		for i, b := range fr.Bad {
			if i == show {
				fmt.Fprintf(w, "  ... and %d more skipped lines\n", len(fr.Bad)-show)
				break
			}
			fmt.Fprintf(w, "  skipped %v\n", b)
		}
		for _, warn := range fr.Warnings {
			fmt.Fprintf(w, "  note: %s\n", warn)
		}
	}
}
