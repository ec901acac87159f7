package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/heatsink-hpc/heatsink/console"
	"github.com/heatsink-hpc/heatsink/node"
	"github.com/heatsink-hpc/heatsink/progress"
	"github.com/spf13/cobra"
)

// progressEvery is how often the progress line is written off a terminal.
const progressEvery = 10 * time.Second

// newProgress makes run's and collect's live display on stderr. On a
// terminal the log is re-pointed through it (lines above the bars), so
// call it before anything takes slog.Default().
func newProgress(cmd *cobra.Command) *progress.Display {
	term := console.IsTerminal(os.Stderr)
	d := progress.New(os.Stderr, term, progressEvery)
	if !term {
		// Off a terminal the progress is a log record like the others on
		// stderr (logfmt unless --log-format says otherwise).
		d.SetLogger(slog.Default())
		return d
	}
	lvl, err := console.ParseLevel(cmd.Flag("log-level").Value.String())
	if err != nil {
		return d // already refused by setLogger
	}
	f := console.Format(cmd.Flag("log-format").Value.String())
	if f == console.Auto {
		f = console.Human
	}
	slog.SetDefault(slog.New(console.NewHandler(d.LogWriter(), f, lvl)))
	return d
}

// showProgress runs d over status until the returned stop is called; stop
// returns once the display has finished drawing.
func showProgress(ctx context.Context, d *progress.Display, status func() progress.Status) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, status)
	}()
	return func() {
		cancel()
		<-done
	}
}

// collectStatus is collect's progress: one phase, --duration long.
func collectStatus(start time.Time, duration time.Duration) func() progress.Status {
	return func() progress.Status {
		return progress.Status{Phase: "collect", Elapsed: time.Since(start), Planned: duration}
	}
}

// printCollectSummary closes collect: a line on a terminal, else a log
// record, so a logged stream holds one format.
func printCollectSummary(cmd *cobra.Command, st node.CollectStats, dir string) {
	if !console.IsTerminal(os.Stderr) {
		slog.Info("collection finished", "ticks", st.Ticks, "points_written", st.Written, "missed_ticks", st.MissedTicks, "out", dir)
		return
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "heatsink: %d ticks, %d points written, %d missed ticks -> %s\n",
		st.Ticks, st.Written, st.MissedTicks, dir)
}
