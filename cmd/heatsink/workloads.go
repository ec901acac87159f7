package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/heatsink-hpc/heatsink/kernels/dgemm"
	"github.com/heatsink-hpc/heatsink/kernels/lda"
	"github.com/heatsink-hpc/heatsink/kernels/ri"
	"github.com/heatsink-hpc/heatsink/kernels/stream"
	"github.com/heatsink-hpc/heatsink/kernels/w2v"
	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

// builtinWorkloads lists what `heatsink run --workload NAME` can run. Adding
// a workload is one line here; the list is built per call, so nothing global
// is shared or mutated.
func builtinWorkloads() []workloads.Workload {
	return []workloads.Workload{
		workloads.CPUStream{},
		stream.Workload{},
		dgemm.Workload{},
		ri.Workload{},
		lda.Workload{},
		w2v.Workload{},
	}
}

func newWorkloadsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "workloads",
		Short: "List the built-in workloads, their --set parameters and the devices they can use here",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list := describeWorkloads(cmd.Context(), builtinWorkloads())
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			return writeWorkloads(cmd.OutOrStdout(), list)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

type workloadInfo struct {
	Name    string      `json:"name"`
	Summary string      `json:"summary"`
	Params  []paramInfo `json:"params"`
	// Devices are what the workload found on this machine (CPUs, GPUs);
	// DevicesError says why it found none.
	Devices      []string `json:"devices,omitempty"`
	DevicesError string   `json:"devices_error,omitempty"`
}

type paramInfo struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Default string   `json:"default"`
	Range   string   `json:"range,omitempty"`
	Choices []string `json:"choices,omitempty"`
	Help    string   `json:"help"`
}

// describeWorkloads gathers each workload's parameters and, for those that
// run on devices, what this machine has (discovery bounded in time, so a
// hung driver cannot hold up the listing).
func describeWorkloads(ctx context.Context, list []workloads.Workload) []workloadInfo {
	out := make([]workloadInfo, 0, len(list))
	for _, w := range list {
		info := workloadInfo{Name: w.Name(), Summary: w.Summary()}
		for _, p := range w.Params() {
			pi := paramInfo{Name: p.Name, Type: p.Type.String(), Default: p.Default, Choices: p.Choices, Help: p.Help}
			if pi.Default == "" && p.Type != workloads.String {
				pi.Default = "(required)"
			}
			pi.Range = paramRange(p)
			info.Params = append(info.Params, pi)
		}
		if d, ok := w.(workloads.DeviceLister); ok {
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			devs, err := d.Devices(dctx)
			cancel()
			info.Devices = devs
			if err != nil {
				info.DevicesError = err.Error()
			}
		}
		out = append(out, info)
	}
	return out
}

func paramRange(p workloads.ParamSpec) string {
	if p.Min == nil && p.Max == nil {
		return ""
	}
	f := func(v *float64) string {
		switch {
		case v == nil:
			return ""
		case p.Type == workloads.Bytes:
			return humanBytes(*v)
		case p.Type == workloads.Duration:
			return time.Duration(*v * float64(time.Second)).String()
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	switch {
	case p.Max == nil:
		return ">= " + f(p.Min)
	case p.Min == nil:
		return "<= " + f(p.Max)
	}
	return "[" + f(p.Min) + ", " + f(p.Max) + "]"
}

// humanBytes writes a size the way --set accepts it back (64KiB, 1TiB).
func humanBytes(v float64) string {
	for _, u := range []struct {
		name string
		n    float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.n && v/u.n == float64(int64(v/u.n)) {
			return fmt.Sprintf("%d%s", int64(v/u.n), u.name)
		}
	}
	return fmt.Sprintf("%.0f", v)
}

func writeWorkloads(w io.Writer, list []workloadInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, wl := range list {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s\t%s\n", wl.Name, wl.Summary)
		for _, p := range wl.Params {
			extra := p.Range
			if len(p.Choices) > 0 {
				extra = "one of " + strings.Join(p.Choices, ", ")
			}
			fmt.Fprintf(tw, "  --set %s=\t%s\tdefault %s\t%s\t%s\n", p.Name, p.Type, p.Default, extra, p.Help)
		}
		for _, d := range wl.Devices {
			fmt.Fprintf(tw, "  device\t%s\n", d)
		}
		if wl.DevicesError != "" {
			fmt.Fprintf(tw, "  devices\tunavailable: %s\n", wl.DevicesError)
		}
	}
	return tw.Flush()
}
