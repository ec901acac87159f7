package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

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
