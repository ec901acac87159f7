package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/tune"
)

// heatsink tune's recommendation, run again by heatsink run --tuned: for a
// command, the command with the best configuration filled in; for a
// built-in workload, the workload with its --set parameters, one of them
// overridden on the command line.
func TestRunTunedTakesTheRecommendationBack(t *testing.T) {
	sys, proc := fixtureNode(t, "intel-node")
	roots := []string{"--sysfs-root", sys, "--proc-root", proc, "--interval", "200ms"}
	dir := t.TempDir()
	space := filepath.Join(dir, "score.yaml")
	os.WriteFile(space, []byte(tuneSpace), 0o644)
	tuning := filepath.Join(dir, "tuning")
	args := append([]string{"tune", "--space", space, "--task", "n=10", "--out", tuning, "--method", "random", "--budget", "4",
		"--baseline", "0", "--objective", "min:re:score: ([0-9]+)"}, roots...)
	stdout, stderr, err := heatsink(t, append(append(args, "--", "sh", "-c"), `echo "score: $(( {a} * {b} + {n} ))"`)...)
	if err != nil || !strings.Contains(stdout, "heatsink run --tuned "+tuning) {
		t.Fatalf("heatsink tune: %v\n%s\n%s", err, stdout, stderr)
	}
	best, err := tune.LoadTuned(tuning)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	if _, stderr, err := heatsink(t, append([]string{"run", "--tuned", tuning, "--out", run}, roots...)...); err != nil {
		t.Fatalf("heatsink run --tuned: %v\n%s", err, stderr)
	}
	got, _ := os.ReadFile(filepath.Join(run, "job.stdout"))
	if want := "score: " + strconv.FormatFloat(best.Objective, 'f', -1, 64) + "\n"; string(got) != want {
		t.Errorf("the tuned command printed %q, want %q (best.yaml %+v)", got, want, best)
	}
	if _, stderr, err := heatsink(t, "run", "--tuned", tuning, "--out", filepath.Join(dir, "run2"), "--", "true"); err == nil ||
		!strings.Contains(stderr, "names the job: give no --workload and no command with it") {
		t.Errorf("--tuned with a command too: %v\n%s", err, stderr)
	}

	// A built-in workload: cpu-stream on small arrays.
	space = filepath.Join(dir, "stream.yaml")
	os.WriteFile(space, []byte(`name: stream-cpu
task:
  - {name: ntimes, min: 1, max: 10}
params:
  - {name: size, type: categorical, values: [64KiB, 128KiB]}
  - {name: threads, type: int, min: 1, max: 2}
`), 0o644)
	tuning = filepath.Join(dir, "stream-tuning")
	if stdout, stderr, err := heatsink(t, append([]string{"tune", "--space", space, "--task", "ntimes=2", "--out", tuning, "--workload", "cpu-stream",
		"--method", "random", "--budget", "2", "--baseline", "0"}, roots...)...); err != nil {
		t.Fatalf("heatsink tune --workload: %v\n%s\n%s", err, stdout, stderr)
	}
	if best, err = tune.LoadTuned(tuning); err != nil {
		t.Fatal(err)
	}
	threads := map[string]string{"1": "2", "2": "1"}[best.Values["threads"]]
	run = filepath.Join(dir, "stream-run")
	if _, stderr, err := heatsink(t, append([]string{"run", "--tuned", filepath.Join(tuning, tune.TunedFile), "--set", "threads=" + threads, "--out", run}, roots...)...); err != nil {
		t.Fatalf("heatsink run --tuned: %v\n%s", err, stderr)
	}
	meta, err := rundir.ReadMeta(run)
	if err != nil {
		t.Fatal(err)
	}
	evaluated, err := rundir.ReadMeta(best.Evaluation)
	if err != nil {
		t.Fatal(err)
	}
	// What the best evaluation ran, threads aside.
	want := map[string]string{}
	for k, v := range evaluated.Workload.Params {
		want[k] = v
	}
	want["threads"] = threads
	if meta.Workload.Name != "cpu-stream" || !reflect.DeepEqual(meta.Workload.Params, want) {
		t.Errorf("ran %s %v, want %v (the best evaluation's, threads=%s)", meta.Workload.Name, meta.Workload.Params, want, threads)
	}
}
