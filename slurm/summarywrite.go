package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// FileName is the summary's file name beside the job's output.
func FileName(job string) string { return "job-" + job + "-thermal.json" }

// MaxSummaryBytes bounds what the writer child reads on its standard
// input: a summary of a few thousand components is well under a megabyte.
const MaxSummaryBytes = 64 << 20

// UserWriter writes a summary as the job's user. As EpilogSlurmctld,
// heatsink runs as root and the job's working directory is whatever the
// job said; only the kernel's own permission checks, applied to the user,
// keep root from writing where the user could not (a WorkDir that is a
// link into /etc, or simply /etc). So the file is created by a child
// process running with the user's uid, primary gid and supplementary
// groups, never by root followed by a chown.
type UserWriter struct {
	User     string
	UID, GID int
	Groups   []int
	// Command is the program and its first arguments that, started as
	// the user with the directory and the job id appended, reads the
	// summary on standard input and calls ReceiveSummary: heatsink's
	// hidden `slurm write-summary` sub-command.
	Command []string
	// Timeout bounds the child (default 30 s): a process of the user's,
	// which the user may stop, must not hold up the controller's epilog.
	Timeout time.Duration
}

// UserWriterFor is the writer for the job's owner, uid as the controller
// reports it. Running as anyone but root it is nil: the file is simply
// the caller's. The user must resolve on this host (passwd, LDAP) to the
// same name the controller gave, else nothing is written.
func UserWriterFor(uid int, username string, command []string) (*UserWriter, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return nil, fmt.Errorf("job summary: the job's user (uid %d) on this host: %w; nothing written", uid, err)
	}
	if username != "" && u.Username != username {
		return nil, fmt.Errorf("job summary: uid %d is %q on this host, the controller says %q; nothing written", uid, u.Username, username)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("job summary: user %s: primary group %q: %w", u.Username, u.Gid, err)
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("job summary: groups of user %s: %w; nothing written", u.Username, err)
	}
	w := &UserWriter{User: u.Username, UID: uid, GID: gid, Command: command}
	for _, s := range ids {
		g, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("job summary: user %s: group %q: %w", u.Username, s, err)
		}
		w.Groups = append(w.Groups, g)
	}
	return w, nil
}

// WriteFile writes the summary as JSON into dir (atomically) and returns
// its path: in this process when w is nil or is this process's own user,
// else in a child process running as w's user. Either way no symbolic
// link is followed, neither in dir nor at the file's name.
func (s *Summary) WriteFile(dir string, w *UserWriter) (string, error) {
	if !jobID.MatchString(s.Job) {
		return "", fmt.Errorf("write job summary: job id %q is not a job id", s.Job)
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return "", fmt.Errorf("write job summary: %w", err)
	}
	b = append(b, '\n')
	if w == nil || w.UID == os.Geteuid() {
		return writeSummaryAt(dir, s.Job, b)
	}
	return w.write(dir, s.Job, b)
}

// write runs w.Command as the user with the summary on its standard input.
func (w *UserWriter) write(dir, job string, b []byte) (string, error) {
	if len(w.Command) == 0 {
		return "", fmt.Errorf("write job summary into %s as %s: no writer command; nothing written", dir, w.User)
	}
	timeout := w.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.Command[0], append(slices.Clone(w.Command[1:]), dir, job)...)
	groups := make([]uint32, len(w.Groups))
	for i, g := range w.Groups {
		groups[i] = uint32(g)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(w.UID), Gid: uint32(w.GID), Groups: groups},
		Pdeathsig: syscall.SIGKILL, Setpgid: true}
	// On timeout the whole process group goes, whatever the child started.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Dir = "/" // root's working directory may be closed to the user
	// A process of the user's: the user may read its environment
	// (/proc/PID/environ) and use any descriptor it inherits, so it gets
	// no environment of root's (where a token may be) and no descriptor
	// root's own parent left open.
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	if err := closeInheritedOnExec(); err != nil {
		return "", fmt.Errorf("write job summary as %s: %w; nothing written", w.User, err)
	}
	cmd.Stdin = bytes.NewReader(b)
	var stdout, stderr limitedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if ctx.Err() != nil {
			msg = fmt.Sprintf("no answer in %v; %s", timeout, msg)
		}
		return "", fmt.Errorf("write job summary into %s as %s (uid %d): %v: %s", dir, w.User, w.UID, err, msg)
	}
	path := strings.TrimSpace(stdout.String())
	if want := filepath.Join(dir, FileName(job)); path != want {
		return "", fmt.Errorf("write job summary as %s: the writer reported %q, want %q", w.User, path, want)
	}
	return path, nil
}

// ReceiveSummary is the writer child's part: it reads a summary of job
// from r and writes it into dir with the rights of whoever runs it.
func ReceiveSummary(dir, job string, r io.Reader) (string, error) {
	if !jobID.MatchString(job) {
		return "", fmt.Errorf("write job summary: job id %q is not a job id", job)
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxSummaryBytes+1))
	if err != nil {
		return "", fmt.Errorf("write job summary: read standard input: %w", err)
	}
	if len(b) > MaxSummaryBytes {
		return "", fmt.Errorf("write job summary: over %d bytes on standard input", MaxSummaryBytes)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil || s.Job != job {
		return "", fmt.Errorf("write job summary: standard input is not the summary of job %s (%v)", job, err)
	}
	return writeSummaryAt(dir, job, b)
}

// writeSummaryAt creates dir/job-ID-thermal.json: dir is opened without
// following a link in any of its components, and everything then happens
// relative to that descriptor. The temporary file gets a fresh name
// (O_EXCL|O_NOFOLLOW) and is renamed over the final name: rename replaces
// a link planted there, it never follows one.
func writeSummaryAt(dir, job string, b []byte) (string, error) {
	name := FileName(job)
	path := filepath.Join(dir, name)
	dfd, err := openDirNoFollow(dir)
	if err != nil {
		return "", fmt.Errorf("write job summary: %w", err)
	}
	defer unix.Close(dfd)
	var tmp string
	fd := -1
	for range 100 {
		tmp = fmt.Sprintf(".%s.%d.%d.tmp", name, os.Getpid(), rand.Uint64())
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return "", fmt.Errorf("write job summary: create %s: %w", filepath.Join(dir, tmp), err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tmp))
	_, werr := f.Write(b)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(dfd, tmp, dfd, name)
	}
	if werr != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return "", fmt.Errorf("write job summary %s: %w", path, werr)
	}
	return path, nil
}

// limitedBuffer keeps the first 64 KiB written to it: the writer child
// runs as the user, who may make it print without end.
type limitedBuffer struct{ bytes.Buffer }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := 64<<10 - l.Len(); room > 0 {
		l.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// closeInheritedOnExec marks every descriptor this process has beyond
// standard input, output and error close-on-exec. Go opens its own that
// way; this catches those inherited from whoever started heatsink.
func closeInheritedOnExec() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list open descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // closed since the listing (its own descriptor among them)
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil {
			return fmt.Errorf("descriptor %d: close on exec: %w", fd, err)
		}
	}
	return nil
}
