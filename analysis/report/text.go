package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// textWidth is the width text reports fit by default: a terminal's 80
// columns would cut the component table in half, 100 leaves it whole.
const textWidth = 100

// writeText renders d for a terminal: aligned columns, underlined headings.
// With width > 0 prose is wrapped to it and a table wider than it loses its
// optional columns, the table's note naming them (--wide shows them).
func writeText(w io.Writer, d document, width int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n%s\n", d.Title, strings.Repeat("=", len([]rune(d.Title))))
	for _, s := range d.Sections {
		fmt.Fprintf(bw, "\n%s\n%s\n", s.Title, strings.Repeat("-", len([]rune(s.Title))))
		for _, p := range s.Lead {
			fmt.Fprintln(bw, wrap(p, width, ""))
		}
		if s.Table != nil {
			t, dropped := fitTable(s.Table, width)
			tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, strings.Join(t.Head, "\t")+"\t")
			for _, r := range t.Rows {
				fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(dropped) > 0 {
				fmt.Fprintln(bw, wrap("(left out to fit "+fmt.Sprint(width)+" columns: "+strings.Join(dropped, ", ")+"; --wide shows them)", width, ""))
			}
		}
		for _, p := range s.Paras {
			fmt.Fprintln(bw, wrap(p, width, ""))
		}
		for _, l := range s.List {
			fmt.Fprintln(bw, wrap("  - "+l, width, "    "))
		}
		for _, f := range s.Figures {
			fmt.Fprintf(bw, "  %s: %s, %s\n", f.Title, f.SVG, f.PNG)
		}
	}
	return bw.Flush()
}

// tableWidth is the width tabwriter gives t: each column as wide as its
// widest cell, two spaces between.
func tableWidth(t *table) int {
	w := 0
	for j := range t.Head {
		col := len([]rune(t.Head[j]))
		for _, r := range t.Rows {
			col = max(col, len([]rune(r[j])))
		}
		w += col + 2
	}
	return w
}

// fitTable drops t's optional columns, least needed first, until it fits
// width (0: no limit), and names those it dropped.
func fitTable(t *table, width int) (*table, []string) {
	if width <= 0 || tableWidth(t) <= width {
		return t, nil
	}
	out := &table{Head: slices.Clone(t.Head)}
	for _, r := range t.Rows {
		out.Rows = append(out.Rows, slices.Clone(r))
	}
	var dropped []string
	for _, name := range t.Optional {
		if tableWidth(out) <= width {
			break
		}
		j := slices.Index(out.Head, name)
		if j < 0 {
			continue
		}
		out.Head = slices.Delete(out.Head, j, j+1)
		for i := range out.Rows {
			out.Rows[i] = slices.Delete(out.Rows[i], j, j+1)
		}
		dropped = append(dropped, name)
	}
	return out, dropped
}

// wrap breaks s at spaces into lines of at most width runes (0: no limit),
// continuation lines indented by indent.
func wrap(s string, width int, indent string) string {
	if width <= 0 || len([]rune(s)) <= width {
		return s
	}
	var b strings.Builder
	line := 0
	for i, word := range strings.Split(s, " ") {
		n := len([]rune(word))
		if i > 0 && line+1+n > width {
			b.WriteString("\n" + indent)
			line = len(indent)
		} else if i > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(word)
		line += n
	}
	return b.String()
}
