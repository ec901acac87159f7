package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/slurm"
)

// FleetOptions shape `heatsink survey --launcher slurm`.
type FleetOptions struct {
	// Nodes and Partition are the allocation's.
	Nodes     int
	Partition string
	// Dir is the fleet's directory: each node's survey is its run
	// directory Dir/nodes/<node>, written there by the node itself, so Dir
	// must be on a filesystem every node shares (as the heatsink binary
	// the nodes run usually is).
	Dir string
	// Survey is the command line of one node's survey, given the node's
	// name and its run directory (heatsink survey --out DIR ...).
	Survey func(node, dir string) []string
	// Analysis are the options each node's recording is judged with,
	// the same as the node's own survey used.
	Analysis analysis.Options
	Rule     analysis.SurveyRule
	// Against is the earlier survey (a fleet's or a node's) drift is
	// judged against; nil for none.
	Against *analysis.Survey
	// Progress receives each node's progress lines, prefixed with its name.
	Progress io.Writer
	Client   slurm.Client
}

// SurveyFleet allocates the nodes, runs one survey on each at once (a
// job step per node, so that each node's exit status and output are its
// own), gives the nodes back, and judges the fleet from the nodes' run
// directories. A node whose survey failed is named in the result with
// its last words; the others are judged all the same. It returns an error
// only when no survey could start (no allocation, no directory).
func SurveyFleet(ctx context.Context, o FleetOptions) (analysis.FleetSurvey, error) {
	var none analysis.FleetSurvey
	if o.Nodes < 1 {
		return none, fmt.Errorf("--nodes %d: at least 1", o.Nodes)
	}
	if err := o.Client.Check(); err != nil {
		return none, err
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, "nodes"), 0o755); err != nil {
		return none, fmt.Errorf("fleet survey directory: %w", err)
	}
	runID := time.Now().UTC().Format("20060102T150405Z") + "-fleet"
	a, err := o.Client.Allocate(ctx, slurm.AllocOptions{Nodes: o.Nodes, Partition: o.Partition, Name: "heatsink-survey"})
	if err != nil {
		return none, err
	}
	fmt.Fprintf(o.Progress, "heatsink: fleet survey: slurm job %s holds %s, one survey on each at once\n", a.Job.ID, strings.Join(a.Job.Nodes, ","))
	runs := make([]analysis.FleetInput, len(a.Job.Nodes))
	var wg sync.WaitGroup
	for i, n := range a.Job.Nodes {
		wg.Go(func() { runs[i] = surveyNode(ctx, a, n, o) })
	}
	wg.Wait()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := a.Release(rctx); err != nil {
		fmt.Fprintf(o.Progress, "heatsink: fleet survey: release slurm job %s: %v\n", a.Job.ID, err)
	}
	if ctx.Err() != nil {
		return none, fmt.Errorf("fleet survey interrupted: %w", ctx.Err())
	}
	f := analysis.JudgeFleet(runID, runs, o.Against, o.Rule)
	f.SlurmJob = a.Job.ID
	return f, analysis.WriteFleetSurvey(o.Dir, f)
}

// surveyNode runs one node's survey as a step of the allocation and reads
// back what it recorded. The node's survey judges itself (exit 0 or 1,
// its survey.json); anything else, or a run directory that cannot be
// analysed, fails the node with the reason.
func surveyNode(ctx context.Context, a *slurm.Allocation, node string, o FleetOptions) analysis.FleetInput {
	rel := filepath.Join("nodes", node)
	dir := filepath.Join(o.Dir, rel)
	in := analysis.FleetInput{Node: analysis.FleetNode{Host: node, Dir: rel, ExitCode: -1}}
	argv := a.SrunOn(node, o.Survey(node, dir))
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), a.Client.Env...)
	// srun forwards SIGTERM to the step's tasks; the survey stops its load.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	out, last := &lastLine{w: o.Progress, prefix: node + ": "}, &lastLine{w: o.Progress, prefix: node + ": "}
	cmd.Stdout, cmd.Stderr = out, last
	err := cmd.Run()
	out.flush()
	last.flush()
	var exit *exec.ExitError
	switch {
	case err == nil:
		in.Node.ExitCode = 0
	case errors.As(err, &exit):
		in.Node.ExitCode = exit.ExitCode()
	default:
		in.Err = fmt.Errorf("srun on %s: %w", node, err)
		return in
	}
	if in.Node.ExitCode != 0 && in.Node.ExitCode != 1 {
		in.Err = fmt.Errorf("its survey exited %d: %s", in.Node.ExitCode, last.text())
		return in
	}
	if _, err := analysis.ReadSurvey(dir); err != nil {
		in.Err = fmt.Errorf("its survey exited %d but left no survey.json at %s (is the fleet directory on a filesystem every node shares?): %w", in.Node.ExitCode, dir, err)
		return in
	}
	r, err := analysis.Load(dir)
	if err != nil {
		in.Err = fmt.Errorf("read its survey: %w", err)
		return in
	}
	in.Report, in.Run = analysis.Analyze(r, o.Analysis), r
	return in
}

// lastLine copies one of a node's outputs to w line by line with the
// node's name in front, keeping its last non-empty line not srun's: on
// stderr, a failed survey's reason.
type lastLine struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	partial []byte
	last    string
}

func (l *lastLine) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := strings.IndexByte(string(l.partial), '\n')
		if i < 0 {
			return len(p), nil
		}
		l.line(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
}

func (l *lastLine) line(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	// srun's own words on ending the step are not why the survey failed.
	if !strings.HasPrefix(s, "srun: ") {
		l.last = s
	}
	fmt.Fprintln(l.w, l.prefix+s)
}

func (l *lastLine) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.line(string(l.partial))
		l.partial = nil
	}
}

func (l *lastLine) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == "" {
		return "no output"
	}
	return strings.TrimPrefix(l.last, "heatsink: ")
}
