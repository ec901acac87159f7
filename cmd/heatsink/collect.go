package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/agent"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/spf13/cobra"
)

func newCollectCmd() *cobra.Command {
	var cf collectFlags
	cmd := &cobra.Command{
		Use:   "collect",
		Short: "Sample every source at a fixed interval into a run directory, stdout, InfluxDB or Prometheus (/metrics)",
		Long:  collectLong,
		Args: func(cmd *cobra.Command, args []string) error {
			// --stdout alone means lp, so "--stdout json" leaves json as an
			// argument: say what was meant.
			if len(args) > 0 && (args[0] == "lp" || args[0] == "json") && cmd.Flags().Changed("stdout") {
				return fmt.Errorf("--stdout takes its format after '=': --stdout=%s", args[0])
			}
			return cobra.NoArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runCollect(cmd, &cf) },
	}
	cmd.Flags().StringVar(&cf.configPath, "config", "", "configuration file (YAML)")
	cmd.Flags().Duration("interval", time.Second, "sampling interval")
	cmd.Flags().Duration("deadline", 0, "per-source deadline (default half the interval)")
	cmd.Flags().DurationVar(&cf.duration, "duration", 0, "stop after this long (default: until SIGINT/SIGTERM)")
	cmd.Flags().StringVar(&cf.out, "out", "", "write a run directory here")
	cmd.Flags().StringVar(&cf.stdout, "stdout", "", "also print points: lp (line protocol) or json")
	cmd.Flags().StringVar(&cf.listen, "listen", "", "serve /healthz, /metrics (Prometheus) and /alerts on this address, e.g. :9109")
	cmd.Flags().StringVar(&cf.socket, "socket", "", "also serve them to root alone on this Unix socket (0600, in a directory only root writes), the health check's trusted way in, e.g. "+agent.DefaultSocket)
	cmd.Flags().StringVar(&cf.webConfig, "web.config.file", "", "TLS and basic auth for --listen: an exporter-toolkit web configuration, as node_exporter's (without it --listen is plain, unauthenticated HTTP)")
	cmd.Flags().StringVar(&cf.jobsDir, "jobs-dir", "", "tag points with the Slurm jobs the Prolog records here (e.g. "+slurm.DefaultJobsDir+")")
	cmd.Flags().Lookup("stdout").NoOptDefVal = "lp"
	addRootFlags(cmd)
	addInfluxFlags(cmd)
	return cmd
}

// collectFlags are heatsink collect's flags.
type collectFlags struct {
	configPath, out, stdout, listen, socket, jobsDir, webConfig string
	duration                                                    time.Duration
}

// runCollect is heatsink collect: the flags checked, one call, the counts printed.
func runCollect(cmd *cobra.Command, cf *collectFlags) error {
	cfg, err := loadCollectConfig(cmd, cf.configPath)
	if err != nil {
		return err
	}
	if cf.out != "" {
		// A run directory is one recording: appending a second to it
		// would leave run.json describing only the last.
		if err := checkNewRunDir(cf.out); err != nil {
			return err
		}
	}
	// --listen (or --socket) alone is a Prometheus exporter, as
	// node_exporter is: /metrics is where its readings go.
	if cf.out == "" && !node.HasSinks(cfg) && cf.listen == "" && cf.socket == "" {
		return fmt.Errorf("nowhere to write: give --out DIR, --stdout, --influx-url, --listen ADDR (a Prometheus exporter), or a sink in the config")
	}
	if err := agent.CheckWebConfig(cf.webConfig); err != nil {
		return fmt.Errorf("--web.config.file: %w", err)
	}
	// A node agent (--listen) reloads on SIGHUP; without --listen, collect
	// is a recording from a terminal, and a hang-up ends it like SIGTERM,
	// its records finished, instead of killing it with run.json "running".
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	isAgent := cf.listen != "" || cf.socket != ""
	if !isAgent {
		sigs = append(sigs, syscall.SIGHUP)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), sigs...)
	defer stop()
	trimResidency(ctx, 3*cfg.Interval)
	// --duration counts ticks, so 10s at 1 Hz is 10 samples however
	// long start-up took. Alert rules are evaluated here too, so a
	// node agent alerts without a job; it reloads them with the rest
	// on SIGHUP.
	ticks := 0
	if cf.duration > 0 {
		ticks = max(1, int((cf.duration+cfg.Interval-1)/cfg.Interval))
	}
	o := node.Options{OutDir: cf.out, Ticks: ticks, Command: os.Args, Versions: versions()}
	if !isAgent { // a node agent has /healthz, not a progress line every 10 s
		disp := newProgress(cmd)
		o.Sinks = append(o.Sinks, disp)
		stopProgress := showProgress(ctx, disp, collectStatus(time.Now(), cf.duration))
		defer stopProgress()
	}
	st, err := node.Collect(ctx, cfg, o, node.AgentOptions{Listen: cf.listen, Socket: cf.socket, JobsDir: cf.jobsDir, ConfigPath: cf.configPath,
		WebConfig: cf.webConfig, NoReload: !isAgent, Build: agentBuild(), Load: func(file []byte) (*configs.Config, error) { return loadCollectConfigFile(cmd, cf.configPath, file) }})
	if err != nil || cf.out == "" {
		return err
	}
	if st.Points > 0 && st.Written == 0 {
		return fmt.Errorf("none of the %d points collected could be written to %s (see the errors above)", st.Points, absDir(cf.out))
	}
	printCollectSummary(cmd, st, absDir(cf.out))
	return nil
}

// loadCollectConfig is loadConfig with the sink flags over it.
func loadCollectConfig(cmd *cobra.Command, path string) (*configs.Config, error) {
	return loadCollectConfigFile(cmd, path, nil)
}

// loadCollectConfigFile is loadCollectConfig of the file's content already
// read (nil reads path).
func loadCollectConfigFile(cmd *cobra.Command, path string, file []byte) (*configs.Config, error) {
	cfg, err := loadConfigFile(cmd, path, file)
	if err != nil {
		return nil, err
	}
	if err := applyInfluxFlags(cmd, cfg); err != nil {
		return nil, err
	}
	if err := applyStdoutFlag(cmd, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

const collectLong = `collect samples every configured source once per interval (1 s by default),
aligned to the wall clock, until --duration has passed or it receives SIGINT or
SIGTERM (or SIGHUP, without --listen); then it flushes every sink, closes the run and exits 0.

Run as a node agent with --listen (deploy/heatsink-collect.service), it reloads
--config on SIGHUP between two ticks, keeping the sources and sinks whose settings did not
change (only a complete file that drops nothing unless removes: says so: docs/configuration.md); --listen serves /healthz (the collector and each source), /metrics
(every latest reading for Prometheus, and the alert states) and /alerts (read
by heatsink healthcheck); --socket serves the same to root alone on a Unix
socket, which the health check trusts before any TCP port; --jobs-dir tags every point with the Slurm job the
Prolog recorded there (heatsink slurm prolog).`
