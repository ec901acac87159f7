package tune

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// RunJob runs one job as a heatsink run recorded in dir: the CLI's
// collection (sensors, sinks, run directory) around a workloads.Runner.
type RunJob func(ctx context.Context, o workloads.Options, dir string) (workloads.Outcome, error)

// RunEvaluator evaluates a configuration as a heatsink run: the node first
// back at its thermal baseline, the job run 3 times, the first discarded,
// the objective the mean of the rest, with temperatures, power, energy and
// throttling recorded. Every evaluation is a run directory under Dir with a
// tune.json beside run.json, so later tuning runs can use it as a source.
type RunEvaluator struct {
	Space     *Space
	Workload  workloads.Workload // a built-in workload tuned through its --set parameters, or
	Argv      []string           // a command with {name} placeholders for parameters and task features
	Objective Objective
	Limits    Limits
	Dir       string
	Run       RunJob
	Config    workloads.RunnerConfig
	// Baseline is how long the first evaluation records the idle node; the
	// mean temperatures it measures are the reference every later one waits
	// for. 0 measures none (and waits only for runner.nominal's limits).
	Baseline time.Duration
	Repeat   int // 3 by default
	// Node and Job are recorded in tune.json (see Record).
	Node, Job string

	n         int
	baselined bool
	reference map[string]float64
}

// Record is what tune.json holds for one evaluation.
type Record struct {
	Space     string             `json:"space"`
	Method    string             `json:"method,omitempty"`
	Task      Task               `json:"task"`
	Values    map[string]string  `json:"values"`
	Objective *float64           `json:"objective,omitempty"` // absent when unusable`
	Spec      string             `json:"objective_spec"`
	Maximize  bool               `json:"maximize"`
	Violation string             `json:"violation,omitempty"`
	Thermal   Thermal            `json:"thermal"`
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	// Node and Job say where a --launcher slurm evaluation ran: the node
	// whose sensors judged it, and its Slurm job step (JOB.STEP).
	Node string `json:"node,omitempty"`
	Job  string `json:"slurm_job,omitempty"`
}

// RecordFile is the file beside run.json that makes a run an evaluation.
const RecordFile = "tune.json"

// Evaluate runs the configuration for the task and records it.
func (e *RunEvaluator) Evaluate(ctx context.Context, t Task, c Config) (Result, error) {
	e.n++
	dir := filepath.Join(e.Dir, fmt.Sprintf("eval-%03d", e.n))
	values := e.Space.Values(c)
	for k, v := range t {
		values[k] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	o, err := e.options(values)
	if err != nil {
		return Result{}, err
	}
	out, err := e.Run(ctx, o, dir)
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", dir, err)
	}
	if o.Protocol.Baseline > 0 {
		// Measured once; a node with no watched temperature has nothing
		// to wait for, and later evaluations do not measure it again.
		e.baselined, e.reference = true, out.Baseline
	}
	rec := Record{Space: e.Space.Name, Task: t, Values: e.Space.Values(c), Spec: e.Objective.Spec, Maximize: e.Objective.Maximize,
		Node: e.Node, Job: e.Job}
	res, err := e.measure(dir, out, &rec)
	if err != nil {
		// The job ran but its result is unusable (it failed, printed no
		// objective): the evaluation counts, with the reason.
		res.Violation, res.Objective = err.Error(), math.NaN()
	}
	if !math.IsNaN(res.Objective) {
		rec.Objective = &res.Objective
	}
	rec.Violation, rec.Metrics = res.Violation, res.Metrics
	res.Run = dir
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return res, fmt.Errorf("record evaluation %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, RecordFile), append(b, '\n'), 0o644); err != nil {
		return res, fmt.Errorf("record evaluation: %w", err)
	}
	return res, ctx.Err()
}

func (e *RunEvaluator) options(values map[string]string) (workloads.Options, error) {
	repeat := e.Repeat
	if repeat == 0 {
		repeat = 3
	}
	o := workloads.Options{Config: e.Config, Protocol: workloads.Protocol{Repeat: repeat}}
	switch {
	case len(e.reference) > 0:
		o.Protocol.Reference, o.Protocol.WaitNominal = e.reference, true
	case e.Baseline > 0 && !e.baselined:
		o.Protocol.Baseline = e.Baseline
	case len(e.Config.Nominal) > 0:
		o.Protocol.WaitNominal = true
	}
	if e.Workload != nil {
		// The configuration's values and the space's fixed settings are
		// layers of one resolution, as best.yaml and --set are for
		// heatsink run: what an evaluation ran is what --tuned runs.
		conf, fixed := map[string]string{}, map[string]string{}
		for _, p := range e.Workload.Params() {
			if v, ok := values[p.Name]; ok {
				conf[p.Name] = v
			}
		}
		for k, tmpl := range e.Space.Set {
			v, err := Substitute([]string{tmpl}, values)
			if err != nil {
				return o, fmt.Errorf("space set %s: %w", k, err)
			}
			fixed[k] = v[0]
		}
		v, _, err := workloads.Resolve(e.Workload, workloads.Layer{Source: "the configuration", Values: conf},
			workloads.Layer{Source: "the space's set", Values: fixed})
		if err != nil {
			return o, err
		}
		o.Workload, o.Params = e.Workload, v
		return o, nil
	}
	argv, err := Substitute(e.Argv, values)
	if err != nil {
		return o, err
	}
	if o.Command, err = workloads.NewCommand(argv); err != nil {
		return o, err
	}
	return o, nil
}

// Substitute replaces {name} in each argument by the named value; an
// unknown name is an error, so a typo never runs a literal "{tile}".
func Substitute(argv []string, values map[string]string) ([]string, error) {
	out := make([]string, len(argv))
	for i, a := range argv {
		var b strings.Builder
		for {
			open := strings.IndexByte(a, '{')
			if open < 0 {
				break
			}
			end := strings.IndexByte(a[open:], '}')
			if end < 0 {
				break
			}
			name := a[open+1 : open+end]
			v, ok := values[name]
			if !ok {
				return nil, fmt.Errorf("argument %q: no parameter or task feature {%s}", argv[i], name)
			}
			b.WriteString(a[:open])
			b.WriteString(v)
			a = a[open+end+1:]
		}
		b.WriteString(a)
		out[i] = b.String()
	}
	return out, nil
}

func (e *RunEvaluator) measure(dir string, out workloads.Outcome, rec *Record) (Result, error) {
	meta, err := rundir.ReadMeta(dir)
	if err != nil {
		return Result{}, err
	}
	var its []rundir.Iteration
	if meta.Workload != nil {
		its = meta.Workload.Iterations
	}
	if out.Status != workloads.StatusComplete || len(its) == 0 {
		status := "no iteration ran"
		if out.JobStatus != nil {
			status = fmt.Sprintf("exit status %d", *out.JobStatus)
		}
		return Result{}, fmt.Errorf("run %s (%s)", out.Status, status)
	}
	measured := its
	if len(its) > 1 {
		measured = its[1:]
	}
	th, err := thermalOf(dir, measured[0].Start, measured[len(measured)-1].End)
	if err != nil {
		return Result{}, err
	}
	rec.Thermal = th
	var stdout string
	if e.Objective.NeedsOutput() {
		b, err := os.ReadFile(filepath.Join(dir, "job.stdout"))
		if err != nil {
			return Result{}, fmt.Errorf("read the command's output: %w", err)
		}
		stdout = string(b)
	}
	y, err := e.Objective.measure(measured, len(its), stdout, th)
	if err != nil {
		return Result{}, err
	}
	m := map[string]float64{"peak_temp_c": th.PeakTempC, "peak_power_w": th.PeakPowerW, "energy_j": th.EnergyJ, "min_margin_c": th.MinMarginC}
	for k, v := range m {
		if math.IsNaN(v) {
			delete(m, k) // absent, never 0
		}
	}
	for k, v := range measured[len(measured)-1].Metrics {
		m[k] = v
	}
	if e.Objective.kind != "energy" && !math.IsNaN(th.EnergyJ) {
		// Recorded whatever the objective, so one tuning run shows whether
		// the fastest configuration is also the most frugal.
		epw := Objective{kind: "energy"}
		if v, err := epw.measure(measured, len(its), "", th); err == nil {
			m["energy_per_work_j"] = v
		}
	}
	return Result{Objective: y, Violation: e.Limits.violation(th, measured, m), Metrics: m}, nil
}

// LoadSources reads every evaluation recorded under the directories (the
// tune.json of earlier tuning runs) of the space, with the objective spec
// given, that broke no constraint.
func LoadSources(s *Space, spec string, dirs []string) ([]Observation, error) {
	var obs []Observation
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(path string, de fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if de.IsDir() || de.Name() != RecordFile {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var r Record
			if err := json.Unmarshal(b, &r); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if r.Space != s.Name || r.Spec != spec || r.Violation != "" || r.Objective == nil {
				return nil
			}
			c, err := s.Parse(r.Values)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			obs = append(obs, Observation{Task: r.Task, Config: c, Objective: *r.Objective})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("sources %s: %w", d, err)
		}
	}
	sort.SliceStable(obs, func(a, b int) bool { return obs[a].Objective < obs[b].Objective })
	return obs, nil
}

// WorkloadRunArgs is how `heatsink run` runs a built-in workload with a
// configuration: --set name={name} for every parameter and task feature of
// the space that the workload takes.
func WorkloadRunArgs(w workloads.Workload, s *Space) []string {
	args := []string{"--workload", w.Name()}
	keys := make([]string, 0, len(s.Set))
	for k := range s.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--set", k+"="+s.Set[k])
	}
	for _, p := range w.Params() {
		// A key the space's set already gives (epochs: "{epochs}") is given once.
		if _, set := s.Set[p.Name]; !set && (s.Param(p.Name) >= 0 || s.isTask(p.Name)) {
			args = append(args, "--set", p.Name+"={"+p.Name+"}")
		}
	}
	return args
}

func (s *Space) isTask(name string) bool {
	for _, f := range s.Task {
		if f.Name == name {
			return true
		}
	}
	return false
}
