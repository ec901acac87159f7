package workloads

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/configs/secret"
)

// Command is an external program run as the job. Each Run starts it in a
// process group of its own, so that pausing, stopping and cleaning up reach
// every process it forks (as Slurm's process tracking does), and so that a
// Ctrl-C on the terminal reaches heatsink alone, which then stops the job in
// order and finishes its records.
//
// Pause, Resume and Stop act on the group of the run in progress and are safe
// to call from any goroutine (the alert guard calls them from the collector's).
type Command struct {
	// Argv is the command line; Argv[0] was resolved to Path.
	Argv []string
	Path string
	// Dir is the working directory; "" for heatsink's own.
	Dir string
	// Stdout and Stderr receive the job's output; nil discards it.
	Stdout, Stderr io.Writer
	// Grace is the time between SIGTERM and SIGKILL when the job is stopped.
	Grace time.Duration
	// DropEnv names variables of heatsink's environment the job must not
	// inherit: the secrets heatsink read from it (configs.Config.SecretEnv).
	DropEnv []string

	mu     sync.Mutex
	pgid   int  // process group of the run in progress; 0 between runs
	paused bool // SIGSTOP sent and not yet undone
	// held is what Pause and Resume last asked, between runs too: a run
	// that starts while the job is held is stopped at once, so a pause
	// that raced the start of an iteration is not lost.
	held  bool
	stop  chan struct{} // closed by Stop during a run
	hurry chan struct{} // closed by Kill: skip what is left of the grace period
}

// NewCommand resolves argv[0] on PATH and checks it can be executed, so that a
// command that cannot start is an error before the experiment begins.
func NewCommand(argv []string) (*Command, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("no command given")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("command %q: %w", argv[0], err)
	}
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("command %q: %w", argv[0], err)
	} else if fi.IsDir() {
		return nil, fmt.Errorf("command %q: %s is a directory", argv[0], path)
	}
	return &Command{Argv: argv, Path: path, Grace: DefaultGrace}, nil
}

// Name is the program's base name, used as the workload tag of a command job.
func (c *Command) Name() string { return filepath.Base(c.Argv[0]) }

// Exit statuses of runs that did not exit by themselves, as a POSIX shell
// reports them.
const (
	ExitCannotExecute = 126
	ExitNotFound      = 127
	exitSignalBase    = 128
)

// Run runs the command once with env added to heatsink's environment. It
// returns the exit status (128+N when killed by signal N, as a shell reports
// it) once the program has exited and no process of its group is left: a
// program that leaves children behind has them terminated too, so nothing of
// the job heats the node during the cooldown. When ctx is done or Stop is
// called, the group gets SIGTERM, then SIGKILL after the grace period. The
// error is set only when the program could not be started.
func (c *Command) Run(ctx context.Context, env []string) (int, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return ExitCannotExecute, fmt.Errorf("start %s: %w", c.Path, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return ExitCannotExecute, fmt.Errorf("start %s: %w", c.Path, err)
	}
	cmd := exec.Command(c.Path)
	cmd.Args = c.Argv
	cmd.Dir = c.Dir
	cmd.Env = append(secret.Environ(os.Environ(), c.DropEnv), env...)
	// The pipes are *os.File, so Wait returns when the program exits rather
	// than when the last child holding them closes them.
	cmd.Stdout, cmd.Stderr = outW, errW
	// Pdeathsig: if heatsink dies without stopping the job (kill -9, OOM),
	// the kernel kills the job's leader, so no job heats the node unguarded
	// and unrecorded. It reaches the leader only; the children the job
	// started are killed by the job's guard (startGuard).
	// The kernel sends it when the forking thread exits, and Go's threads
	// live as long as the process unless a goroutine exits locked to one,
	// which heatsink never does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stop, hurry := make(chan struct{}), make(chan struct{})
	c.mu.Lock()
	err = cmd.Start()
	if err == nil {
		c.pgid, c.stop, c.hurry, c.paused = cmd.Process.Pid, stop, hurry, false
		if c.held && syscall.Kill(-c.pgid, syscall.SIGSTOP) == nil {
			c.paused = true
		}
	}
	c.mu.Unlock()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		status := ExitCannotExecute
		if errors.Is(err, os.ErrNotExist) {
			status = ExitNotFound
		}
		return status, fmt.Errorf("start %s: %w", c.Path, err)
	}
	pgid := cmd.Process.Pid
	if guard := startGuard(pgid); guard != nil {
		defer stopGuard(guard)
	}
	var copies sync.WaitGroup
	copies.Add(2)
	go copyOut(&copies, c.Stdout, outR)
	go copyOut(&copies, c.Stderr, errR)

	waited := make(chan struct{})
	go func() {
		cmd.Wait() // the status is read from ProcessState
		close(waited)
	}()
	select {
	case <-waited:
	case <-ctx.Done():
		c.terminate(pgid, hurry)
		<-waited
	case <-stop:
		c.terminate(pgid, hurry)
		<-waited
	}
	// The leader is gone; whatever it left in its group goes too.
	if groupAlive(pgid) {
		c.terminate(pgid, hurry)
	}
	c.mu.Lock()
	c.pgid, c.stop, c.hurry, c.paused = 0, nil, nil, false
	c.mu.Unlock()

	// Output still held by an escaped process (one that left the group) is
	// cut off after the grace period, so a run always ends.
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(c.Grace + time.Second):
		outR.Close()
		errR.Close()
		<-drained
	}
	outR.Close()
	errR.Close()
	return exitStatus(cmd.ProcessState), nil
}

// startGuard starts a watcher of the job's process group. Pdeathsig reaches
// the job's leader only: what the job started (a shell's background
// children) would be reparented and heat the node unguarded after a kill -9
// of heatsink. The guard is a shell in a group of its own that the kernel
// sends SIGTERM when heatsink dies; it then kills the job's whole group and
// its own. nil when no shell could be started: Pdeathsig still stops the
// leader.
func startGuard(pgid int) *exec.Cmd {
	const script = `trap 'kill -KILL -"$1" 2>/dev/null; kill -KILL 0' TERM; while :; do sleep 3600 & wait $!; done`
	g := exec.Command("/bin/sh", "-c", script, "heatsink-job-guard", strconv.Itoa(pgid))
	g.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := g.Start(); err != nil {
		return nil
	}
	return g
}

// stopGuard ends the guard of a job that has ended, with its sleep.
func stopGuard(g *exec.Cmd) {
	syscall.Kill(-g.Process.Pid, syscall.SIGKILL)
	g.Wait()
}

func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitSignalBase + int(ws.Signal())
	}
	return ps.ExitCode()
}

// copyOut copies a job's output to w; when w fails (heatsink's own stdout
// closed, say) the rest is read and dropped, so the job never blocks on a full
// pipe or dies of SIGPIPE because of where heatsink shows its output.
func copyOut(wg *sync.WaitGroup, w io.Writer, r io.Reader) {
	defer wg.Done()
	if w == nil {
		w = io.Discard
	}
	if _, err := io.Copy(w, r); err != nil {
		io.Copy(io.Discard, r)
	}
}

// terminate sends SIGTERM to the group (and SIGCONT, so a paused job can act
// on it), waits for the group to empty for up to the grace period, then sends
// SIGKILL.
func (c *Command) terminate(pgid int, hurry <-chan struct{}) {
	syscall.Kill(-pgid, syscall.SIGTERM)
	syscall.Kill(-pgid, syscall.SIGCONT)
	if !waitGroupGone(pgid, c.Grace, hurry) {
		syscall.Kill(-pgid, syscall.SIGKILL)
		waitGroupGone(pgid, 10*time.Second, nil)
	}
}

// waitGroupGone polls until no live process is left in the group, for at
// most d or until hurry is closed. It reports whether the group is gone.
func waitGroupGone(pgid int, d time.Duration, hurry <-chan struct{}) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if !groupAlive(pgid) {
			return true
		}
		select {
		case <-deadline.C:
			return !groupAlive(pgid)
		case <-hurry:
			return !groupAlive(pgid)
		case <-tick.C:
		}
	}
}

// groupAlive reports whether any process of the group is still running.
// Zombies do not count: orphans reparented to a PID 1 that never reaps (as in
// many containers) would otherwise keep a finished group alive for ever.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	return len(GroupMembers(pgid)) > 0
}

// GroupMembers lists the live (not zombie) processes of a process group, from
// /proc.
func GroupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := readProcStat(pid)
		if ok && st.pgrp == pgid && st.state != 'Z' && st.state != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

type procStat struct {
	state byte
	pgrp  int
}

// readProcStat parses /proc/PID/stat: "pid (comm) state ppid pgrp ...",
// where comm may hold spaces and parentheses, so fields are counted from the
// last ')'.
func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseProcStat(b)
}

func parseProcStat(b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return procStat{}, false
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], pgrp: pgrp}, true
}

// Pause stops every process of the running job's group (SIGSTOP).
func (c *Command) Pause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = true
	if c.pgid == 0 || c.paused {
		return nil
	}
	if err := syscall.Kill(-c.pgid, syscall.SIGSTOP); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("pause process group %d: %w", c.pgid, err)
	}
	c.paused = true
	return nil
}

// Resume continues a paused job's group (SIGCONT).
func (c *Command) Resume() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = false
	if c.pgid == 0 || !c.paused {
		return nil
	}
	if err := syscall.Kill(-c.pgid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("resume process group %d: %w", c.pgid, err)
	}
	c.paused = false
	return nil
}

// Stop asks the running job to end: SIGTERM to its group, SIGKILL after the
// grace period. It returns at once; Run returns when the group is gone.
func (c *Command) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stop != nil {
		select {
		case <-c.stop:
		default:
			close(c.stop)
		}
	}
	return nil
}

// Kill cuts a stop's grace period short: the group gets SIGKILL now.
func (c *Command) Kill() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hurry != nil {
		select {
		case <-c.hurry:
		default:
			close(c.hurry)
		}
	}
}

// Pgid returns the process group of the run in progress, or 0.
func (c *Command) Pgid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pgid
}
