package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// AllocOptions describe the allocation of a multi-node run.
type AllocOptions struct {
	Nodes     int
	Partition string
	// Name is the job name; `heatsink run` uses RunPrefix + the run id, so
	// that the node agents can tag their job events with the run.
	Name string
	// TimeLimit is salloc's --time (e.g. "2:00:00"); "" takes the partition's default.
	TimeLimit string
	// Extra are further salloc options (--account, --exclusive, --gres).
	Extra []string
}

// Allocation is a Slurm job holding nodes for a whole run, so that the
// baseline, the load and the cooldown are all measured on the same nodes
// with nothing else running on them.
type Allocation struct {
	Client Client
	Job    JobInfo
}

var granted = regexp.MustCompile(`Granted job allocation ([0-9]+)`)

// Allocate asks for the nodes with salloc --no-shell and waits until they
// are ready (the Prolog has run on each). Cancelling ctx while the job is
// pending withdraws it.
func (c Client) Allocate(ctx context.Context, o AllocOptions) (*Allocation, error) {
	if o.Nodes < 1 {
		return nil, fmt.Errorf("allocate: %d nodes", o.Nodes)
	}
	args := []string{"--no-shell", "--nodes=" + strconv.Itoa(o.Nodes)}
	if o.Partition != "" {
		args = append(args, "--partition="+o.Partition)
	}
	if o.Name != "" {
		args = append(args, "--job-name="+o.Name)
	}
	if o.TimeLimit != "" {
		args = append(args, "--time="+o.TimeLimit)
	}
	args = append(args, o.Extra...)
	cmd := exec.CommandContext(ctx, c.path("salloc"), args...)
	cmd.Env = append(os.Environ(), c.Env...)
	// salloc withdraws a pending request on SIGINT; a SIGKILL would leave it queued.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	m := granted.FindStringSubmatch(out.String())
	if err != nil || m == nil {
		if m != nil {
			// Granted, then failed (the nodes never became ready): give it back.
			c.Run(context.WithoutCancel(ctx), "scancel", m[1])
		}
		if err == nil {
			err = errors.New("no job allocation granted")
		}
		return nil, fmt.Errorf("salloc %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	a := &Allocation{Client: c, Job: JobInfo{ID: m[1], Name: o.Name}}
	j, err := c.Job(ctx, m[1])
	if err != nil {
		a.Release(context.WithoutCancel(ctx))
		return nil, err
	}
	a.Job = j
	return a, nil
}

// Srun returns the command line that runs argv once on every node of the
// allocation, one task per node, within the allocation's job.
func (a *Allocation) Srun(argv []string) []string {
	out := []string{a.Client.path("srun"), "--jobid=" + a.Job.ID, "--nodes=" + strconv.Itoa(len(a.Job.Nodes)),
		"--ntasks-per-node=1", "--kill-on-bad-exit=1", "--"}
	return append(out, argv...)
}

// Release ends the allocation (scancel); the Epilog runs on every node.
func (a *Allocation) Release(ctx context.Context) error {
	_, err := a.Client.Run(ctx, "scancel", a.Job.ID)
	return err
}

// SrunOn returns the command line that runs argv once on one node of the
// allocation, as a step of its own: steps on different nodes run at once,
// which is how `heatsink tune --parallel` spreads its evaluations.
func (a *Allocation) SrunOn(node string, argv []string) []string {
	out := []string{a.Client.path("srun"), "--jobid=" + a.Job.ID, "--nodelist=" + node, "--nodes=1", "--ntasks=1", "--kill-on-bad-exit=1", "--"}
	return append(out, argv...)
}
