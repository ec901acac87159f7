package main

import (
	"context"
	"fmt"
	"github.com/heatsink-hpc/heatsink/collectors/agent"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/spf13/cobra"
)

func newCollectCmd() *cobra.Command {
	var (
		configPath string
		duration   time.Duration
		out        string
		stdout     string
		listen     string
		webConfig  string
		jobsDir    string
	)
	cmd := &cobra.Command{
		Use:   "collect",
		Short: "Sample every source at a fixed interval into a run directory, stdout or InfluxDB",
		Long: `collect samples every configured source once per interval (1 s by default),
aligned to the wall clock, until --duration has passed or it receives SIGINT or
SIGTERM; then it flushes every sink, closes the run and exits 0.

Run as a node agent (deploy/heatsink-collect.service), it reloads --config on
SIGHUP between two ticks, keeping the sources and sinks whose settings did not
change; --listen serves /healthz (the collector and each source), /metrics
(every latest reading for Prometheus, and the alert states) and /alerts (read
by heatsink healthcheck); --jobs-dir tags every point with the Slurm job the
Prolog recorded there (heatsink slurm prolog).`,
		Args: func(cmd *cobra.Command, args []string) error {
			// --stdout alone means lp, so "--stdout json" leaves json as an
			// argument: say what was meant.
			if len(args) > 0 && (args[0] == "lp" || args[0] == "json") && cmd.Flags().Changed("stdout") {
				return fmt.Errorf("--stdout takes its format after '=': --stdout=%s", args[0])
			}
			return cobra.NoArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, configPath)
			if err != nil {
				return err
			}
			if out != "" {
				// A run directory is one recording: appending a second to it
				// would leave run.json describing only the last.
				if err := checkNewRunDir(out); err != nil {
					return err
				}
			}
			if err := applyInfluxFlags(cmd, cfg); err != nil {
				return err
			}
			if out == "" && stdout == "" && cfg.Sinks.Stdout == "" && !cfg.Sinks.Influx.Enabled() {
				return fmt.Errorf("nowhere to write: give --out DIR, --stdout, --influx-url, or a sink in the config")
			}
			sigCtx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			ctx := sigCtx
			// --duration counts ticks, so 10s at 1 Hz is 10 samples however
			// long start-up took.
			ticks := 0
			if duration > 0 {
				ticks = max(1, int((duration+cfg.Interval-1)/cfg.Interval))
			}
			// Alert rules are evaluated here too, so a node agent alerts
			// without a job; the agent reloads them with the rest on SIGHUP.
			if err := agent.CheckWebConfig(webConfig); err != nil {
				return fmt.Errorf("--web.config.file: %w", err)
			}
			ag := newNodeAgent(cmd, configPath, listen, jobsDir, cfg)
			ag.webConfig = webConfig
			if ag.engine, err = ag.alertSinks(cfg); err != nil {
				return err
			}
			c, err := startCollection(cfg, collectionOptions{outDir: out, stdout: stdout, sinks: ag.extraSinks(), ticks: ticks, handoff: true})
			if err != nil {
				return err
			}
			agentCtx, stopAgent := context.WithCancel(ctx)
			defer stopAgent()
			if err := ag.start(agentCtx, c); err != nil {
				c.finish("failed")
				return err
			}
			runErr := c.collector.Run(ctx)
			stopAgent()
			ag.stop()
			status := "complete"
			if sigCtx.Err() != nil {
				status = "interrupted" // by a signal: still a clean close, exit 0
			}
			if err := c.finish(status); err != nil {
				return err
			}
			if runErr != nil {
				return runErr
			}
			if out != "" {
				st := c.collector.Stats()
				written := c.written()
				if st.Points > 0 && written == 0 {
					return fmt.Errorf("none of the %d points collected could be written to %s (see the errors above)", st.Points, absDir(out))
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: %d ticks, %d points written, %d missed ticks -> %s\n",
					st.Ticks, written, st.MissedTicks, absDir(out))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "configuration file (YAML)")
	cmd.Flags().Duration("interval", time.Second, "sampling interval")
	cmd.Flags().Duration("deadline", 0, "per-source deadline (default half the interval)")
	cmd.Flags().DurationVar(&duration, "duration", 0, "stop after this long (default: until SIGINT/SIGTERM)")
	cmd.Flags().StringVar(&out, "out", "", "write a run directory here")
	cmd.Flags().StringVar(&stdout, "stdout", "", "also print points: lp (line protocol) or json")
	cmd.Flags().StringVar(&listen, "listen", "", "serve /healthz, /metrics (Prometheus) and /alerts on this address, e.g. :9109")
	cmd.Flags().StringVar(&webConfig, "web.config.file", "", "TLS and basic auth for --listen: an exporter-toolkit web configuration, as node_exporter's (without it --listen is plain, unauthenticated HTTP)")
	cmd.Flags().StringVar(&jobsDir, "jobs-dir", "", "tag points with the Slurm jobs the Prolog records here (e.g. "+slurm.DefaultJobsDir+")")
	cmd.Flags().Lookup("stdout").NoOptDefVal = "lp"
	addRootFlags(cmd)
	addInfluxFlags(cmd)
	return cmd
}
