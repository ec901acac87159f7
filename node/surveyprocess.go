package node

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/workloads"
)

// Why a process per load: a built-in GPU workload run inside the survey's
// own process leaves that GPU's CUDA primary context alive after its load.
// cuBLAS carries its own CUDA runtime, which retains the primary context
// the first time a handle is made and releases it only at process exit, so
// the workload's own release (cuDevicePrimaryCtxRelease) does not end it.
// On the 2×H200 survey of analysis/testdata/h200x2-survey/clean, every GPU
// the survey had loaded sat at 1980 MHz and 123-125 W for the rest of the
// survey, against 345 MHz and 79-82 W in the baseline, with 557 MB more
// memory in use (the context). A process per load ends with its load, and
// the driver tears its contexts down, so every phase after a load is the
// card's own idle, as in a recording of separate jobs.

// SurveyIterationLine is one finished iteration of a load process, one
// JSON object per line on its standard output.
type SurveyIterationLine struct {
	StartUnixNs int64              `json:"start_unix_ns"`
	EndUnixNs   int64              `json:"end_unix_ns"`
	Metrics     map[string]float64 `json:"metrics,omitempty"`
	Error       string             `json:"error,omitempty"`
}

// SurveyProcess is the load of each survey step from a process per GPU:
// argv(gpu) is started when the GPU's load starts and stopped by SIGTERM
// when it ends (killed 30 s later if still there); every line it prints
// on stdout is a SurveyIterationLine, recorded in its as the GPU's. Its
// stderr goes to stderr. A process that ends by itself, or prints
// something else, ends the step with an error.
func SurveyProcess(its *SurveyIterations, argv func(gpu string) []string, stderr io.Writer) SurveyLoad {
	return perGPU(func(ctx context.Context, gpu string) error {
		args := argv(gpu)
		c := exec.CommandContext(ctx, args[0], args[1:]...)
		c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
		c.WaitDelay = 30 * time.Second
		c.Stderr = stderr
		// Never written: if this process dies without stopping the load
		// (SIGKILL, a crash), the pipe closes with it and the load
		// process, reading EOF, stops rather than load the GPU for ever.
		if _, err := c.StdinPipe(); err != nil {
			return fmt.Errorf("load process for GPU %s: %w", gpu, err)
		}
		out, err := c.StdoutPipe()
		if err != nil {
			return fmt.Errorf("load process for GPU %s: %w", gpu, err)
		}
		if err := c.Start(); err != nil {
			return fmt.Errorf("start the load process for GPU %s: %w", gpu, err)
		}
		readErr := readIterationLines(out, gpu, its)
		if readErr != nil {
			_ = c.Process.Signal(syscall.SIGTERM) // it no longer speaks our language
		}
		err = c.Wait()
		if ctx.Err() != nil && readErr == nil {
			return nil // the step ended: SIGTERM is the normal way out
		}
		if err = errors.Join(readErr, err); err != nil {
			return fmt.Errorf("load process %s for GPU %s: %w", args[0], gpu, err)
		}
		return fmt.Errorf("load process %s for GPU %s ended by itself", args[0], gpu)
	})
}

// readIterationLines records each line of r as an iteration of gpu until
// r ends.
func readIterationLines(r io.Reader, gpu string, its *SurveyIterations) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var l SurveyIterationLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("stdout line %d %.80q: not an iteration: %w", n, sc.Text(), err)
		}
		var err error
		if l.Error != "" {
			err = errors.New(l.Error)
		}
		its.addSpan(gpu, time.Unix(0, l.StartUnixNs), time.Unix(0, l.EndUnixNs), 0, err, l.Metrics)
	}
	return sc.Err()
}

// ServeSurveyLoad is the load process's side of SurveyProcess: it starts
// the built-in workload w on gpu (its device parameter set where it has
// one) and iterates until ctx ends or parent reaches its end (the survey's
// end of the pipe closed: it died), writing each finished iteration to
// out as a SurveyIterationLine. A failed iteration is written and ends it
// with the error.
func ServeSurveyLoad(ctx context.Context, w workloads.Workload, layers []workloads.Layer, gpu string, parent io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, parent)
		cancel()
	}()
	enc := json.NewEncoder(out)
	return iterateSurveyWorkload(ctx, w, layers, gpu, func(start time.Time, metrics map[string]float64, err error) error {
		l := SurveyIterationLine{StartUnixNs: start.UnixNano(), EndUnixNs: time.Now().UnixNano(), Metrics: metrics}
		if err != nil {
			l.Error = err.Error()
		}
		return enc.Encode(l)
	})
}

// iterateSurveyWorkload starts w on gpu and iterates it until ctx ends,
// handing each finished iteration to done; an iteration cut off by ctx is
// not one.
func iterateSurveyWorkload(ctx context.Context, w workloads.Workload, layers []workloads.Layer, gpu string, done func(start time.Time, metrics map[string]float64, err error) error) error {
	ls := layers
	if hasDeviceParam(w) {
		ls = append(slices.Clone(layers), workloads.Layer{Source: "survey", Values: map[string]string{"device": gpu}})
	}
	v, _, err := workloads.Resolve(w, ls...)
	if err != nil {
		return err
	}
	j, err := w.Start(ctx, v)
	if err != nil {
		return fmt.Errorf("workload %s on GPU %s: %w", w.Name(), gpu, err)
	}
	defer j.Close()
	for ctx.Err() == nil {
		start := time.Now()
		res, err := j.Iterate(ctx)
		if ctx.Err() != nil {
			break
		}
		if derr := done(start, res.Metrics, err); derr != nil {
			return derr
		}
		if err != nil {
			return fmt.Errorf("workload %s on GPU %s: %w", w.Name(), gpu, err)
		}
	}
	return nil
}

func hasDeviceParam(w workloads.Workload) bool {
	return slices.ContainsFunc(w.Params(), func(p workloads.ParamSpec) bool { return p.Name == "device" })
}
