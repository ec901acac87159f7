package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/heatsink-hpc/heatsink/workloads"
	"github.com/spf13/cobra"
)

// builtinWorkloads lists what `heatsink run --workload NAME` can run: the
// workloads registered by the packages builtin.go imports.
func builtinWorkloads() []workloads.Workload { return workloads.Registered() }

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
			info.Params = append(info.Params, paramInfo{Name: p.Name, Type: p.Type.String(), Default: p.Default,
				Range: p.Range(), Choices: p.Choices, Help: p.Help})
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
