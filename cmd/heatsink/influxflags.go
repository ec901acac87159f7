package main

import (
	"errors"
	"fmt"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/spf13/cobra"
)

// addInfluxFlags adds the flags that override the configuration's
// sinks.influx section; commands that collect (collect, run) call it and
// then applyInfluxFlags after loading the configuration.
func addInfluxFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("influx-url", "", "also send every point to InfluxDB at this URL (overrides sinks.influx.url)")
	f.String("influx-org", "", "InfluxDB organisation (2.x; ignored by 1.8)")
	f.String("influx-bucket", "", "InfluxDB bucket (1.8: database or database/retention-policy)")
	f.String("influx-token-file", "", "file holding the InfluxDB token (1.8: user:password)")
	f.String("influx-spool", "", "root of the InfluxDB spools, one per destination (default "+influx.DefaultSpoolDir()+"; heatsink spool list)")
	f.Bool("influx-optional", false, "start even when InfluxDB refuses the token or has no such bucket (one that does not answer never stops a start)")
}

// applyInfluxFlags copies the influx flags that were given into cfg and
// validates the result.
func applyInfluxFlags(cmd *cobra.Command, cfg *configs.Config) error {
	f := cmd.Flags()
	ic := influx.ConfigOf(cfg)
	for name, dst := range map[string]*string{
		"influx-url": &ic.URL, "influx-org": &ic.Org, "influx-bucket": &ic.Bucket, "influx-spool": &ic.SpoolDir,
	} {
		if f.Changed(name) {
			*dst, _ = f.GetString(name)
		}
	}
	if f.Changed("influx-optional") {
		ic.Optional, _ = f.GetBool("influx-optional")
	}
	if f.Changed("influx-token-file") {
		path, _ := f.GetString("influx-token-file")
		ic.Token = secret.Value{File: path}
	}
	if err := ic.Validate(); err != nil {
		var ce *influx.ConfigError
		if errors.As(err, &ce) && len(ce.Path) > 0 {
			if flag, ok := influxFlagOf[ce.Path[0]]; ok {
				return fmt.Errorf("influx: %s: %s (flag %s, or sinks.influx.%s in the config)", ce.Path[0], ce.Msg, flag, ce.Path[0])
			}
		}
		return fmt.Errorf("influx: %w", err)
	}
	return nil
}

var influxFlagOf = map[string]string{
	"url": "--influx-url", "org": "--influx-org", "bucket": "--influx-bucket", "spool_dir": "--influx-spool",
}
