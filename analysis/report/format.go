package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// Format is an output format of `heatsink report` and `heatsink compare`.
type Format string

// The formats.
const (
	Text Format = "text"
	// TextWide is Text with every column, however wide (--wide).
	TextWide Format = "text-wide"
	Markdown Format = "md"
	HTML     Format = "html"
	JSON     Format = "json"
)

// ParseFormat accepts text, md (or markdown), html and json.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "text", "txt":
		return Text, nil
	case "md", "markdown":
		return Markdown, nil
	case "html":
		return HTML, nil
	case "json":
		return JSON, nil
	}
	return "", fmt.Errorf("unknown format %q: want text, md, html or json", s)
}

// Ext returns the file extension of the format, without the dot.
func (f Format) Ext() string {
	if f == Text || f == TextWide {
		return "txt"
	}
	return string(f)
}

// Write renders rep in format f. figs are the plots written beside the
// report (HTML shows them, text and Markdown name them; JSON omits them).
func Write(w io.Writer, f Format, rep *analysis.Report, figs []Figure) error {
	// Analyze does this; a report built or edited elsewhere may not have.
	rep.Notes = append(rep.Notes, analysis.DropNonFinite(rep)...)
	if f == JSON {
		return writeJSON(w, rep)
	}
	return render(w, f, reportDocument(rep, figs))
}

// WriteComparison renders cmp in format f.
func WriteComparison(w io.Writer, f Format, cmp *analysis.Comparison, figs []Figure) error {
	if dropped := analysis.DropNonFinite(cmp); len(dropped) > 0 && len(cmp.Runs) > 0 {
		cmp.Runs[0].Notes = append(cmp.Runs[0].Notes, dropped...)
	}
	if f == JSON {
		return writeJSON(w, cmp)
	}
	return render(w, f, comparisonDocument(cmp, figs))
}

func render(w io.Writer, f Format, d document) error {
	switch f {
	case Text:
		return writeText(w, d, textWidth)
	case TextWide:
		return writeText(w, d, 0)
	case Markdown:
		return writeMarkdown(w, d)
	case HTML:
		return writeHTML(w, d)
	}
	return fmt.Errorf("unknown format %q", f)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}
