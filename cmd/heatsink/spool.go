package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/spool"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/spf13/cobra"
)

func newSpoolCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spool",
		Short: "List the InfluxDB spools and send one to a destination of your choice",
		Long: `Each InfluxDB destination (server, organisation, bucket) has its own spool, a
subdirectory of the spool root (sinks.influx.spool_dir, default ` + influx.DefaultSpoolDir() + `),
and a sink sends only its own destination's spool. Points an older heatsink left
in the root itself, and those of a destination no sink uses any more, stay where
they are until you send them:

  heatsink spool list
  heatsink spool send ` + influx.DefaultSpoolDir() + ` --to http://db:8086 --bucket heatsink`,
	}
	cmd.AddCommand(newSpoolListCmd(), newSpoolSendCmd())
	return cmd
}

func newSpoolListCmd() *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "list [ROOT]",
		Short: "The spools under ROOT: destination, unsent points, oldest, the process using it",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := influx.DefaultSpoolDir()
			if config != "" {
				cfg, err := configs.Load(config)
				if err != nil {
					return err
				}
				if d := influx.ConfigOf(cfg).SpoolDir; d != "" {
					root = d
				}
			}
			if len(args) == 1 {
				root = args[0]
			}
			infos, err := spool.Find(root)
			if err != nil {
				return err
			}
			return printSpools(cmd, root, infos)
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "configuration file whose sinks.influx.spool_dir is the root")
	return cmd
}

func printSpools(cmd *cobra.Command, root string, infos []spool.Info) error {
	out := cmd.OutOrStdout()
	if len(infos) == 0 {
		fmt.Fprintf(out, "no spool under %s\n", root)
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SPOOL\tDESTINATION\tUNSENT POINTS\tUNSENT BYTES\tOLDEST\tIN USE BY PID")
	for _, in := range infos {
		dest, oldest, pid := in.Destination, "-", in.InUseBy
		if dest == "" {
			dest = "none recorded (an older heatsink's spool: send it with heatsink spool send)"
		}
		if !in.Oldest.IsZero() {
			oldest = in.Oldest.UTC().Format(time.RFC3339)
		}
		if pid == "" {
			pid = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", in.Dir, dest, in.UnsentPoints, in.UnsentBytes, oldest, pid)
	}
	return tw.Flush()
}

func newSpoolSendCmd() *cobra.Command {
	var config, tokenFile string
	ic := influx.Config{}
	cmd := &cobra.Command{
		Use:   "send DIR --to URL --bucket BUCKET",
		Short: "Send the points waiting in one spool to the InfluxDB destination named here",
		Long: `send writes the unsent points of the spool DIR (see heatsink spool list) to the
destination --to and --bucket name, whatever destination the spool records; the
server's other settings (token, TLS) come from --config's sinks.influx when given.
It stops at the first write the server refuses; what was not sent stays.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			base := influx.Config{}
			if config != "" {
				cfg, err := configs.Load(config)
				if err != nil {
					return err
				}
				base = *influx.ConfigOf(cfg)
			}
			base.URL, base.Bucket = ic.URL, ic.Bucket
			if cmd.Flags().Changed("org") {
				base.Org = ic.Org
			}
			if tokenFile != "" {
				base.Token = secret.Value{File: tokenFile}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return sendSpool(ctx, cmd, args[0], base)
		},
	}
	f := cmd.Flags()
	f.StringVar(&ic.URL, "to", "", "InfluxDB URL to send the points to (required)")
	f.StringVar(&ic.Bucket, "bucket", "", "bucket (1.8: database or database/retention-policy) (required)")
	f.StringVar(&ic.Org, "org", "", "organisation (2.x; ignored by 1.8)")
	f.StringVar(&tokenFile, "token-file", "", "file holding the token (1.8: user:password)")
	f.StringVar(&config, "config", "", "configuration whose sinks.influx gives the token and TLS settings")
	cmd.MarkFlagRequired("to")
	cmd.MarkFlagRequired("bucket")
	return cmd
}

func sendSpool(ctx context.Context, cmd *cobra.Command, dir string, c influx.Config) error {
	rep, err := influx.SendSpool(ctx, dir, c, slog.Default())
	if err != nil && rep.SentPoints == 0 {
		return err
	}
	out := cmd.OutOrStdout()
	recorded := rep.Recorded
	if recorded == "" {
		recorded = "no destination"
	}
	fmt.Fprintf(out, "spool %s (recorded for %s): %s sent to %s, %s left\n",
		dir, recorded, count(int(rep.SentPoints), "point"), rep.To, count(int(rep.LeftPoints), "point"))
	return err
}
