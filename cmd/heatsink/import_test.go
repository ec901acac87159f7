package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// TestImportThenExportGivesTheSameRun imports a LibSensorsTools recording
// into a run directory and a real InfluxDB at once, exports the run back out
// of InfluxDB by its ID, and finds the same points and phases.
func TestImportThenExportGivesTheSameRun(t *testing.T) {
	t.Parallel()
	bin := heatsinkBinary(t)
	srv := influxtest.Start(t)
	dir := t.TempDir()
	imported, exported := filepath.Join(dir, "imported"), filepath.Join(dir, "exported")
	src := filepath.Join("..", "..", "recordings", "testdata", "libsensorstools.json")
	influxFlags := []string{"--influx-url", srv.URL(), "--influx-bucket", influxtest.Bucket}

	out, err := exec.Command(bin, append([]string{"import", src, "--to", imported, "--host", "node1",
		"--start", "2020-11-02T09:00:00Z", "--run-id", "titanv-stream"}, influxFlags...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	// The bad value in the fixture is reported with its file and line.
	if !strings.Contains(string(out), "libsensorstools.json:278: gpu-1-gpu-temperature") {
		t.Errorf("import output does not report the bad line:\n%s", out)
	}

	out, err = exec.Command(bin, append([]string{"export", "--run", "titanv-stream", "--out", exported}, influxFlags...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	a, err := rundir.Load(imported)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rundir.Load(exported)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Points) != 96+6 {
		t.Errorf("imported %d points, want 96 readings and 6 phase events", len(a.Points))
	}
	if d := diffPoints(a.Points, b.Points); d != "" {
		t.Errorf("exported run differs from the imported one:\n%s", d)
	}
	if fmt.Sprint(phaseList(a.Meta)) != fmt.Sprint(phaseList(b.Meta)) || len(a.Meta.Phases) != 3 {
		t.Errorf("phases: imported %v, exported %v", phaseList(a.Meta), phaseList(b.Meta))
	}
	if b.Meta.ID != "titanv-stream" || b.Meta.Host != "node1" {
		t.Errorf("exported meta id %q host %q", b.Meta.ID, b.Meta.Host)
	}
}

func TestImportNeedsADestination(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(heatsinkBinary(t), "import", filepath.Join("..", "..", "recordings", "testdata", "seconds.lp")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "nowhere to write") {
		t.Fatalf("err %v: %s", err, out)
	}
}

func phaseList(m *rundir.Meta) []string {
	var s []string
	for _, p := range m.Phases {
		end := "open"
		if p.End != nil {
			end = p.End.UTC().Format("15:04:05.000000")
		}
		s = append(s, p.Name+" "+p.Start.UTC().Format("15:04:05.000000")+".."+end)
	}
	return s
}

// diffPoints compares two runs' points by series, time and field values.
func diffPoints(a, b []point.Point) string {
	render := func(pts []point.Point) map[string]string {
		m := map[string]string{}
		for i := range pts {
			p := &pts[i]
			var fields []string
			for _, f := range p.Fields {
				v := f.Value.String()
				if x, ok := point.Float(f.Value); ok {
					v = fmt.Sprint(x)
				}
				fields = append(fields, f.Key+"="+v)
			}
			slices.Sort(fields)
			m[p.SeriesKey()+" "+fmt.Sprint(p.Time.UnixNano())] = strings.Join(fields, ",")
		}
		return m
	}
	ma, mb := render(a), render(b)
	var diffs []string
	for k, v := range ma {
		if w, ok := mb[k]; !ok {
			diffs = append(diffs, "missing "+k)
		} else if v != w {
			diffs = append(diffs, k+": "+v+" != "+w)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			diffs = append(diffs, "extra "+k)
		}
	}
	if len(diffs) > 10 {
		diffs = append(diffs[:10], fmt.Sprintf("... %d differences", len(diffs)))
	}
	return strings.Join(diffs, "\n")
}

// A line longer than the reader takes is skipped and reading goes on; an
// import that fails leaves no run directory behind, so the retry works.
func TestImportSkipsAGiantLineAndAFailedImportLeavesNothing(t *testing.T) {
	t.Parallel()
	bin := heatsinkBinary(t)
	dir := t.TempDir()
	good := filepath.Join("..", "..", "recordings", "testdata", "seconds.lp")
	giant := filepath.Join(dir, "giant.lp")
	body, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(body), "\n")
	huge := "gpu,gpu=0 temp_c=1 " + strings.Repeat("9", point.MaxLineBytes) + "\n"
	if err := os.WriteFile(giant, []byte(lines[0]+huge+strings.Join(lines[1:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	out, err := exec.Command(bin, "import", giant, "--to", run, "--host", "n1").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "giant.lp:2: line longer than 16 MiB") {
		t.Fatalf("import with a giant line: %v\n%.2000s", err, out)
	}
	r, err := rundir.Load(run)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rundir.Load(mustImport(t, bin, good, filepath.Join(dir, "plain")))
	if len(r.Points) != len(want.Points) {
		t.Errorf("%d points with the giant line skipped, want the file's other %d", len(r.Points), len(want.Points))
	}

	failed := filepath.Join(dir, "failed")
	out, err = exec.Command(bin, "import", good, filepath.Join(dir, "missing.lp"), "--to", failed, "--host", "n1").CombinedOutput()
	if err == nil {
		t.Fatalf("import of a missing file succeeded:\n%s", out)
	}
	if _, err := os.Stat(failed); !os.IsNotExist(err) {
		t.Errorf("the failed import left %s behind (%v)", failed, err)
	}
	mustImport(t, bin, good, failed)
}

func mustImport(t *testing.T, bin, src, to string) string {
	t.Helper()
	if out, err := exec.Command(bin, "import", src, "--to", to, "--host", "n1").CombinedOutput(); err != nil {
		t.Fatalf("import %s: %v\n%s", src, err, out)
	}
	return to
}
