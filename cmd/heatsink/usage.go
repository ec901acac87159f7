package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/heatsink-hpc/heatsink/console"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// setLogger installs the log handler --log-level and --log-format ask for.
func setLogger(level, format string) error {
	lvl, err := console.ParseLevel(level)
	if err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	f, err := console.ParseFormat(format)
	if err != nil {
		return fmt.Errorf("--log-format: %w", err)
	}
	slog.SetDefault(slog.New(console.NewHandler(os.Stderr, f, lvl)))
	return nil
}

// suggestFlag adds to an unknown-flag error the closest flag the command
// has, and where to see them all, the same for every command.
func suggestFlag(cmd *cobra.Command, err error) error {
	where := ""
	if cmd.HasParent() {
		where = strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ") + ": "
	}
	help := fmt.Sprintf(" (see %s --help)", cmd.CommandPath())
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return fmt.Errorf("%s%w%s", where, err, help)
	}
	best, bestD := "", 3 // more than two edits away is not a typo
	visit := func(f *pflag.Flag) {
		if d := editDistance(name, f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best != "" {
		return fmt.Errorf("%s%w; did you mean --%s?", where, err, best)
	}
	return fmt.Errorf("%s%w%s", where, err, help)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
