package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Client runs Slurm's commands (scontrol, salloc, srun, scancel). The zero
// value runs them from PATH with the environment heatsink has, which is
// how Slurm's own scripts (Prolog, Epilog, HealthCheckProgram) find them.
type Client struct {
	// Bin is the directory of the Slurm commands; "" looks them up in PATH.
	Bin string
	// Env is added to the commands' environment (SLURM_CONF=... in tests).
	Env []string
	// Timeout bounds each command; default 30s. Slurm's commands retry a
	// busy controller on their own, and a health check must not hang.
	Timeout time.Duration
}

func (c Client) path(name string) string {
	if c.Bin != "" {
		return filepath.Join(c.Bin, name)
	}
	if _, err := exec.LookPath(name); err == nil {
		return name
	}
	// slurmd and slurmctld run the Prolog, the Epilogs and the health
	// check with no PATH at all: look where packages put the commands.
	for _, dir := range binDirs {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return name
}

// binDirs are where Slurm's commands live when PATH does not say:
// distribution packages, source installs, and the common site prefix.
var binDirs = []string{"/usr/bin", "/usr/local/bin", "/opt/slurm/bin"}

// Run runs a Slurm command and returns its standard output; the error
// names the command and carries what it printed on standard error.
func (c Client) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path(name), args...)
	cmd.Env = append(os.Environ(), c.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (timeout %v)", err, timeout)
		}
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return stdout.Bytes(), nil
}

// JobInfo is what heatsink needs of a job.
type JobInfo struct {
	ID    string
	Name  string
	State string
	// User, UID and GID are the job's owner as the controller knows it.
	User            string
	UID, GID        int
	Nodes           []string // expanded from NodeList
	Start           time.Time
	End             time.Time // zero while the job runs
	WorkDir, StdOut string
	Partition       string

	nodeList string // Slurm's compressed host list, before expansion
}

// Job describes a job the controller still knows (running, or finished
// less than MinJobAge ago). From Slurm 23.02 on it reads Slurm's
// structured output (`squeue --json`, the data_parser plugins). Before,
// squeue --json exists (openapi plugins, 21.08-22.05) but ignores --jobs
// and serialises the controller's whole job list, once per job's epilog:
// there, and where --json is missing, jobText reads squeue's text output
// one field per call, filtered by the controller.
func (c Client) Job(ctx context.Context, id string) (JobInfo, error) {
	if !jobID.MatchString(id) {
		return JobInfo{}, fmt.Errorf("job id %q is not a job id", id)
	}
	var j JobInfo
	err := errJSONFilterIgnored
	if c.squeueFiltersJSON(ctx) {
		j, err = c.jobJSON(ctx, id)
	}
	if errNoJSON(err) {
		var terr error
		if j, terr = c.jobText(ctx, id); terr != nil {
			return j, fmt.Errorf("%w (squeue --json: %v)", terr, err)
		}
		err = nil
	}
	if err != nil {
		return j, err
	}
	if nl := j.nodeList; nl != "" && nl != "(null)" {
		if j.Nodes, err = c.Hostnames(ctx, nl); err != nil {
			return j, err
		}
	}
	return j, nil
}

// JobName is a job's name, read alone (one squeue call, the name being
// the whole line): what the Prolog needs on every node of a job, at the
// cost of one request to the controller.
func (c Client) JobName(ctx context.Context, id string) (string, error) {
	if !jobID.MatchString(id) {
		return "", fmt.Errorf("job id %q is not a job id", id)
	}
	return c.squeueField(ctx, id, "%j")
}

// squeueField is one squeue --format of one job, which must be one line.
func (c Client) squeueField(ctx context.Context, id, format string) (string, error) {
	out, err := c.Run(ctx, "squeue", "--noheader", "--states=all", "--jobs="+id, "--format="+format)
	if err != nil {
		return "", err
	}
	v, ok := strings.CutSuffix(string(out), "\n")
	if !ok || strings.Contains(v, "\n") {
		return "", fmt.Errorf("squeue --format=%s for job %s: want one line, got %q", format, id, out)
	}
	return v, nil
}

// jobText reads a job from squeue's text output for a Slurm whose squeue
// has no --json. `scontrol show job --oneliner` runs all fields together
// on one line, where a value the job's user chose (JobName, WorkDir,
// StdOut, Comment) can hold " UserId=root(0)" and pose as another field.
// So every field comes from squeue: the ones that cannot hold a space in
// one call, the working directory and the name each in a call of its own,
// where a value is the whole line. scontrol's line only adds StdOut, and
// its UserId must agree with squeue's.
func (c Client) jobText(ctx context.Context, id string) (JobInfo, error) {
	field := func(format string) (string, error) { return c.squeueField(ctx, id, format) }
	j := JobInfo{ID: id}
	const format = "%U %G %u %T %S %e %P %N"
	words, err := field(format)
	if err != nil {
		return j, err
	}
	var start, end string
	if n, _ := fmt.Sscan(words, &j.UID, &j.GID, &j.User, &j.State, &start, &end, &j.Partition, &j.nodeList); n < 7 || len(strings.Fields(words)) > 8 {
		return j, fmt.Errorf("squeue --format=%q for job %s: %q is not uid gid user state start end partition nodes", format, id, words)
	}
	if j.WorkDir, err = field("%Z"); err != nil {
		return j, err
	}
	if j.Name, err = field("%j"); err != nil {
		return j, err
	}
	if j.Start, err = parseTime(start); err != nil {
		return j, fmt.Errorf("job %s: start time: %w", id, err)
	}
	if j.End, err = parseTime(end); err != nil {
		return j, fmt.Errorf("job %s: end time: %w", id, err)
	}
	if running(j.State) {
		j.End = time.Time{} // the end is then the time limit
	}
	out, err := c.Run(ctx, "scontrol", "show", "job", "--oneliner", id)
	if err != nil {
		return j, err
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if !strings.HasPrefix(line, "JobId="+id+" ") {
		return j, fmt.Errorf("scontrol show job %s: answer is about another job: %.40q", id, line)
	}
	if !strings.Contains(line, fmt.Sprintf(" UserId=%s(%d) GroupId=", j.User, j.UID)) {
		return j, fmt.Errorf("job %s: scontrol's line has no UserId=%s(%d), which squeue reports: refusing to guess the owner", id, j.User, j.UID)
	}
	j.StdOut = ParseRecord(line)["StdOut"]
	return j, nil
}

func running(state string) bool {
	switch strings.Fields(state + " ")[0] {
	case "RUNNING", "PENDING", "SUSPENDED", "CONFIGURING", "COMPLETING":
		return true
	}
	return false
}

// parseTime reads Slurm's local times (2026-03-01T12:00:00); "Unknown",
// "None", "NONE" (squeue's end of a running job) and "N/A" are the zero
// time.
func parseTime(s string) (time.Time, error) {
	switch s {
	case "", "Unknown", "None", "NONE", "N/A":
		return time.Time{}, nil
	}
	return time.ParseInLocation("2006-01-02T15:04:05", s, time.Local)
}

// NodeInfo is what the health check needs of `scontrol show node`.
type NodeInfo struct {
	Name string
	// State is the full state, e.g. IDLE+DRAIN, MIXED+DRAIN, DOWN*.
	State string
	// Reason is the admin's or heatsink's reason, without the
	// [user@time] Slurm appends.
	Reason string
	// Gres is the node's configured generic resources (gpu:4, or
	// gpu:h100:8(S:0-1)), "(null)" for none.
	Gres string
	// Weight is the node's scheduling weight as slurmctld has it now.
	Weight string
}

// HasGPUGres reports whether the node's GPUs are Slurm gres, so that a
// job given none of them holds none.
func (n NodeInfo) HasGPUGres() bool {
	for g := range strings.SplitSeq(n.Gres, ",") {
		if name, _, _ := strings.Cut(g, ":"); name == "gpu" {
			return true
		}
	}
	return false
}

// Drained reports whether the node is drained or draining.
func (n NodeInfo) Drained() bool { return strings.Contains(n.State, "DRAIN") }

var reasonStamp = regexp.MustCompile(`\s*\[[^\]]*@[^\]]*\]$`)

// Node describes a node.
func (c Client) Node(ctx context.Context, name string) (NodeInfo, error) {
	out, err := c.Run(ctx, "scontrol", "show", "node", "--oneliner", name)
	if err != nil {
		return NodeInfo{}, err
	}
	kv := ParseRecord(string(out))
	if kv["NodeName"] != name {
		return NodeInfo{}, fmt.Errorf("scontrol show node %s: answer is about node %q", name, kv["NodeName"])
	}
	return NodeInfo{Name: name, State: kv["State"], Reason: reasonStamp.ReplaceAllString(kv["Reason"], ""), Gres: kv["Gres"], Weight: kv["Weight"]}, nil
}

// Drain drains the node with a reason: running jobs finish, no new job
// starts on it.
func (c Client) Drain(ctx context.Context, node, reason string) error {
	_, err := c.Run(ctx, "scontrol", "update", "NodeName="+node, "State=DRAIN", "Reason="+reason)
	return err
}

// Resume returns a drained node to service.
func (c Client) Resume(ctx context.Context, node string) error {
	_, err := c.Run(ctx, "scontrol", "update", "NodeName="+node, "State=RESUME")
	return err
}

// Hostnames expands a Slurm host list (n[1-3,7]) with scontrol, which
// knows every form the controller writes.
func (c Client) Hostnames(ctx context.Context, list string) ([]string, error) {
	out, err := c.Run(ctx, "scontrol", "show", "hostnames", list)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// keyRE matches the start of a pair: Slurm's keys are CamelCase (JobId,
// ReqB:S:C:T, Socks/Node), so a lowercase word=value inside a reason
// ("gpu=0") is taken as part of the value.
var keyRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9_:/.]*=`)

// ParseRecord reads one record of `scontrol show ... --oneliner`: Key=Value
// pairs separated by spaces. Values may themselves hold spaces (a Reason,
// a Comment, a path): a word that does not start with Key= continues the
// value before it, as does a word starting with a lowercase letter. The
// first record is read when there are several lines.
func ParseRecord(s string) map[string]string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	out := map[string]string{}
	last := ""
	for _, w := range strings.Split(line, " ") {
		if keyRE.MatchString(w) {
			k, v, _ := strings.Cut(w, "=")
			if _, dup := out[k]; !dup {
				out[k], last = v, k
				continue
			}
		}
		if last != "" {
			out[last] += " " + w
		}
	}
	return out
}

// ErrNotFound is returned when Slurm's commands are not installed.
var ErrNotFound = errors.New("slurm commands not found")

// Check makes sure scontrol can be run, so a missing Slurm is one clear error.
func (c Client) Check() error {
	if _, err := exec.LookPath(c.path("scontrol")); err != nil {
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return nil
}
