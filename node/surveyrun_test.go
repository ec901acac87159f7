package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/internal/sleepworkload"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// A command gets its GPU in CUDA_VISIBLE_DEVICES, once per GPU of the
// step at the same time, again and again until the step ends.
func TestSurveyCommandGivesEachGPUItsDevice(t *testing.T) {
	log := filepath.Join(t.TempDir(), "devices")
	load, its, err := SurveyCommand([]string{"sh", "-c", `echo "$CUDA_VISIBLE_DEVICES" >>` + log + `; sleep 0.05`})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := load(ctx, []string{"0", "3"}); err != nil {
		t.Fatalf("a load ended by its step: %v", err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		n[l]++
	}
	if len(n) != 2 || n["0"] < 2 || n["3"] < 2 {
		t.Errorf("runs per CUDA_VISIBLE_DEVICES %v, want GPUs 0 and 3, each repeated", n)
	}
	// Each finished run is an iteration of its GPU; the runs the step's
	// end cut off are not.
	rec := map[string]int{}
	for _, it := range its.Workload().Iterations {
		if it.ExitStatus != 0 || it.RuntimeS < 0.05 {
			t.Errorf("iteration %+v: want a finished run of 50 ms or more", it)
		}
		rec[it.Device]++
	}
	if rec["0"] != n["0"] && rec["0"] != n["0"]-1 || rec["3"] != n["3"] && rec["3"] != n["3"]-1 {
		t.Errorf("iterations per GPU %v, runs started %v: want every run but the one cut off", rec, n)
	}
}

func TestSurveyCommandThatFailsEndsTheStep(t *testing.T) {
	load, its, err := SurveyCommand([]string{"sh", "-c", "exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	err = load(t.Context(), []string{"1"})
	if err == nil || !strings.Contains(err.Error(), "sh on GPU 1: exit status 3") {
		t.Errorf("%v, want the command, its GPU and its status", err)
	}
	if w := its.Workload(); len(w.Iterations) != 1 || w.Iterations[0].ExitStatus != 3 || w.Iterations[0].Device != "1" {
		t.Errorf("recorded %+v, want the one failed run of GPU 1", w.Iterations)
	}
	if _, _, err := SurveyCommand([]string{""}); err == nil {
		t.Error("an empty command accepted")
	}
}

// A built-in workload without a device parameter (the sleep workload)
// runs as it is on every GPU's turn, iterated until the step ends; a bad
// parameter is refused before anything runs.
func TestSurveyWorkloadIteratesUntilTheStepEnds(t *testing.T) {
	w, err := workloads.Find(workloads.Registered(), sleepworkload.Workload{}.Name())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := SurveyWorkload(w, []workloads.Layer{{Source: "--set", Values: map[string]string{"for": "1h"}}}); err == nil || !strings.Contains(err.Error(), "for") {
		t.Errorf("for=1h (over its 1m maximum): %v", err)
	}
	load, its, err := SurveyWorkload(w, []workloads.Layer{{Source: "--set", Values: map[string]string{"for": "20ms"}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := load(ctx, []string{"0", "1"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 2*time.Second {
		t.Errorf("the load returned after %v, want when its step ended (200 ms)", d)
	}
	per := map[string]int{}
	wl := its.Workload()
	for _, it := range wl.Iterations {
		per[it.Device]++
	}
	if wl.Name != "sleep" || per["0"] < 3 || per["1"] < 3 || len(per) != 2 {
		t.Errorf("workload %q with iterations per GPU %v: want sleep, several on each of GPUs 0 and 1", wl.Name, per)
	}
}
