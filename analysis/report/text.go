package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writeText renders d for a terminal: aligned columns, underlined headings.
func writeText(w io.Writer, d document) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n%s\n", d.Title, strings.Repeat("=", len([]rune(d.Title))))
	for _, s := range d.Sections {
		fmt.Fprintf(bw, "\n%s\n%s\n", s.Title, strings.Repeat("-", len([]rune(s.Title))))
		if s.Table != nil {
			tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, strings.Join(s.Table.Head, "\t")+"\t")
			for _, r := range s.Table.Rows {
				fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		for _, p := range s.Paras {
			fmt.Fprintln(bw, p)
		}
		for _, l := range s.List {
			fmt.Fprintln(bw, "  - "+l)
		}
		for _, f := range s.Figures {
			fmt.Fprintf(bw, "  %s: %s, %s\n", f.Title, f.SVG, f.PNG)
		}
	}
	return bw.Flush()
}
