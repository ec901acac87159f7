package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// SurveyOptions shape `heatsink survey` beyond its configuration.
type SurveyOptions struct {
	Options
	Plan SurveyPlan
	Load SurveyLoad
	// Iterations, where not nil, holds the load's iterations (from
	// SurveyWorkload or SurveyCommand): run.json's workload, each with its
	// GPU, so every GPU's throughput per watt is in its fingerprints.
	Iterations *SurveyIterations
	Progress   func(string)
}

// SurveyIterations records the iterations of a survey's loads, each with
// the GPU it ran on, as `heatsink run` records its job's: safe for the
// loads of several GPUs at once.
type SurveyIterations struct {
	mu       sync.Mutex
	workload rundir.Workload
	n        int
}

// NewSurveyIterations records the iterations of the named workload, with
// its parameters (a built-in's) or its command.
func NewSurveyIterations(name string, params map[string]string, command []string) *SurveyIterations {
	return &SurveyIterations{workload: rundir.Workload{Name: name, Params: params, Command: command}}
}

// add records one finished iteration of gpu that ends now.
func (s *SurveyIterations) add(gpu string, start time.Time, status int, err error, metrics map[string]float64) {
	s.addSpan(gpu, start, time.Now(), status, err, metrics)
}

// addSpan records one finished iteration of gpu.
func (s *SurveyIterations) addSpan(gpu string, start, end time.Time, status int, err error, metrics map[string]float64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	it := rundir.Iteration{N: s.n, Start: start, End: end, RuntimeS: end.Sub(start).Seconds(), ExitStatus: status, Metrics: metrics, Device: gpu}
	if err != nil {
		it.Error = err.Error()
		if it.ExitStatus == 0 {
			it.ExitStatus = 1
		}
	}
	s.workload.Iterations = append(s.workload.Iterations, it)
}

// Workload returns run.json's workload: the iterations so far, in the
// order they ended.
func (s *SurveyIterations) Workload() *rundir.Workload {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.workload
	w.Iterations = slices.Clone(w.Iterations)
	return &w
}

// RecordSurvey records the survey's protocol into o.OutDir: the collection
// runs for the whole survey and the steps are run.json's phases. The GPUs
// surveyed are those that report a temperature within the first five
// samples; with none, it returns ErrNoGPU (wrapped) and run.json says
// failed.
func RecordSurvey(ctx context.Context, cfg *configs.Config, o SurveyOptions) error {
	readings := NewGPUReadings()
	o.Sinks = append(o.Sinks, readings)
	c, err := Start(cfg, o.Options)
	if err != nil {
		return err
	}
	collCtx, stopCollector := context.WithCancel(context.WithoutCancel(ctx))
	collDone := make(chan error, 1)
	go func() { collDone <- c.Collector().Run(collCtx) }()
	var gpus []string
	for range 5 {
		if sleepCtx(ctx, c.Collector().Interval()) != nil {
			break
		}
		if gpus = readings.GPUs(); len(gpus) > 0 {
			break
		}
	}
	var phases []rundir.Phase
	timing, err := Survey(ctx, o.Plan, gpus, readings, o.Load, func(p rundir.Phase) { phases = append(phases, p) }, o.Progress)
	stopCollector()
	collErr := <-collDone
	if m := c.Meta(); m != nil {
		m.Phases = append(m.Phases, phases...)
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels["experiment"] = "survey"
		if f := o.Plan.AnalysisScale(); f < 1 {
			m.Labels[analysis.SurveyScaleLabel] = strconv.FormatFloat(f, 'g', 4, 64)
		}
		if o.Iterations != nil {
			m.Workload = o.Iterations.Workload()
		}
		if timing.LoadS > 0 {
			m.Labels["survey_load_s"] = strconv.FormatFloat(timing.LoadS, 'f', 1, 64)
			m.Labels["survey_load_why"] = timing.Why
		}
		if timing.TauSlowS > 0 {
			m.Labels["survey_tau_slow_s"] = strconv.FormatFloat(timing.TauSlowS, 'f', 1, 64)
		}
	}
	status := workloads.StatusComplete
	switch {
	case ctx.Err() != nil:
		status = workloads.StatusInterrupted
	case err != nil:
		status = workloads.StatusFailed
	}
	if errors.Is(err, ErrNoGPU) {
		err = fmt.Errorf("nothing to survey: %w (heatsink sensors shows what this machine exposes)", err)
	}
	return errors.Join(err, collErr, c.Finish(status))
}

// SurveyWorkload is the load of each survey step from a built-in
// workload, run inside this process: started per GPU with its device
// parameter set to the GPU's index (where it has one), iterated until the
// step ends, each finished iteration recorded in the returned
// SurveyIterations. An iteration cut off by the step's end is not one.
// Every layer is checked now, before the baseline. A GPU workload's CUDA
// context outlives its load this way (see SurveyProcess, which
// `heatsink survey` uses unless told --load-in-process).
func SurveyWorkload(w workloads.Workload, layers []workloads.Layer) (SurveyLoad, *SurveyIterations, error) {
	its, err := surveyWorkloadIterations(w, layers)
	if err != nil {
		return nil, nil, err
	}
	return perGPU(func(ctx context.Context, gpu string) error {
		return iterateSurveyWorkload(ctx, w, layers, gpu, func(start time.Time, metrics map[string]float64, err error) error {
			its.add(gpu, start, 0, err, metrics)
			return nil
		})
	}), its, nil
}

// SurveyWorkloadProcess is SurveyWorkload's load run as a process per GPU
// and step (SurveyProcess: argv(gpu) serves it with ServeSurveyLoad), so
// that each load's CUDA context ends with the load. The layers are
// checked here, before the baseline.
func SurveyWorkloadProcess(w workloads.Workload, layers []workloads.Layer, argv func(gpu string) []string, stderr io.Writer) (SurveyLoad, *SurveyIterations, error) {
	its, err := surveyWorkloadIterations(w, layers)
	if err != nil {
		return nil, nil, err
	}
	return SurveyProcess(its, argv, stderr), its, nil
}

// surveyWorkloadIterations checks w's layers and returns the record of
// its iterations, its parameters as run.json shows them.
func surveyWorkloadIterations(w workloads.Workload, layers []workloads.Layer) (*SurveyIterations, error) {
	v0, _, err := workloads.Resolve(w, layers...)
	if err != nil {
		return nil, err
	}
	params := v0.Map()
	if hasDeviceParam(w) {
		params["device"] = "each GPU surveyed"
	}
	return NewSurveyIterations(w.Name(), params, nil), nil
}

// SurveyCommand is the load of each survey step from a command: run
// repeatedly per GPU with CUDA_VISIBLE_DEVICES set to the GPU's index,
// until the step ends, each finished run recorded (its runtime) in the
// returned SurveyIterations; a failing run ends the survey.
func SurveyCommand(argv []string) (SurveyLoad, *SurveyIterations, error) {
	if _, err := workloads.NewCommand(argv); err != nil {
		return nil, nil, err
	}
	its := NewSurveyIterations("command", nil, argv)
	return perGPU(func(ctx context.Context, gpu string) error {
		for ctx.Err() == nil {
			c, err := workloads.NewCommand(argv)
			if err != nil {
				return err
			}
			start := time.Now()
			code, err := c.Run(ctx, append(os.Environ(), "CUDA_VISIBLE_DEVICES="+gpu))
			if ctx.Err() != nil {
				return nil
			}
			its.add(gpu, start, code, err, nil)
			if err != nil {
				return fmt.Errorf("%s on GPU %s: %w", c.Name(), gpu, err)
			}
			if code != 0 {
				return fmt.Errorf("%s on GPU %s: exit status %d", c.Name(), gpu, code)
			}
		}
		return nil
	}), its, nil
}

// perGPU runs one load per GPU at once and returns their errors.
func perGPU(one func(ctx context.Context, gpu string) error) SurveyLoad {
	return func(ctx context.Context, gpus []string) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		errs := make([]error, len(gpus))
		var wg sync.WaitGroup
		for i, g := range gpus {
			wg.Go(func() {
				if errs[i] = one(ctx, g); errs[i] != nil {
					cancel()
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
}

// SurveyPrinter prints the survey's progress to w: each new step at once,
// the same step again at most every `every`.
func SurveyPrinter(w io.Writer, every time.Duration) func(string) {
	var last string
	var at time.Time
	return func(msg string) {
		step, _, _ := strings.Cut(msg, ",")
		if step == last && time.Since(at) < every {
			return
		}
		last, at = step, time.Now()
		fmt.Fprintln(w, "heatsink:", msg)
	}
}

var _ collectors.Sink = (*GPUReadings)(nil)
