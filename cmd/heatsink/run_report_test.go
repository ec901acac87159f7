package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// fixtureNode copies a fixture machine from sensors/testdata (symlinks and
// all, as Linux lays sysfs out) so a job can heat it up by writing its
// hwmon files.
func fixtureNode(t *testing.T, name string) (sys, proc string) {
	t.Helper()
	dst := t.TempDir()
	if out, err := exec.Command("cp", "-a", filepath.Join("..", "..", "sensors", "testdata", name), dst).CombinedOutput(); err != nil {
		t.Fatalf("copy fixture %s: %v\n%s", name, err, out)
	}
	return filepath.Join(dst, name, "sys"), filepath.Join(dst, name, "proc")
}

// tableRow returns the cells of the text table row that starts with id.
func tableRow(t *testing.T, report, id string) []string {
	t.Helper()
	for _, line := range strings.Split(report, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == id {
			return f
		}
	}
	t.Fatalf("no row %s in the report:\n%s", id, report)
	return nil
}

// A job that heats the Intel fixture's six cores by 3 °C a second for 3 s:
// --report prints the very report heatsink report prints for the run, and
// leaves report.html and its figures in the run directory.
func TestRunReportAnalysesTheRunItRecorded(t *testing.T) {
	sys, proc := fixtureNode(t, "intel-node")
	cores := filepath.Join(sys, "devices", "platform", "coretemp.0", "hwmon", "hwmon1")
	dir := filepath.Join(t.TempDir(), "run")
	// The source keeps each file open, as it may in sysfs, so the files are
	// rewritten in place: opened without truncation (<>), the new value the
	// same length as the old, never an empty file for a sample to read.
	heat := `for i in 1 2 3; do for f in "$1"/temp*_input; do echo $(($(cat "$f") + 3000)) 1<>"$f"; done; sleep 1; done`
	stdout, stderr, err := heatsink(t, "run", "--sysfs-root", sys, "--proc-root", proc,
		"--baseline", "3s", "--cooldown", "3s", "--out", dir, "--report", "--", "sh", "-c", heat, "sh", cores)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	m, err := rundir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, "heatsink report: run "+m.ID+"\n") {
		t.Fatalf("stdout does not start with the report of run %s:\n%s", m.ID, stdout)
	}
	// The six cores idle at 38, 45, 41, 48, 44 and 40 °C: a mean of 42.7,
	// 9 °C more after three rounds.
	row := tableRow(t, stdout, "cpu:platform_coretemp_0")
	// Columns: component, kind, idle min, idle mean, idle max, max, heat
	// interval (the coolant's, never computed here, are left out).
	if len(row) < 7 || row[3] != "42.7" || row[5] != "51.7" || row[6] == "—" {
		t.Errorf("CPU row %v: want idle mean 42.7, max 51.7 and a heat interval", row)
	}

	// The same function as heatsink report: the same text.
	again, stderr2, err := heatsink(t, "report", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr2)
	}
	if again != stdout {
		t.Errorf("run --report printed\n%s\nheatsink report prints\n%s", stdout, again)
	}
	if !strings.Contains(stderr, filepath.Join(dir, "report.html")) {
		t.Errorf("stderr does not say where report.html is:\n%s", stderr)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), "<svg "); n < 2 || strings.Contains(string(page), "<img") {
		t.Errorf("report.html inlines %d figures and links images %v; want temperatures and heat intervals inline", n, strings.Contains(string(page), "<img"))
	}
	for _, fig := range []string{"temperatures", "heat-intervals"} {
		for _, ext := range []string{".svg", ".png"} {
			if st, err := os.Stat(filepath.Join(dir, fig+ext)); err != nil || st.Size() == 0 {
				t.Errorf("%s%s: %v", fig, ext, err)
			}
		}
	}
}

// A machine without a temperature sensor (a VM; here an empty sysfs) gets a
// report that says so and why, and with --stdout the points keep stdout to
// themselves: the report goes to stderr.
func TestRunReportWithoutTemperaturesSaysWhy(t *testing.T) {
	sys := t.TempDir()
	dir := filepath.Join(t.TempDir(), "run")
	stdout, stderr, err := heatsink(t, "run", "--sysfs-root", sys, "--baseline", "1s", "--cooldown", "1s",
		"--out", dir, "--stdout=lp", "--report", "--", "true")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	for i, l := range lines {
		if _, err := point.ParseLine([]byte(l)); err != nil {
			t.Fatalf("stdout line %d is not line protocol (%v): %q", i+1, err, l)
		}
	}
	for _, want := range []string{
		"heatsink report: run ",
		"source hwmon was unavailable: no hwmon class at " + filepath.Join(sys, "class", "hwmon"),
		"No temperature was recorded (GPU, CPU chip, NVMe, coolant or water), so no thermal result can be given",
	} {
		// The text report wraps at 100 columns: compare words, not lines.
		if !strings.Contains(strings.Join(strings.Fields(stderr), " "), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Error(err)
	}
}

// --report needs a run directory to analyse, and a run directory is never
// reused: both refused before anything runs.
func TestRunReportRefusals(t *testing.T) {
	used := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(used, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(used, rundir.MetaFile), []byte(`{"id":"old"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--stdout=lp", "--report", "--", "touch", marker}, "--report analyses the run directory: give --out DIR too"},
		{[]string{"run", "--out", used, "--", "touch", marker}, "already holds a run (run.json)"},
		{[]string{"run", "--out", filepath.Join(t.TempDir(), "r"), "--stdout", "json", "--", "touch", marker}, "--stdout=json"},
	} {
		_, stderr, err := heatsink(t, tc.args...)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("heatsink %v: err %v, stderr %q; want a failure saying %q", tc.args, err, stderr, tc.want)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the job ran although the command line was refused")
	}
	if b, _ := os.ReadFile(filepath.Join(used, rundir.MetaFile)); string(b) != `{"id":"old"}` {
		t.Errorf("the old run.json was changed: %s", b)
	}
}

// heatsink run often writes as root: an --out that is a symbolic link, or
// holds one where a run file goes, or holds anything else at all, is
// refused before anything runs and nothing is written through the link.
func TestRunOutRefusesSymlinksAndForeignFiles(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	victimDir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	outDir := func(link, to string) string {
		dir := filepath.Join(t.TempDir(), "run")
		if link == "" {
			if err := os.Symlink(to, dir); err != nil {
				t.Fatal(err)
			}
			return dir
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	foreign := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"dir", outDir("", victimDir), "is a symbolic link"},
		{"run.json", outDir(rundir.MetaFile, victim), "run.json"},
		{"points.lp", outDir(rundir.PointsFile, victim), "points.lp"},
		{"job.stdout", outDir("job.stdout", victim), "job.stdout"},
		{"non-run", foreign, "not empty and holds no run (notes.txt"},
	} {
		_, stderr, err := heatsink(t, "run", "--out", tc.dir, "--", "touch", marker)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: err %v, stderr %q; want a failure saying %q", tc.name, err, stderr, tc.want)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the job ran although --out was refused")
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("written through a link: %q", b)
	}
	if ents, _ := os.ReadDir(victimDir); len(ents) != 0 {
		t.Errorf("written through the linked directory: %v", ents)
	}
}
