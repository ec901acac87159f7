package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

func newSlurmCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "slurm",
		Short: "Slurm integration: Prolog and Epilog for per-job tagging, per-job thermal summaries",
		Long: `The slurm commands plug heatsink into Slurm (see deploy/slurm/):

  prolog    Slurm's Prolog: records the job in the node agent's jobs directory,
            so the agent tags every point with the job id while it runs
  epilog    Slurm's Epilog: removes the record
  summary   EpilogSlurmctld (or by hand): the job's thermal summary, from the
            nodes' readings in InfluxDB, written beside the job's output as
            job-ID-thermal.json and into InfluxDB as job_summary points

prolog and epilog never fail the job: a Prolog that fails drains the node, so
heatsink's own problems are printed and the exit status is 0.`,
	}
	cmd.AddCommand(newSlurmPrologCmd(true), newSlurmPrologCmd(false), newSlurmSummaryCmd())
	return cmd
}

func newSlurmPrologCmd(start bool) *cobra.Command {
	var jobsDir string
	use, short := "prolog", "Record the job starting on this node (Slurm's Prolog)"
	if !start {
		use, short = "epilog", "Remove the job's record on this node (Slurm's Epilog)"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			job, err := slurm.JobFromEnv(os.Getenv)
			if err == nil {
				if start {
					if job.Name == "" {
						// Slurm 22.05 gives the Prolog no job name; the
						// controller has it (and the run id in it).
						ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
						if j, jerr := (slurm.Client{Timeout: 10 * time.Second}).Job(ctx, job.ID); jerr == nil {
							job.Name, job.Run = j.Name, slurm.RunOf(j.Name)
						}
						cancel()
					}
					err = slurm.StartJob(jobsDir, job)
				} else {
					err = slurm.EndJob(jobsDir, job.ID)
				}
			}
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "heatsink slurm %s: %v (the job goes on untagged)\n", use, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&jobsDir, "jobs-dir", slurm.DefaultJobsDir, "the jobs directory the node agent watches (collect --jobs-dir)")
	return cmd
}

func newSlurmSummaryCmd() *cobra.Command {
	var (
		configPath, jobID, outDir string
		baseline, wait            time.Duration
	)
	cmd := &cobra.Command{
		Use:   "summary [--job ID]",
		Short: "Write a job's thermal summary beside its output and into InfluxDB",
		Long: `summary reads the readings of the job's nodes from InfluxDB (the node agents
record them there), from --baseline before the job's start to its end, and
computes per component the idle mean over that baseline, the peak and the heat
interval, and the energy of every GPU and node over the job. It writes
job-ID-thermal.json into --out, by default the job's working directory, owned
by the job's user, and job_summary points into InfluxDB. The job id defaults to
$SLURM_JOB_ID, so it runs as EpilogSlurmctld. It waits up to --wait for the
nodes' readings to reach the job's end.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := configs.Default()
			if configPath != "" {
				var err error
				if cfg, err = configs.Load(configPath); err != nil {
					return err
				}
			}
			if err := applyInfluxFlags(cmd, cfg); err != nil {
				return err
			}
			if !cfg.Sinks.Influx.Enabled() {
				return errors.New("the summary reads the nodes' readings from InfluxDB: give --influx-url and --influx-bucket, or a config with sinks.influx")
			}
			if jobID == "" {
				jobID = os.Getenv("SLURM_JOB_ID")
			}
			if jobID == "" {
				return errors.New("give --job ID (or run as EpilogSlurmctld, which sets SLURM_JOB_ID)")
			}
			ctx := cmd.Context()
			client := slurm.Client{}
			job, err := client.Job(ctx, jobID)
			if err != nil {
				return err
			}
			// While a job completes, scontrol lists only the nodes still
			// completing; slurmctld gives EpilogSlurmctld the whole list.
			if nl := os.Getenv("SLURM_JOB_NODELIST"); nl != "" && os.Getenv("SLURM_JOB_ID") == jobID {
				if job.Nodes, err = client.Hostnames(ctx, nl); err != nil {
					return err
				}
			}
			if run := slurm.RunOf(job.Name); run != "" {
				// heatsink run --launcher slurm summarises its own job, over
				// its load phase, into its run directory.
				fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: job %s is heatsink run %s, which writes its own summary\n", jobID, run)
				return nil
			}
			if job.End.IsZero() {
				job.End = time.Now()
			}
			if outDir == "" {
				outDir = job.WorkDir
				if outDir == "" && job.StdOut != "" {
					outDir = filepath.Dir(job.StdOut)
				}
			}
			if outDir == "" {
				return fmt.Errorf("job %s has no working directory: give --out", jobID)
			}
			tmp, err := os.MkdirTemp("", "heatsink-job-"+jobID+"-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			from := job.Start.Add(-baseline)
			start, end := job.Start, job.End
			meta := &rundir.Meta{ID: "slurm-" + jobID, Start: from, IntervalS: cfg.Interval.Seconds(), Status: "complete",
				Phases: []rundir.Phase{{Name: "baseline", Start: from, End: &start}, {Name: "load", Start: start, End: &end}}}
			if baseline <= 0 {
				meta.Phases = meta.Phases[1:]
			}
			if err := rundir.WriteMeta(tmp, meta); err != nil {
				return err
			}
			span := slurm.Span{Job: jobID, Run: slurm.RunOf(job.Name), Name: job.Name, Nodes: job.Nodes, Start: job.Start, End: job.End}
			owner, err := slurm.OwnerOf(job.User)
			if err != nil {
				return err
			}
			path, err := writeJobSummary(ctx, cfg, tmp, outDir, span, from, end.Add(time.Nanosecond), wait, true, owner)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: job %s thermal summary -> %s\n", jobID, path)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "configuration file (YAML) with sinks.influx")
	f.StringVar(&jobID, "job", "", "job id (default $SLURM_JOB_ID)")
	f.StringVar(&outDir, "out", "", "directory for job-ID-thermal.json (default the job's working directory)")
	f.DurationVar(&baseline, "baseline", 5*time.Minute, "readings before the job's start taken as its idle reference (0: none)")
	f.DurationVar(&wait, "wait", time.Minute, "how long to wait for the nodes' readings to reach the job's end")
	addInfluxFlags(cmd)
	return cmd
}

// writeJobSummary gathers the nodes' readings of [from, to) into the run
// directory dir (whose run.json must have the job as its load phase),
// summarises the job, writes job-ID-thermal.json into outDir and the
// job_summary points into InfluxDB; it returns the file's path.
func writeJobSummary(ctx context.Context, cfg *configs.Config, dir, outDir string, job slurm.Span, from, to time.Time, wait time.Duration, gather bool, owner *slurm.Owner) (string, error) {
	if gather {
		if _, err := slurm.Gather(ctx, slurm.Readings{Influx: cfg.Sinks.Influx, Hosts: job.Nodes, From: from, To: to, Wait: wait}, dir); err != nil {
			return "", err
		}
	}
	run, err := analysis.Load(dir)
	if err != nil {
		return "", err
	}
	s := slurm.Summarize(run, analysis.DefaultOptions(), job)
	path, err := s.WriteFile(outDir, owner)
	if err != nil {
		return "", err
	}
	if err := sendPoints(cfg, "job-"+job.Job, s.Points()); err != nil {
		return path, fmt.Errorf("job summary written to %s, but not to InfluxDB: %w", path, err)
	}
	return path, nil
}

// sendPoints writes a few points to InfluxDB through a spool of their own
// beside the agent's (whose lock the agent holds), waiting for them to be
// sent; the spool is removed once empty.
func sendPoints(cfg *configs.Config, name string, pts []point.Point) error {
	ic := cfg.Sinks.Influx
	spoolDir := ic.SpoolDir
	if spoolDir == "" {
		spoolDir = influx.DefaultSpoolDir()
	}
	ic.SpoolDir = spoolDir + "." + name
	s, err := influx.New(influx.Options{Config: ic, Logger: slog.Default(), DrainTimeout: 30 * time.Second})
	if err != nil {
		return err
	}
	if err := s.Write(pts); err != nil {
		s.Abort()
		return err
	}
	err = s.Close()
	if st := s.Stats(); st.Spool.UnsentPoints > 0 {
		return errors.Join(err, fmt.Errorf("%d points not sent, kept in %s", st.Spool.UnsentPoints, ic.SpoolDir))
	}
	if err == nil {
		os.RemoveAll(ic.SpoolDir)
	}
	return err
}

func newHealthCheckCmd() *cobra.Command {
	var (
		agentURL, node, rules, state string
		severities                   []string
		coolFor                      time.Duration
	)
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Drain this Slurm node while a hotspot rule fires, resume it once cooled (HealthCheckProgram)",
		Long: `healthcheck is a Slurm HealthCheckProgram: it asks the node agent (heatsink
collect --listen) which alert rules fire. When a selected rule fires (by default
every rule of severity critical), it drains the node with scontrol, the rule and
device as the reason ("heatsink: ..."). A node heatsink drained is resumed once no
selected rule has fired for --cool-for; the rules' own margins are the
temperature hysteresis, --cool-for the time hysteresis. A node drained for any
other reason is left alone. It prints what it did; it exits non-zero only when
it could not find out (agent or scontrol unreachable), and then changes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if node == "" {
				node = os.Getenv("SLURMD_NODENAME")
			}
			if node == "" {
				h, _ := os.Hostname()
				node, _, _ = strings.Cut(h, ".")
			}
			if state == "" {
				state = filepath.Join(stateDir(), "healthcheck-"+node+".cool")
			}
			hc := &slurm.HealthCheck{Node: node, Agent: agentURL, Severities: severities, CoolFor: coolFor, StateFile: state}
			if rules != "" {
				re, err := regexp.Compile(rules)
				if err != nil {
					return fmt.Errorf("--rules: %w", err)
				}
				hc.Rules = re
			}
			out, err := hc.Run(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "heatsink healthcheck %s: %s (state %s)", node, out.Action, out.Node.State)
			if out.Reason != "" {
				fmt.Fprintf(cmd.OutOrStdout(), ": %s", out.Reason)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&agentURL, "agent", "http://127.0.0.1:9109", "the node agent's address (collect --listen)")
	f.StringVar(&node, "node", "", "Slurm node name (default $SLURMD_NODENAME, else the short host name)")
	f.StringVar(&rules, "rules", "", "regular expression on the names of the rules that drain (default all)")
	f.StringSliceVar(&severities, "severity", []string{"critical"}, "severities of the rules that drain")
	f.DurationVar(&coolFor, "cool-for", 2*time.Minute, "how long no rule may fire before a node heatsink drained is resumed")
	f.StringVar(&state, "state", "", "file remembering since when the node is cool (default under /var/lib/heatsink)")
	return cmd
}

// stateDir is where heatsink keeps small state files: beside the spool.
func stateDir() string { return filepath.Dir(influx.DefaultSpoolDir()) }

// slurmLaunch is `heatsink run --launcher slurm`: the job runs through
// srun on the nodes of an allocation held for the whole run, while the
// node agents record; the run directory gets their readings and the job's
// thermal summary at the end.
type slurmLaunch struct {
	client    slurm.Client
	nodes     int
	partition string
	argv      []string // the user's command
	cmd       *workloads.Command
	alloc     *slurm.Allocation
	cfg       *configs.Config
}

// newSlurmLaunch checks a --launcher slurm run before anything starts and
// rewrites the job into an srun command; nil for local runs.
func newSlurmLaunch(launcher string, nodes int, partition string, cfg *configs.Config, opts *workloads.Options) (*slurmLaunch, error) {
	switch launcher {
	case "", "local":
		if nodes != 1 || partition != "" {
			return nil, errors.New("--nodes and --partition need --launcher slurm")
		}
		return nil, nil
	case "slurm":
	default:
		return nil, fmt.Errorf("--launcher %q: want local or slurm", launcher)
	}
	if opts.Command == nil {
		return nil, errors.New("--launcher slurm runs a command on every node: give it after --, not --workload")
	}
	if nodes < 1 {
		return nil, fmt.Errorf("--nodes %d: at least 1", nodes)
	}
	if !cfg.Sinks.Influx.Enabled() {
		return nil, errors.New("--launcher slurm needs InfluxDB (sinks.influx or --influx-url): the nodes' agents record there, and the run is gathered from it")
	}
	l := &slurmLaunch{nodes: nodes, partition: partition, argv: opts.Command.Argv, cfg: cfg}
	if err := l.client.Check(); err != nil {
		return nil, err
	}
	srun, err := workloads.NewCommand([]string{"srun"})
	if err != nil {
		return nil, fmt.Errorf("--launcher slurm: %w", err)
	}
	l.cmd = srun
	opts.Command = srun
	// The nodes' agents record the sensors; this host records the run.
	cfg.Sources = configs.Sources{Host: off, Hwmon: off, Cpufreq: off, Rapl: off, Nvme: off, Nvml: off}
	return l, nil
}

var off = configs.NodeSource{Disabled: true}

// allocate holds the nodes for the run: the job name carries the run id,
// which the Prolog passes to the agents' job events.
func (l *slurmLaunch) allocate(ctx context.Context, c *collection) error {
	a, err := l.client.Allocate(ctx, slurm.AllocOptions{Nodes: l.nodes, Partition: l.partition, Name: slurm.RunPrefix + c.runID})
	if err != nil {
		return err
	}
	l.alloc = a
	l.cmd.Argv = a.Srun(l.argv)
	slog.Info("slurm allocation", "job", a.Job.ID, "nodes", strings.Join(a.Job.Nodes, ","))
	if c.meta != nil {
		if c.meta.Labels == nil {
			c.meta.Labels = map[string]string{}
		}
		c.meta.Labels["slurm_job"] = a.Job.ID
		c.meta.Labels["slurm_nodes"] = strings.Join(a.Job.Nodes, ",")
	}
	return nil
}

// release ends the allocation; the Epilog runs on every node.
func (l *slurmLaunch) release() error {
	if l.alloc == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return l.alloc.Release(ctx)
}

// complete gathers the nodes' readings into the run directory, so that
// heatsink report on it covers every node, and writes the job's thermal
// summary beside the job's output (job.stdout).
func (l *slurmLaunch) complete(ctx context.Context, c *collection) error {
	if l.alloc == nil || c.meta == nil || c.runDir == "" {
		return nil
	}
	m := c.meta
	end := time.Now()
	if m.End != nil {
		end = *m.End
	}
	n, err := slurm.Gather(ctx, slurm.Readings{Influx: l.cfg.Sinks.Influx, Hosts: l.alloc.Job.Nodes, From: m.Start, To: end, Wait: time.Minute}, c.runDir)
	if err != nil {
		return fmt.Errorf("gather the nodes' readings: %w", err)
	}
	slog.Info("nodes' readings gathered into the run", "points", n, "nodes", strings.Join(l.alloc.Job.Nodes, ","))
	load, ok := m.PhaseNamed(workloads.PhaseLoad)
	if !ok || load.End == nil {
		return errors.New("no job summary: the run has no complete load phase")
	}
	span := slurm.Span{Job: l.alloc.Job.ID, Run: c.runID, Name: l.alloc.Job.Name, Nodes: l.alloc.Job.Nodes, Start: load.Start, End: *load.End}
	_, err = writeJobSummary(ctx, l.cfg, c.runDir, c.runDir, span, time.Time{}, time.Time{}, 0, false, nil)
	return err
}
