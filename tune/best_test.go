package tune

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/workloads"
)

func TestTunedJob(t *testing.T) {
	const tuned = "--tuned testdata/tuned/workload.yaml"
	for _, tc := range []struct {
		name, path, workload string
		sets, args           []string
		want                 Job
		wantErr              string
	}{
		{name: "no --tuned", workload: "dgemm", sets: []string{"n=8"},
			want: Job{Workload: "dgemm", Layers: []workloads.Layer{{Source: "--set", Values: map[string]string{"n": "8"}}}}},
		{name: "a command", args: []string{"echo"}, want: Job{Command: []string{"echo"}}},
		{name: "workload", path: "testdata/tuned/workload.yaml",
			want: Job{Workload: "cpu-stream", Layers: []workloads.Layer{{Source: tuned, Values: map[string]string{"ntimes": "2", "size": "256KiB", "threads": "2"}}}}},
		// Resolve applies the order: --set's layer comes last and wins.
		{name: "a --set overrides", path: "testdata/tuned/workload.yaml", sets: []string{"threads=1"},
			want: Job{Workload: "cpu-stream", Layers: []workloads.Layer{
				{Source: tuned, Values: map[string]string{"ntimes": "2", "size": "256KiB", "threads": "2"}},
				{Source: "--set", Values: map[string]string{"threads": "1"}}}}},
		{name: "a key twice in --set", path: "testdata/tuned/workload.yaml", sets: []string{"threads=1", "threads=3"}, wantErr: `--set "threads=3": threads given twice`},
		{name: "a key twice without --tuned", workload: "dgemm", sets: []string{"n=1", "n=1"}, wantErr: `--set "n=1": n given twice`},
		{name: "command", path: "testdata/tuned/command.yaml", want: Job{Command: []string{"sh", "-c", `echo "score: $(( 1 * 1 + 10 ))"`}}},
		{name: "--set on a command", path: "testdata/tuned/command.yaml", sets: []string{"a=2"}, wantErr: "is a command, not a built-in workload"},
		{name: "and a command", path: "testdata/tuned/command.yaml", args: []string{"echo"}, wantErr: "names the job"},
		{name: "and a workload", path: "testdata/tuned/workload.yaml", workload: "dgemm", wantErr: "names the job"},
		{name: "both kinds", path: "testdata/tuned/both.yaml", wantErr: "testdata/tuned/both.yaml: want a workload or a command, exactly one"},
		{name: "unknown key", path: "testdata/tuned/typo.yaml", wantErr: "testdata/tuned/typo.yaml: yaml: unmarshal errors:\n  line 6: field comand not found"},
		{name: "missing", path: "testdata/tuned/none.yaml", wantErr: "no such file"},
		{name: "a directory without best.yaml", path: "testdata", wantErr: "testdata/best.yaml: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job, err := TunedJob(tc.path, tc.workload, tc.sets, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(job, tc.want) {
				t.Errorf("got %+v, want %+v", job, tc.want)
			}
		})
	}
}

// The report's recommendation comes back as the job heatsink run runs:
// the command with the best configuration's values and the task's.
func TestTuneWritesBestYAMLThatRunTakesBack(t *testing.T) {
	s, tab := synthetic(t)
	for _, tc := range []struct {
		name     string
		runArgs  []string
		workload bool
	}{
		{"command", []string{"--", "run.sh", "--ti={ti}", "{n}"}, false},
		{"workload", []string{"--workload", "syr2k", "--set", "ti={ti}", "--set", "n={n}"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			rep, err := Tune(context.Background(), Options{Space: s, Task: Task{"n": 90}, Methods: []string{"random"}, Budget: 5,
				Seed: 1, Evaluator: tab, Out: out, Log: &bytes.Buffer{}, RunArgs: tc.runArgs})
			if err != nil {
				t.Fatal(err)
			}
			job, err := TunedJob(out, "", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ti := rep.Best.Values["ti"]
			if tc.workload {
				want := []workloads.Layer{{Source: "--tuned " + out, Values: map[string]string{"n": "90", "ti": ti}}}
				if job.Workload != "syr2k" || !reflect.DeepEqual(job.Layers, want) || job.Command != nil {
					t.Errorf("got %+v, want syr2k %+v", job, want)
				}
			} else if want := []string{"run.sh", "--ti=" + ti, "90"}; job.Workload != "" || job.Layers != nil || !reflect.DeepEqual(job.Command, want) {
				t.Errorf("got %+v, want %q", job, want)
			}
			b, err := LoadTuned(filepath.Join(out, TunedFile))
			if err != nil {
				t.Fatal(err)
			}
			if b.Objective != rep.Best.Objective || b.Method != "random" || b.Task["n"] != 90 || !reflect.DeepEqual(b.Values, rep.Best.Values) {
				t.Errorf("best.yaml %+v, report's recommendation %+v", b, rep.Best)
			}
			raw, _ := os.ReadFile(filepath.Join(out, TunedFile))
			if !strings.HasPrefix(string(raw), "# heatsink tune's recommended configuration. Run it: heatsink run --tuned "+out) {
				t.Errorf("best.yaml:\n%s", raw)
			}
		})
	}
}
