package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/spf13/cobra"
)

func newSensorsCmd() *cobra.Command {
	var configPath string
	var asJSON, raw bool
	cmd := &cobra.Command{
		Use:   "sensors",
		Short: "Discover every source and print one sample (like sensors + nvidia-smi)",
		Long: `sensors discovers every configured source and prints one sample, as
lm-sensors' sensors does: a block per chip and device (hwmon chips, NVMe
drives, GPUs, RAPL zones) with each reading rounded, in its unit, and the
limits the device reports (high, crit, warn, slowdown), then the sources
failing or not on this machine and why. NVMe drives are listed once, by the
nvme source. It exits 1 ("No sensors found!") when no source read a
temperature.

--raw prints every source's discovery (what it found) and every reading of
the sample with its tags, as the collector records them; --json the same as
JSON, for scripts. It samples with the collector collect uses, twice, one
interval apart, and prints the second sample, so that readings derived from
two (CPU utilisation, RAPL power) are there too. --sysfs-root and
--proc-root read another machine's tree, such as the fixtures under
sensors/testdata.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(cmd, configPath)
			if err != nil {
				return err
			}
			snap, err := node.Sensors(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				return writeSnapshotJSON(cmd.OutOrStdout(), snap)
			case raw:
				return writeSnapshotTable(cmd.OutOrStdout(), snap)
			}
			return node.WriteSensors(cmd.OutOrStdout(), snap)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "configuration file (YAML)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every source's discovery and readings as JSON")
	cmd.Flags().BoolVar(&raw, "raw", false, "print every source's discovery and readings with their tags, unrounded")
	cmd.MarkFlagsMutuallyExclusive("json", "raw")
	addRootFlags(cmd)
	return cmd
}

// snapshotJSON is a source's snapshot with its points as JSON.
type snapshotJSON struct {
	node.SourceSnapshot
	JSON []collectors.JSONPoint `json:"points"`
}

func writeSnapshotJSON(w io.Writer, snap []node.SourceSnapshot) error {
	out := make([]snapshotJSON, len(snap))
	for i := range snap {
		out[i] = snapshotJSON{SourceSnapshot: snap[i], JSON: make([]collectors.JSONPoint, 0, len(snap[i].Points))}
		for j := range snap[i].Points {
			out[i].JSON = append(out[i].JSON, collectors.ToJSON(&snap[i].Points[j]))
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeSnapshotTable prints, per source, one row per device with its readings.
func writeSnapshotTable(w io.Writer, snap []node.SourceSnapshot) error {
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
