package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/buildinfo"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newManCmd writes the manual pages, one per command (heatsink.1,
// heatsink-run.1, ...), from the commands' own help: the page and --help
// cannot drift apart. scripts/package.sh runs it to put them in the .deb;
// it is hidden because a user reads the pages, not writes them.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write the manual pages (section 1, one per command) into DIR",
		Args:   cobra.ExactArgs(1),
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // the same tree gives the same pages
			preformatIndented(root)
			header := &doc.GenManHeader{Title: "HEATSINK", Section: "1", Source: "heatsink " + buildinfo.Read().Version, Manual: "heatsink manual"}
			// Reproducible builds' convention: the pages' date is the
			// source's (package.sh sets it to the commit's), not today's.
			if s, ok := os.LookupEnv("SOURCE_DATE_EPOCH"); ok {
				sec, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return fmt.Errorf("SOURCE_DATE_EPOCH %q: not a count of seconds", s)
				}
				date := time.Unix(sec, 0).UTC()
				header.Date = &date
			}
			if err := doc.GenManTree(root, header, args[0]); err != nil {
				return fmt.Errorf("man pages into %s: %w", args[0], err)
			}
			return nil
		},
	}
}

// preformatIndented keeps the help's indented blocks (examples, tables of
// phases) as they are laid out: the page is rendered from Markdown, where a
// line indented by two spaces is reflowed into its paragraph and one
// indented by four is kept verbatim.
func preformatIndented(c *cobra.Command) {
	lines := strings.Split(c.Long, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "  ") {
			lines[i] = "  " + l
		}
	}
	c.Long = strings.Join(lines, "\n")
	for _, sub := range c.Commands() {
		preformatIndented(sub)
	}
}
