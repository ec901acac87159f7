package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/rundir"
)

// On a machine without a GPU (this one) the survey records its run
// directory, says there is nothing to survey, and exits 2: the status a
// healthcheck reads as "could not run", not as "healthy".
func TestSurveyWithoutAGPUExitsTwo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "survey")
	code, out := exitCode(t, "survey", "--out", dir, "--workload", "cpu-stream", "--set", "size=1MiB", "--set", "threads=1", "--baseline", "1s")
	if code != 2 || !strings.Contains(out, "nothing to survey: no GPU reported a temperature") {
		t.Fatalf("exit %d, want 2 saying there is no GPU:\n%s", code, out)
	}
	m, err := rundir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "failed" || m.End == nil {
		t.Errorf("run.json status %q end %v, want failed with an end", m.Status, m.End)
	}
	if _, err := os.Stat(filepath.Join(dir, "survey.json")); err == nil {
		t.Error("survey.json written for a survey that never ran")
	}
}

func TestSurveyRefusesBeforeAnythingRuns(t *testing.T) {
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "survey.json"), []byte(`{"schema": 1, "gpus": [`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"survey"}, "--out DIR is required"},
		{[]string{"survey", "--out", filepath.Join(tmp, "a"), "--against", filepath.Join(tmp, "none")}, "--against: open " + filepath.Join(tmp, "none", "survey.json")},
		{[]string{"survey", "--out", filepath.Join(tmp, "b"), "--against", bad}, "--against: " + filepath.Join(bad, "survey.json") + ": unexpected end of JSON input"},
		{[]string{"survey", "--out", filepath.Join(tmp, "c"), "--workload", "nosuch"}, "nosuch"},
		{[]string{"survey", "--out", filepath.Join(tmp, "d"), "--workload", "cpu-stream", "--set", "size=huge"}, "size"},
		{[]string{"survey", "--out", filepath.Join(tmp, "e"), "--min-load", "2m", "--max-load", "1m"}, "min-load"},
		{[]string{"survey", "--out", filepath.Join(tmp, "f"), "--workload", "cpu-stream", "--", "true"}, "not both"},
		{[]string{"survey", "--out", filepath.Join(tmp, "g"), "--against", "influx"}, "--against influx: no InfluxDB configured"},
		{[]string{"survey", "--out", filepath.Join(tmp, "h"), "--load-budget", "-1s"}, "load budget"},
	} {
		code, out := exitCode(t, c.args...)
		if code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("heatsink %v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, out)
		}
		if _, err := os.Stat(filepath.Join(tmp, "a", "run.json")); err == nil {
			t.Errorf("heatsink %v recorded a run before refusing", c.args)
		}
	}
}
