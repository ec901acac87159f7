package main

import (
	"fmt"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/spf13/cobra"
)

// applyStdoutFlag puts --stdout, when given, over the configuration's
// sinks.stdout, so the stdout sink is built (and kept over a reload, which
// applies the flag again) like any configured sink.
func applyStdoutFlag(cmd *cobra.Command, cfg *configs.Config) error {
	f := cmd.Flags().Lookup("stdout")
	if f == nil || !f.Changed {
		return nil
	}
	format := collectors.StdoutFormat(f.Value.String())
	if err := format.Validate(); err != nil {
		return fmt.Errorf("--stdout: %q is not one of lp, json", f.Value.String())
	}
	*collectors.StdoutOf(cfg) = format
	return nil
}
