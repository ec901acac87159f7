package node

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/internal/sleepworkload"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Each GPU's load is a process of its own that lives exactly as long as
// the load: its iterations are the GPU's, and when the step ends it is
// stopped and gone (with it, on a real GPU, its CUDA context).
func TestSurveyProcessEndsWithItsLoad(t *testing.T) {
	dir := t.TempDir()
	its := NewSurveyIterations("plant", nil, nil)
	load := SurveyProcess(its, func(gpu string) []string {
		return []string{"sh", "-c", `echo $$ >` + filepath.Join(dir, "pid"+gpu) + `
trap 'exit 0' TERM
while :; do
	s=$(date +%s%N); sleep 0.05
	echo "{\"start_unix_ns\":$s,\"end_unix_ns\":$(date +%s%N),\"metrics\":{\"flop_per_s\":1e12}}"
done`}
	}, os.Stderr)
	// 1.5 s: on a loaded machine each of the script's iterations (two
	// date(1) and a sleep) can take a few hundred ms.
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	if err := load(ctx, []string{"0", "2"}); err != nil {
		t.Fatalf("a load ended by its step: %v", err)
	}
	for _, g := range []string{"0", "2"} {
		b, err := os.ReadFile(filepath.Join(dir, "pid"+g))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("GPU %s's load process %d after its load: %v, want it gone", g, pid, err)
		}
	}
	per := map[string]int{}
	for _, it := range its.Workload().Iterations {
		per[it.Device]++
		if it.RuntimeS < 0.04 || it.RuntimeS > 1 || it.Metrics["flop_per_s"] != 1e12 || it.Error != "" {
			t.Errorf("iteration %+v: want the process's own span (~50 ms) and metrics", it)
		}
	}
	if len(per) != 2 || per["0"] < 2 || per["2"] < 2 {
		t.Errorf("iterations per GPU %v: want several for each of GPUs 0 and 2", per)
	}
}

func TestSurveyProcessThatMisbehavesEndsTheStep(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"ends by itself", "exit 0", "load process sh for GPU 1 ended by itself"},
		{"fails", "echo no GPU >&2; exit 2", "exit status 2"},
		{"prints something else", `echo hello; sleep 5`, `stdout line 1 "hello": not an iteration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			load := SurveyProcess(NewSurveyIterations("plant", nil, nil), func(string) []string {
				return []string{"sh", "-c", tc.script}
			}, &bytes.Buffer{})
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			err := load(ctx, []string{"1"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}
}

// The load process's side writes every finished iteration as a line that
// SurveyProcess reads back as the GPU's iteration.
func TestServeSurveyLoadWritesTheIterationsSurveyProcessReads(t *testing.T) {
	w, err := workloads.Find(workloads.Registered(), sleepworkload.Workload{}.Name())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 400*time.Millisecond)
	defer cancel()
	parent, _ := io.Pipe() // the survey, alive: never closed
	if err := ServeSurveyLoad(ctx, w, []workloads.Layer{{Source: "--set", Values: map[string]string{"for": "20ms"}}}, "3", parent, &out); err != nil {
		t.Fatal(err)
	}
	its := NewSurveyIterations("sleep", nil, nil)
	if err := readIterationLines(&out, "3", its); err != nil {
		t.Fatal(err)
	}
	got := its.Workload().Iterations
	if len(got) < 3 {
		t.Fatalf("%d iterations in 400 ms of 20 ms ones", len(got))
	}
	for _, it := range got {
		if it.Device != "3" || it.RuntimeS < 0.019 || it.RuntimeS > 0.5 {
			t.Errorf("iteration %+v: want GPU 3's, about 20 ms", it)
		}
	}
}

// A load process whose survey died (its end of the pipe closed: SIGKILL,
// a crash) stops at once instead of loading the GPU for ever.
func TestServeSurveyLoadStopsWhenTheSurveyDies(t *testing.T) {
	w, err := workloads.Find(workloads.Registered(), sleepworkload.Workload{}.Name())
	if err != nil {
		t.Fatal(err)
	}
	r, wr := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeSurveyLoad(t.Context(), w, []workloads.Layer{{Source: "--set", Values: map[string]string{"for": "20ms"}}}, "0", r, io.Discard)
	}()
	time.Sleep(100 * time.Millisecond)
	wr.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stopped with %v, want a clean stop", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still loading 5 s after its survey's pipe closed")
	}
}
