package report

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// testdataRuns analyses every run of analysis/testdata: the two kept as
// run directories and those kept as recordings.tar.gz (each of their
// run-* directories), keyed by a name for messages.
func testdataRuns(t *testing.T) map[string]*analysis.Report {
	t.Helper()
	root := filepath.Join("..", "testdata")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	reps := map[string]*analysis.Report{}
	add := func(name, dir string) {
		r, err := analysis.Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		reps[name] = analysis.Analyze(r, analysis.DefaultOptions())
	}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "run.json")); err == nil {
			add(e.Name(), dir)
			continue
		}
		tgz := filepath.Join(dir, "recordings.tar.gz")
		if _, err := os.Stat(tgz); err != nil {
			continue
		}
		out := t.TempDir()
		untarRuns(t, tgz, out)
		runs, _ := filepath.Glob(filepath.Join(out, "run-*", "run.json"))
		for _, rj := range runs {
			add(e.Name()+"/"+filepath.Base(filepath.Dir(rj)), filepath.Dir(rj))
		}
	}
	if len(reps) < 5 {
		t.Fatalf("only %d testdata runs found", len(reps))
	}
	return reps
}

// untarRuns unpacks the run directories of a testdata archive into dir.
func untarRuns(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !strings.HasPrefix(h.Name, "run-") {
			continue
		}
		out := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(out, 0o755)
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(out), 0o755); err == nil {
				var w *os.File
				if w, err = os.Create(out); err == nil {
					_, err = io.Copy(w, tr)
					w.Close()
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Every text report of every testdata run, and the comparison of the runs
// recorded together, fits 100 columns (they reached 114 and 156).
func TestEveryTextReportOfTheTestdataFitsAHundredColumns(t *testing.T) {
	reps := testdataRuns(t)
	check := func(name string, write func(io.Writer) error) {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, line := range strings.Split(buf.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > textWidth {
				t.Errorf("%s: line %d is %d columns: %q", name, i+1, n, line)
			}
		}
	}
	var pair []*analysis.Report
	for name, rep := range reps {
		check(name, func(w io.Writer) error { return Write(w, Text, rep, nil) })
		if strings.HasPrefix(name, "h100-pair/") {
			pair = append(pair, rep)
		}
	}
	if len(pair) != 2 {
		t.Fatalf("h100-pair holds %d runs, want 2", len(pair))
	}
	check("compare h100-pair", func(w io.Writer) error { return WriteComparison(w, Text, analysis.Compare(pair), nil) })
}

// unitless are the table headers that need no unit: names, labels,
// counts, dimensionless statistics, and the workload table's columns,
// whose unit is each row's metric name (flop_per_s, runtime_s).
var unitless = map[string]bool{
	"component": true, "kind": true, "model": true, "tank": true, "complete": true, "detected from": true,
	"run": true, "cooling": true, "method": true, "metric": true, "n": true, "iterations": true,
	"R²": true, "r²": true, "p-value": true, "significant slowdown": true, "longer when hotter": true,
	"median": true, "min": true, "max": true, "components": true,
}

// perMetric are the comparison's per-run columns of the workload table,
// whose unit is each row's metric name: "A median".
var perMetric = regexp.MustCompile(`^[A-Z]+ median$`)

// unit is what a header with a unit carries: °C, s, %, kJ, W, a rate.
var unit = regexp.MustCompile(`°C|(^|\s)s(/|$|\s)|\ss\)|%|kJ|\bW\b|/s\b|\bGiB\b|\bMHz\b|\bC\b$`)

// Every table header of every testdata report and comparison gives its
// unit, or is a name, count or ratio that has none.
func TestEveryTableHeaderGivesItsUnit(t *testing.T) {
	reps := testdataRuns(t)
	check := func(name string, d document) {
		for _, s := range d.Sections {
			if s.Table == nil {
				continue
			}
			for _, h := range s.Table.Head {
				if !unitless[h] && !perMetric.MatchString(h) && !unit.MatchString(h) {
					t.Errorf("%s: section %q: header %q gives no unit", name, s.Title, h)
				}
			}
		}
	}
	var all []*analysis.Report
	for name, rep := range reps {
		check(name, reportDocument(rep, nil))
		all = append(all, rep)
	}
	check("comparison", comparisonDocument(analysis.Compare(all), nil))
}
