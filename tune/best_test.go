package tune

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTunedJob(t *testing.T) {
	for _, tc := range []struct {
		name, path, workload string
		sets, args           []string
		wantWorkload         string
		wantSets, wantArgs   []string
		wantErr              string
	}{
		{name: "no --tuned", workload: "dgemm", sets: []string{"n=8"}, wantWorkload: "dgemm", wantSets: []string{"n=8"}},
		{name: "workload", path: "testdata/tuned/workload.yaml", wantWorkload: "cpu-stream",
			wantSets: []string{"ntimes=2", "size=256KiB", "threads=2"}},
		{name: "a --set overrides", path: "testdata/tuned/workload.yaml", sets: []string{"threads=1"}, wantWorkload: "cpu-stream",
			wantSets: []string{"ntimes=2", "size=256KiB", "threads=1"}},
		{name: "command", path: "testdata/tuned/command.yaml", wantArgs: []string{"sh", "-c", `echo "score: $(( 1 * 1 + 10 ))"`}},
		{name: "--set on a command", path: "testdata/tuned/command.yaml", sets: []string{"a=2"}, wantErr: "is a command, not a built-in workload"},
		{name: "and a command", path: "testdata/tuned/command.yaml", args: []string{"echo"}, wantErr: "names the job"},
		{name: "and a workload", path: "testdata/tuned/workload.yaml", workload: "dgemm", wantErr: "names the job"},
		{name: "both kinds", path: "testdata/tuned/both.yaml", wantErr: "testdata/tuned/both.yaml: want a workload or a command, exactly one"},
		{name: "unknown key", path: "testdata/tuned/typo.yaml", wantErr: "testdata/tuned/typo.yaml: yaml: unmarshal errors:\n  line 6: field comand not found"},
		{name: "missing", path: "testdata/tuned/none.yaml", wantErr: "no such file"},
		{name: "a directory without best.yaml", path: "testdata", wantErr: "testdata/best.yaml: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, sets, args, err := TunedJob(tc.path, tc.workload, tc.sets, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w != tc.wantWorkload || !reflect.DeepEqual(sets, tc.wantSets) || !reflect.DeepEqual(args, tc.wantArgs) {
				t.Errorf("got %q %q %q, want %q %q %q", w, sets, args, tc.wantWorkload, tc.wantSets, tc.wantArgs)
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
			w, sets, args, err := TunedJob(out, "", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ti := rep.Best.Values["ti"]
			if tc.workload {
				if want := []string{"n=90", "ti=" + ti}; w != "syr2k" || !reflect.DeepEqual(sets, want) || args != nil {
					t.Errorf("got %q %q %q, want syr2k %q", w, sets, args, want)
				}
			} else if want := []string{"run.sh", "--ti=" + ti, "90"}; w != "" || sets != nil || !reflect.DeepEqual(args, want) {
				t.Errorf("got %q %q %q, want %q", w, sets, args, want)
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
