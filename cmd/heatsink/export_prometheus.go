package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/recordings"
	"github.com/heatsink-hpc/heatsink/recordings/promhistory"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/spf13/cobra"
)

// promExport holds export's flags for reading a Prometheus server.
type promExport struct {
	url, job      string
	phases, vocab []string
	step          time.Duration
}

func (p *promExport) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&p.url, "prometheus", "", "read from this Prometheus server instead of InfluxDB (heatsink, DCGM exporter and node_exporter metrics)")
	f.StringVar(&p.job, "job", "", "with --prometheus: a Slurm job whose hosts and span to read (its span becomes the load phase)")
	f.StringArrayVar(&p.phases, "phase", nil, "with --prometheus: a phase, NAME=START..END (repeatable; offsets count from --from)")
	f.DurationVar(&p.step, "step", time.Second, "with --prometheus: the interval of the exported readings")
	f.StringSliceVar(&p.vocab, "prometheus-metrics", nil, "with --prometheus: which metrics to read, of heatsink, dcgm, node_exporter (default all; heatsink's own win where two give one field)")
}

// runFlags runs an export from Prometheus with export's other flags.
func (p *promExport) runFlags(cmd *cobra.Command, xf *exportFlags) error {
	loc, err := location(xf.tz)
	if err != nil {
		return err
	}
	return p.run(cmd, xf.hosts, xf.from, xf.to, loc, xf.out)
}

// run exports [from, to] of the hosts (or the job) from Prometheus into out.
func (p *promExport) run(cmd *cobra.Command, hosts []string, from, to string, loc *time.Location, out string) error {
	if out == "" {
		return errors.New("give --out RUN_DIR")
	}
	if from == "" || to == "" || (len(hosts) == 0 && p.job == "") {
		return errors.New("with --prometheus, give --from and --to, and --host or --job")
	}
	o := promhistory.Options{URL: p.url, Hosts: hosts, Job: p.job, Step: p.step, Vocabularies: p.vocab}
	var err error
	if o.From, err = recordings.ParseTime(from, loc); err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if o.To, err = recordings.ParseTime(to, loc); err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	for _, s := range p.phases {
		ps, err := recordings.ParsePhase(s, loc)
		if err != nil {
			return fmt.Errorf("--phase: %w", err)
		}
		o.Phases = append(o.Phases, ps.Resolve(o.From))
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := promhistory.Export(ctx, o, out)
	if errors.Is(err, rundir.ErrRunExists) {
		return fmt.Errorf("%w; export into a new directory", err)
	}
	if err != nil {
		return err
	}
	m := res.Meta
	m.Command, m.Versions = os.Args, versions()
	if err := rundir.WriteMeta(out, m); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: %s: %d points from %d heatsink, %d DCGM and %d node_exporter series, %d phases -> %s\n",
		m.ID, res.Points, res.Series["heatsink"], res.Series["dcgm"], res.Series["node_exporter"], len(m.Phases), absDir(out))
	return nil
}

// location is the --timezone of times given without one (default local).
func location(tz string) (*time.Location, error) {
	if tz == "" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("--timezone: %w", err)
	}
	return loc, nil
}
