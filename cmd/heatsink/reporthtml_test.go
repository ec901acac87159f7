package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// report.html is one file: its figures are inline SVG whether it is
// written with --out or printed to stdout (which referred to images that
// were never written), and it names no file beside it.
func TestReportHTMLCarriesItsFiguresInline(t *testing.T) {
	dir := rampRun(t, "ramp", 0.1)
	out := filepath.Join(t.TempDir(), "rep")
	if _, stderr, err := heatsink(t, "report", dir, "--format", "html", "--out", out); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	file, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := heatsink(t, "report", dir, "--format", "html")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	for name, page := range map[string]string{"--out": string(file), "stdout": stdout} {
		if n := strings.Count(page, "<svg "); n < 2 {
			t.Errorf("%s: %d inline figures, want temperatures and heat intervals", name, n)
		}
		for _, ref := range []string{"<img", `src="`, ".svg\"", ".png\""} {
			if strings.Contains(page, ref) {
				t.Errorf("%s: the page refers to a file (%s)", name, ref)
			}
		}
	}
}
