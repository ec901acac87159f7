package main

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/spf13/cobra"
)

func newAlertsCmd() *cobra.Command {
	var check string
	cmd := &cobra.Command{
		Use:   "alerts --check CONFIG",
		Short: "Validate the alert rules of a configuration file and print them",
		Long: `alerts --check loads CONFIG as collect and run would, validates its alert
rules (unknown measurements, fields and tags, bad expressions, impossible
thresholds are errors naming the file and line) and prints one line per rule.
The rule language is described in configs/alerts.yaml, the default rules.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if check == "" {
				return fmt.Errorf("give --check CONFIG")
			}
			cfg, err := configs.Load(check)
			if err != nil {
				return err
			}
			a := cfg.Alerts
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s: %d rules, %d webhooks, %d commands\n", check, len(a.Rules), len(a.Webhooks), len(a.Commands))
			for _, r := range a.Rules {
				fmt.Fprintf(w, "  %s\n", r)
			}
			for _, name := range slices.Sorted(maps.Keys(a.Webhooks)) {
				h := a.Webhooks[name]
				format := h.Format
				if format == "" {
					format = "generic"
				}
				fmt.Fprintf(w, "  webhook %s: %s to %s\n", name, format, h.URL)
			}
			for _, name := range slices.Sorted(maps.Keys(a.Commands)) {
				fmt.Fprintf(w, "  command %s: %q\n", name, a.Commands[name].Argv)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&check, "check", "", "configuration file (YAML) whose alert rules to validate")
	return cmd
}

// alertSinks returns the alert engine of cfg's rules as a sink list for
// collectionOptions.sinks, and the engine (nil, with no sinks, when cfg has
// no rules). emit puts alert points into the store (the collection's
// collector.Emit, which exists only once startCollection returns: pass a
// closure); onEvent records firings, clearings and guard actions.
func alertSinks(cfg *configs.Config, emit func(...point.Point), onEvent func(rundir.Event)) ([]collectors.Sink, *alerts.Engine, error) {
	if len(cfg.Alerts.Rules) == 0 {
		return nil, nil, nil
	}
	eng, err := alerts.NewEngine(cfg.Alerts, alerts.Options{
		Emit:     emit,
		OnEvent:  onEvent,
		Logger:   slog.Default(),
		Interval: cfg.Interval,
		DropEnv:  cfg.SecretEnv(),
	})
	if err != nil {
		return nil, nil, err
	}
	return []collectors.Sink{eng}, eng, nil
}
