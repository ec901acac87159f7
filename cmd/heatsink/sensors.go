package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/spf13/cobra"
)

func newSensorsCmd() *cobra.Command {
	var configPath string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sensors",
		Short: "Discover every source and print one sample (like sensors + nvidia-smi)",
		Long: `sensors discovers every configured source, says what it found (or why a
source is unavailable here), and prints one sample of each. It samples twice,
one interval apart, and prints the second sample, so that readings derived
from two (CPU utilisation, RAPL power) are there too. --sysfs-root and
--proc-root read another machine's tree, such as the fixtures under
sensors/testdata.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, configPath)
			if err != nil {
				return err
			}
			srcs, err := buildSources(cfg)
			if err != nil {
				return err
			}
			defer closeSources(srcs)
			snap := snapshot(cmd.Context(), srcs, cfg.Deadline*4, cfg.Interval)
			if asJSON {
				return writeSnapshotJSON(cmd.OutOrStdout(), snap)
			}
			return writeSnapshotTable(cmd.OutOrStdout(), snap)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "configuration file (YAML)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	addRootFlags(cmd)
	return cmd
}

type sourceSnapshot struct {
	Name      string                 `json:"source"`
	Available bool                   `json:"available"`
	Error     string                 `json:"error,omitempty"`
	Devices   []string               `json:"devices,omitempty"`
	LatencyS  float64                `json:"latency_s"`
	Points    []point.Point          `json:"-"`
	JSON      []collectors.JSONPoint `json:"points"`
}

// snapshot discovers each source and samples it twice, interval apart,
// keeping the second sample: a rate (CPU utilisation, RAPL power) needs a
// reading before it. Sources run concurrently, each step under the timeout,
// so one hung source cannot hold up the listing.
func snapshot(ctx context.Context, srcs []collectors.Source, timeout, interval time.Duration) []sourceSnapshot {
	out := make([]sourceSnapshot, len(srcs))
	done := make(chan int, len(srcs))
	first := time.Now().Truncate(interval)
	second := first.Add(interval)
	for i, s := range srcs {
		out[i].Name = s.Name()
		go func() {
			defer func() { done <- i }()
			dctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			if err := s.Discover(dctx); err != nil {
				out[i].Error = absentReason(err)
				return
			}
			out[i].Available = true
			if d, ok := s.(collectors.Describer); ok {
				out[i].Devices = d.Describe()
			}
			// The first sample only primes the rates; its errors show
			// again in the second if they last.
			s.Sample(dctx, first, nil)
			select {
			case <-time.After(time.Until(second)):
			case <-ctx.Done():
			}
			sctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			t0 := time.Now()
			pts, err := s.Sample(sctx, second, nil)
			out[i].LatencyS = time.Since(t0).Seconds()
			out[i].Points = pts
			if err != nil {
				out[i].Error = err.Error()
			}
		}()
	}
	timer := time.NewTimer(2*timeout + interval + time.Second)
	defer timer.Stop()
	for range srcs {
		select {
		case <-done:
		case <-timer.C:
			for i := range out {
				if out[i].Error == "" && out[i].Points == nil && !out[i].Available {
					out[i].Error = "no answer within " + timeout.String()
				}
			}
			return out
		}
	}
	return out
}

// absentReason is the text of a discovery error. A source whose hardware is
// absent wraps errors.ErrUnsupported, for the collector to tell absent from
// broken; its "unsupported operation" suffix says nothing to a reader.
func absentReason(err error) string {
	if errors.Is(err, errors.ErrUnsupported) {
		return strings.TrimSuffix(err.Error(), ": "+errors.ErrUnsupported.Error())
	}
	return err.Error()
}

func writeSnapshotJSON(w io.Writer, snap []sourceSnapshot) error {
	for i := range snap {
		snap[i].JSON = make([]collectors.JSONPoint, 0, len(snap[i].Points))
		for j := range snap[i].Points {
			snap[i].JSON = append(snap[i].JSON, collectors.ToJSON(&snap[i].Points[j]))
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(snap)
}

// writeSnapshotTable prints, per source, one row per device with its readings.
func writeSnapshotTable(w io.Writer, snap []sourceSnapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range snap {
		switch {
		case !s.Available:
			fmt.Fprintf(tw, "%s\tunavailable: %s\n", s.Name, s.Error)
			continue
		case s.Error != "":
			fmt.Fprintf(tw, "%s\t%d readings in %.1f ms; errors: %s\n", s.Name, len(s.Points), s.LatencyS*1e3, s.Error)
		default:
			fmt.Fprintf(tw, "%s\t%d readings in %.1f ms\n", s.Name, len(s.Points), s.LatencyS*1e3)
		}
		for _, d := range s.Devices {
			fmt.Fprintf(tw, "  found\t%s\n", d)
		}
		for _, p := range s.Points {
			var tags []string
			for _, t := range p.Tags {
				if t.Key != "host" {
					tags = append(tags, t.Key+"="+t.Value)
				}
			}
			sort.Strings(tags)
			var fields []string
			for _, f := range p.Fields {
				fields = append(fields, f.Key+"="+formatValue(f))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.Measurement, strings.Join(tags, " "), strings.Join(fields, " "))
		}
	}
	return tw.Flush()
}

func formatValue(f point.Field) string {
	switch x := f.Value.Interface().(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', 6, 64)
	case string:
		return strconv.Quote(x)
	default:
		return fmt.Sprint(x)
	}
}

func closeSources(srcs []collectors.Source) {
	for _, s := range srcs {
		if c, ok := s.(collectors.Closer); ok {
			if err := c.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
				fmt.Fprintf(os.Stderr, "heatsink: close %s: %v\n", s.Name(), err)
			}
		}
	}
}
