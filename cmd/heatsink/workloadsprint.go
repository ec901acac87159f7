package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/heatsink-hpc/heatsink/workloads"
)

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
