package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// Request is one evaluation handed to a node: what `heatsink tune-eval`
// reads there, from the evaluation's directory. The tuning directory (Dir)
// and the space file are on a filesystem the nodes share, as a Slurm job's
// working directory usually is.
type Request struct {
	N           int               `json:"n"` // the evaluation is Dir/eval-NNN
	Dir         string            `json:"dir"`
	Space       string            `json:"space"`
	Workload    string            `json:"workload,omitempty"`
	Argv        []string          `json:"argv,omitempty"`
	Objective   string            `json:"objective"`
	Constraints []string          `json:"constraints,omitempty"`
	Repeat      int               `json:"repeat,omitempty"`
	BaselineS   float64           `json:"baseline_s,omitempty"`
	Task        Task              `json:"task"`
	Values      map[string]string `json:"values"`
	// NodeState is the node's thermal reference from its first evaluation.
	NodeState
}

// NodeState is what a node's first evaluation learnt about it: whether its
// idle baseline was measured, and the mean temperatures it measured, which
// every later evaluation on that node waits to be back to.
type NodeState struct {
	Baselined bool               `json:"baselined,omitempty"`
	Reference map[string]float64 `json:"reference,omitempty"`
}

// Placement is what the node writes back beside tune.json.
type Placement struct {
	Node string `json:"node"`
	Job  string `json:"slurm_job"`
	NodeState
}

// Files of a --launcher slurm evaluation, in its directory.
const (
	RequestFile   = "request.json"
	PlacementFile = "placement.json"
	SrunLogFile   = "srun.log"
)

func evalDir(dir string, n int) string { return filepath.Join(dir, fmt.Sprintf("eval-%03d", n)) }

// SlurmEvaluator runs each evaluation as a job step on one node of an
// allocation, a node no other evaluation uses meanwhile: heatsink itself
// runs there (Worker, with the request's path), so the node's own sensors
// judge its thermal state: the first evaluation on a node records its idle
// baseline, later ones on it wait to be back to it. Evaluate is safe for
// concurrent use, one evaluation per node at a time.
type SlurmEvaluator struct {
	alloc    *slurm.Allocation
	worker   []string
	template Request
	space    *Space
	log      io.Writer

	free  chan string
	stop  sync.Once
	mu    sync.Mutex
	n     int
	nodes map[string]NodeState
}

// NewSlurmEvaluator evaluates on the allocation's nodes; worker is the
// command run there (heatsink tune-eval [flags]) with the request's path
// appended; template holds what every request shares.
func NewSlurmEvaluator(a *slurm.Allocation, worker []string, template Request, s *Space, log io.Writer) (*SlurmEvaluator, error) {
	if len(a.Job.Nodes) == 0 {
		return nil, fmt.Errorf("slurm job %s has no nodes", a.Job.ID)
	}
	if !filepath.IsAbs(template.Dir) || !filepath.IsAbs(template.Space) {
		return nil, fmt.Errorf("the nodes need absolute paths: tuning directory %q, space %q", template.Dir, template.Space)
	}
	if log == nil {
		log = io.Discard
	}
	e := &SlurmEvaluator{alloc: a, worker: worker, template: template, space: s, log: log,
		free: make(chan string, len(a.Job.Nodes)), nodes: map[string]NodeState{}}
	for _, n := range a.Job.Nodes {
		e.free <- n
	}
	return e, nil
}

// Evaluate runs the configuration on a free node and reads back what the
// node recorded.
func (e *SlurmEvaluator) Evaluate(ctx context.Context, t Task, c Config) (Result, error) {
	var node string
	select {
	case node = <-e.free:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { e.free <- node }()
	e.mu.Lock()
	e.n++
	req := e.template
	req.N, req.Task, req.Values, req.NodeState = e.n, t, e.space.Values(c), e.nodes[node]
	e.mu.Unlock()
	dir := evalDir(req.Dir, req.N)
	if err := writeJSON(filepath.Join(dir, RequestFile), req); err != nil {
		return Result{}, err
	}
	fmt.Fprintf(e.log, "heatsink tune: eval-%03d on %s (slurm job %s): %s\n", req.N, node, e.alloc.Job.ID, format(req.Values))
	if err := e.srun(ctx, node, dir); err != nil {
		return Result{}, err
	}
	var p Placement
	if err := readJSON(filepath.Join(dir, PlacementFile), &p); err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Result{}, fmt.Errorf("eval-%03d on %s: %w (see %s)", req.N, node, err, filepath.Join(dir, SrunLogFile))
	}
	e.mu.Lock()
	e.nodes[node] = p.NodeState
	e.mu.Unlock()
	var rec Record
	if err := readJSON(filepath.Join(dir, RecordFile), &rec); err != nil {
		return Result{}, err
	}
	res := Result{Objective: math.NaN(), Violation: rec.Violation, Metrics: rec.Metrics, Run: dir}
	if rec.Objective != nil {
		res.Objective = *rec.Objective
	}
	return res, ctx.Err()
}

func (e *SlurmEvaluator) srun(ctx context.Context, node, dir string) error {
	argv := e.alloc.SrunOn(node, append(append([]string(nil), e.worker...), filepath.Join(dir, RequestFile)))
	logf, err := os.Create(filepath.Join(dir, SrunLogFile))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), e.alloc.Client.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// A signal to srun aborts the step (SIGKILL after the step's KillWait),
	// and the node's heatsink would leave its records open; scancel
	// --signal=TERM reaches the heatsinks of every step of the job as a
	// signal of their own, once, and each srun ends with its step.
	cmd.Cancel = func() error {
		e.stop.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := e.alloc.Client.Run(ctx, "scancel", "--signal=TERM", e.alloc.Job.ID); err != nil {
				fmt.Fprintf(e.log, "heatsink tune: stop the evaluations: %v\n", err)
			}
		})
		return nil
	}
	cmd.WaitDelay = time.Minute
	if err := cmd.Run(); err != nil && ctx.Err() == nil {
		b, _ := os.ReadFile(filepath.Join(dir, SrunLogFile))
		return fmt.Errorf("srun on %s: %w: %s", node, err, lastLines(string(b), 5))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Serve runs the evaluation a request names, on this node, and writes its
// tune.json and placement.json; env is the step's environment (SLURMD_NODENAME,
// SLURM_JOB_ID, SLURM_STEP_ID). find resolves a built-in workload's name.
func Serve(ctx context.Context, path string, env func(string) string, find func(string) (workloads.Workload, error),
	run RunJob, cfg workloads.RunnerConfig) error {
	var req Request
	if err := readJSON(path, &req); err != nil {
		return fmt.Errorf("read the evaluation request: %w", err)
	}
	if req.N < 1 || req.Dir == "" || req.Space == "" {
		return fmt.Errorf("%s: not an evaluation request (n %d, dir %q, space %q)", path, req.N, req.Dir, req.Space)
	}
	s, err := LoadSpace(req.Space)
	if err != nil {
		return err
	}
	obj, err := ParseObjective(req.Objective)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	limits, err := ParseLimits(req.Constraints)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	c, err := s.Parse(req.Values)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	p := Placement{Node: env("SLURMD_NODENAME"), Job: env("SLURM_JOB_ID")}
	if step := env("SLURM_STEP_ID"); step != "" {
		p.Job += "." + step
	}
	ev := &RunEvaluator{Space: s, Argv: req.Argv, Objective: obj, Limits: limits, Dir: req.Dir, Run: run, Config: cfg,
		Baseline: time.Duration(req.BaselineS * float64(time.Second)), Repeat: req.Repeat, Node: p.Node, Job: p.Job,
		n: req.N - 1, baselined: req.Baselined, reference: req.Reference}
	if req.Workload != "" {
		if ev.Workload, err = find(req.Workload); err != nil {
			return err
		}
	}
	_, evalErr := ev.Evaluate(ctx, req.Task, c)
	p.NodeState = NodeState{Baselined: ev.baselined, Reference: ev.reference}
	return errors.Join(evalErr, writeJSON(filepath.Join(evalDir(req.Dir, req.N), PlacementFile), p))
}
