package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/recordings"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/spf13/cobra"
)

func runImport(cmd *cobra.Command, paths []string, o recordings.ImportOptions, to string, cfg *configs.Config) error {
	stderr := cmd.ErrOrStderr()
	d, err := openImportDests(to, cfg)
	if err != nil {
		return err
	}
	res, importErr := recordings.Import(paths, o, d.fanout)
	if res != nil {
		reportImport(stderr, res)
	}
	errs := []error{importErr}
	if importErr != nil {
		// A half-imported run would block the retry (CheckNew), and a
		// half-sent one would be sent again: leave nothing.
		errs = append(errs, d.discard(to))
	}
	if d.runW != nil {
		errs = append(errs, d.runW.Close())
		if res != nil && res.Meta != nil {
			errs = append(errs, writeImportMeta(to, res.Meta, importErr))
		}
	}
	if d.sink != nil {
		errs = append(errs, d.drain(cmd, influx.ConfigOf(cfg).URL))
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

func writeImportMeta(to string, m *rundir.Meta, importErr error) error {
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
	return rundir.WriteMeta(to, m)
}
