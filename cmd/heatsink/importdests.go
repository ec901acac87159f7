package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/recordings"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/spf13/cobra"
)

// fanout writes to every destination of the import.
type fanout []recordings.Writer

func (f fanout) Write(points []point.Point) error {
	var errs []error
	for _, w := range f {
		errs = append(errs, w.Write(points))
	}
	return errors.Join(errs...)
}

// importDests are where an import writes: a run directory, InfluxDB, or both.
type importDests struct {
	fanout
	runW      *rundir.Writer
	sink      *influx.Sink
	tempSpool string
}

func openImportDests(to string, cfg *configs.Config) (*importDests, error) {
	d := &importDests{}
	if to != "" {
		if err := rundir.CheckNew(to); err != nil {
			return nil, fmt.Errorf("%w; import into a new directory", err)
		}
		w, err := rundir.Create(to)
		if err != nil {
			return nil, err
		}
		d.runW = w
		d.fanout = append(d.fanout, w)
	}
	ic := influx.ConfigOf(cfg)
	if !ic.Enabled() {
		return d, nil
	}
	if ic.SpoolDir == "" {
		// Its own spool, so an import never waits behind (or locks out)
		// a running collector's.
		dir, err := os.MkdirTemp("", "heatsink-import-spool-")
		if err != nil {
			return nil, err
		}
		d.tempSpool = dir
		ic.SpoolDir = dir
	}
	s, err := influx.StartConfigured(ic)
	if err != nil {
		if d.runW != nil {
			d.runW.Close()
		}
		return nil, err
	}
	d.sink = s
	d.fanout = append(d.fanout, s)
	return d, nil
}

// discard removes what a failed import left: the run directory, and the
// InfluxDB sink's unsent points.
func (d *importDests) discard(to string) error {
	var errs []error
	if d.runW != nil {
		d.runW.Close()
		errs = append(errs, rundir.Discard(to))
		d.runW = nil
	}
	if d.sink != nil {
		errs = append(errs, d.sink.Abort())
		if d.tempSpool != "" {
			os.RemoveAll(d.tempSpool)
		}
		d.sink = nil
	}
	return errors.Join(errs...)
}

// drain waits until InfluxDB has every point, or Ctrl-C.
func (d *importDests) drain(cmd *cobra.Command, url string) error {
	stderr := cmd.ErrOrStderr()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	fmt.Fprintf(stderr, "heatsink: sending to %s (Ctrl-C stops; what is unsent stays in %s)\n", url, d.sink.SpoolDir())
	drainErr := d.sink.Drain(ctx)
	stop()
	st := d.sink.Stats()
	errs := []error{drainErr, d.sink.Abort()}
	if drainErr == nil && d.tempSpool != "" {
		os.RemoveAll(d.tempSpool)
	}
	if st.RejectedPoints > 0 {
		errs = append(errs, fmt.Errorf("InfluxDB rejected %d points (see the log above)", st.RejectedPoints))
	}
	fmt.Fprintf(stderr, "heatsink: %d points sent to InfluxDB\n", st.SentPoints)
	return errors.Join(errs...)
}
