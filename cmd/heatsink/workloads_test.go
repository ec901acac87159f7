package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/tune"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Every built-in workload's parameter struct decodes its defaults, lists
// the names run.json records, and takes its own values back: what a tuning
// evaluation recorded is what --tuned runs.
func TestEveryBuiltinWorkloadsParametersDecode(t *testing.T) {
	var names []string
	for _, w := range builtinWorkloads() {
		names = append(names, w.Name())
		t.Run(w.Name(), func(t *testing.T) {
			if err := workloads.Check(w); err != nil {
				t.Fatal(err)
			}
			v, err := w.Decode(nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, p := range w.Params() {
				listed = append(listed, p.Name)
				if p.Help == "" {
					t.Errorf("%s has no help", p.Name)
				}
			}
			m := v.Map()
			recorded := make([]string, 0, len(m))
			for k := range m {
				recorded = append(recorded, k)
			}
			if !reflect.DeepEqual(slices.Sorted(slices.Values(listed)), slices.Sorted(slices.Values(recorded))) {
				t.Errorf("listed %q, recorded %q", listed, recorded)
			}
			again, err := w.Decode(m)
			if err != nil || !reflect.DeepEqual(again.Map(), m) {
				t.Errorf("defaults %v decode to %v, %v", m, again.Map(), err)
			}
			if _, err := w.Decode(map[string]string{"no_such_parameter": "1"}); err == nil ||
				!strings.Contains(err.Error(), `unknown parameter "no_such_parameter" (known: `) {
				t.Errorf("an unknown key: %v", err)
			}
		})
	}
	if want := []string{"cpu-stream", "dgemm", "ezlda", "full-w2v", "ri", "stream"}; !reflect.DeepEqual(names, want) {
		t.Errorf("built-in workloads %q, want %q", names, want)
	}
}

// The README's examples keep working, and a --set overriding a --tuned
// value is noted, a key twice in --set refused.
func TestSetAndTunedResolveOnce(t *testing.T) {
	for _, tc := range []struct {
		sets    []string
		want    map[string]string
		wantErr string
	}{
		{sets: []string{"device=cpu", "n=512"}, want: map[string]string{"device": "cpu", "n": "512"}},
		{sets: []string{"n=512", "n=256"}, wantErr: `--set "n=256": n given twice`},
		{sets: []string{"n=-1"}, wantErr: `workload dgemm: parameter n="-1": below the minimum 0 (allowed [0, 131072])`},
	} {
		var notes strings.Builder
		job, err := tune.TunedJob("", "dgemm", tc.sets, nil)
		if err == nil {
			var o workloads.Options
			if o, err = jobOptions(job, &notes); err == nil {
				for k, v := range tc.want {
					if got := o.Params.Map()[k]; got != v {
						t.Errorf("%q: %s = %q, want %q", tc.sets, k, got, v)
					}
				}
			}
		}
		if (err != nil || tc.wantErr != "") && (err == nil || err.Error() != tc.wantErr) {
			t.Errorf("%q: %v, want %s", tc.sets, err, tc.wantErr)
		}
	}
	dir := t.TempDir()
	writeFile(t, dir, "best.yaml", "space: s\ntask: {}\nmethod: random\nobjective: 1\nmaximize: true\nvalues: {size: 256KiB}\n"+
		"workload: cpu-stream\nset: {size: 256KiB, ntimes: \"2\"}\n")
	job, err := tune.TunedJob(dir, "", []string{"size=1MiB", "threads=1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var notes strings.Builder
	o, err := jobOptions(job, &notes)
	if err != nil {
		t.Fatal(err)
	}
	if m := o.Params.Map(); m["size"] != "1048576" || m["ntimes"] != "2" || m["threads"] != "1" {
		t.Errorf("params %v", m)
	}
	if want := "heatsink: --set size=1MiB overrides size=256KiB from --tuned " + dir + "\n"; notes.String() != want {
		t.Errorf("notes %q, want %q", notes.String(), want)
	}
}

// Adding a workload is its package and one import line:
// internal/sleepworkload, imported by sleep_workload.go when built with
// -tags heatsink_sleep. With nothing else edited, heatsink workloads lists
// it and heatsink run decodes its parameters strictly; without the line,
// heatsink knows no such workload.
func TestAddingAWorkloadTakesOnePackageAndOneImport(t *testing.T) {
	t.Parallel()
	plain := heatsinkBinary(t)
	bin := filepath.Join(t.TempDir(), "heatsink-sleep")
	if out, err := exec.Command("go", "build", "-tags", "heatsink_sleep", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags heatsink_sleep: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "workloads").CombinedOutput()
	for _, want := range []string{"sleep ", "--set for=", "default 10ms", "[1ms, 1m0s]", "one of timer, spin"} {
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("workloads: %v, lacks %q\n%s", err, want, out)
		}
	}
	dir := t.TempDir()
	for _, tc := range []struct{ bin, want string }{
		{bin, `workload sleep: parameter for="1h": above the maximum 1m0s (allowed [1ms, 1m0s])`},
		{plain, `unknown workload "sleep"`},
	} {
		out, err := exec.Command(tc.bin, "run", "--out", filepath.Join(dir, "run"), "--workload", "sleep", "--set", "for=1h").CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s run --workload sleep: %v %s, want %q", filepath.Base(tc.bin), err, out, tc.want)
		}
	}
}

// The parameters' names, types, defaults, ranges and choices are what
// users type: testdata/params.golden pins them, so a misspelt tag fails
// here rather than changing a command line.
func TestBuiltinParametersAreTheGoldenOnes(t *testing.T) {
	b, err := os.ReadFile("testdata/params.golden")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}
	var got []string
	for _, w := range builtinWorkloads() {
		for _, p := range w.Params() {
			def := p.Default
			if w.Name() == "cpu-stream" && p.Name == "threads" && def == strconv.Itoa(runtime.GOMAXPROCS(0)) {
				def = "GOMAXPROCS"
			}
			got = append(got, strings.Join([]string{w.Name(), p.Name, p.Type.String(), def, p.Range(), strings.Join(p.Choices, ",")}, "\t"))
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parameters:\n%s\nwant (testdata/params.golden):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
