package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// writeMarkdown renders d as GitHub-flavoured Markdown.
func writeMarkdown(w io.Writer, d document) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n", mdEscape(d.Title))
	for _, s := range d.Sections {
		fmt.Fprintf(bw, "\n## %s\n\n", mdEscape(s.Title))
		for _, p := range s.Lead {
			fmt.Fprintf(bw, "%s\n\n", mdEscape(p))
		}
		if s.Table != nil {
			fmt.Fprintf(bw, "| %s |\n", mdRow(s.Table.Head))
			seps := make([]string, len(s.Table.Head))
			for i := range seps {
				seps[i] = "---"
				if i > 0 {
					seps[i] = "---:"
				}
			}
			fmt.Fprintf(bw, "| %s |\n", strings.Join(seps, " | "))
			for _, r := range s.Table.Rows {
				fmt.Fprintf(bw, "| %s |\n", mdRow(r))
			}
			bw.WriteString("\n")
		}
		for _, p := range s.Paras {
			fmt.Fprintf(bw, "%s\n\n", mdEscape(p))
		}
		for _, l := range s.List {
			fmt.Fprintf(bw, "- %s\n", mdEscape(l))
		}
		if len(s.List) > 0 {
			bw.WriteString("\n")
		}
		for _, f := range s.Figures {
			fmt.Fprintf(bw, "![%s](%s)\n\n", mdEscape(f.Title), f.SVG)
		}
	}
	return bw.Flush()
}

var mdReplacer = strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;", "`", "\\`", "[", `\[`, "]", `\]`)

func mdEscape(s string) string { return mdReplacer.Replace(s) }

func mdRow(cells []string) string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = mdEscape(c)
	}
	return strings.Join(out, " | ")
}
