package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// SlurmLaunch is `heatsink run --launcher slurm`: the job runs through
// srun on the nodes of an allocation held for the whole run, while the
// node agents record; the run directory gets their readings and the job's
// thermal summary at the end.
type SlurmLaunch struct {
	client    slurm.Client
	nodes     int
	partition string
	argv      []string // the user's command
	cmd       *workloads.Command
	alloc     *slurm.Allocation
	cfg       *configs.Config
}

// NewSlurmLaunch checks a --launcher slurm run before anything starts and
// rewrites the job into an srun command; nil for local runs.
func NewSlurmLaunch(launcher string, nodes int, partition string, cfg *configs.Config, opts *workloads.Options) (*SlurmLaunch, error) {
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
	if !influx.ConfigOf(cfg).Enabled() {
		return nil, errors.New("--launcher slurm needs InfluxDB (sinks.influx or --influx-url): the nodes' agents record there, and the run is gathered from it")
	}
	l := &SlurmLaunch{nodes: nodes, partition: partition, argv: opts.Command.Argv, cfg: cfg}
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
	DisableNodeSources(cfg)
	return l, nil
}

// Allocate holds the nodes for the run: the job name carries the run id,
// which the Prolog passes to the agents' job events.
func (l *SlurmLaunch) Allocate(ctx context.Context, c *Collection) error {
	a, err := l.client.Allocate(ctx, slurm.AllocOptions{Nodes: l.nodes, Partition: l.partition, Name: slurm.RunPrefix + c.RunID()})
	if err != nil {
		return err
	}
	l.alloc = a
	l.cmd.Argv = a.Srun(l.argv)
	slog.Info("slurm allocation", "job", a.Job.ID, "nodes", strings.Join(a.Job.Nodes, ","))
	if c.Meta() != nil {
		if c.Meta().Labels == nil {
			c.Meta().Labels = map[string]string{}
		}
		c.Meta().Labels["slurm_job"] = a.Job.ID
		c.Meta().Labels["slurm_nodes"] = strings.Join(a.Job.Nodes, ",")
	}
	return nil
}

// Release ends the allocation; the Epilog runs on every node.
func (l *SlurmLaunch) Release() error {
	if l.alloc == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return l.alloc.Release(ctx)
}

// Complete gathers the nodes' readings into the run directory, so that
// heatsink report on it covers every node, and writes the job's thermal
// summary beside the job's output (job.stdout).
func (l *SlurmLaunch) Complete(ctx context.Context, c *Collection) error {
	if l.alloc == nil || c.Meta() == nil || c.Dir() == "" {
		return nil
	}
	m := c.Meta()
	end := time.Now()
	if m.End != nil {
		end = *m.End
	}
	n, err := slurm.Gather(ctx, slurm.Readings{Influx: *influx.ConfigOf(l.cfg), Hosts: l.alloc.Job.Nodes, From: m.Start, To: end, Wait: time.Minute}, c.Dir())
	if err != nil {
		return fmt.Errorf("gather the nodes' readings: %w", err)
	}
	slog.Info("nodes' readings gathered into the run", "points", n, "nodes", strings.Join(l.alloc.Job.Nodes, ","))
	load, ok := m.PhaseNamed(workloads.PhaseLoad)
	if !ok || load.End == nil {
		return errors.New("no job summary: the run has no complete load phase")
	}
	span := slurm.Span{Job: l.alloc.Job.ID, Run: c.RunID(), Name: l.alloc.Job.Name, Nodes: l.alloc.Job.Nodes, Start: load.Start, End: *load.End}
	_, err = WriteJobSummary(ctx, l.cfg, c.Dir(), c.Dir(), span, nil, nil)
	return err
}
