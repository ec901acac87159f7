package workloads

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// lines is an io.Writer that hands the job's output to a test line by line.
type lines struct {
	mu  sync.Mutex
	buf strings.Builder
	ch  chan string
	pw  *io.PipeWriter
}

func newLines() *lines {
	pr, pw := io.Pipe()
	l := &lines{ch: make(chan string, 100), pw: pw}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			l.ch <- sc.Text()
		}
		close(l.ch)
	}()
	return l
}

func (l *lines) Write(b []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(b)
	l.mu.Unlock()
	return l.pw.Write(b)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// next waits for the next line of output.
func (l *lines) next(t *testing.T) string {
	t.Helper()
	select {
	case s, ok := <-l.ch:
		if !ok {
			t.Fatal("output ended")
		}
		return s
	case <-time.After(20 * time.Second):
		t.Fatal("no output within 20s")
	}
	return ""
}

func newTestCommand(t *testing.T, script string) *Command {
	t.Helper()
	c, err := NewCommand([]string{"sh", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	c.Grace = 5 * time.Second
	return c
}

type runResult struct {
	status int
	err    error
	took   time.Duration
}

func startRun(c *Command, env ...string) <-chan runResult {
	ch := make(chan runResult, 1)
	go func() {
		t0 := time.Now()
		s, err := c.Run(context.Background(), env)
		ch <- runResult{s, err, time.Since(t0)}
	}()
	return ch
}

func waitRun(t *testing.T, ch <-chan runResult) runResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("the command did not end within 60s")
	}
	return runResult{}
}

func TestCommandExitStatus(t *testing.T) {
	tests := []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 3", 3},
		{"kill -KILL $$", 128 + 9},
		{"kill -TERM $$", 128 + 15},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			r := waitRun(t, startRun(newTestCommand(t, tt.script)))
			if r.err != nil || r.status != tt.want {
				t.Errorf("status %d, err %v; want %d", r.status, r.err, tt.want)
			}
		})
	}
}

func TestCommandOutputAndEnvironment(t *testing.T) {
	c := newTestCommand(t, `echo "out $HEATSINK_RUN_ID"; echo "err $HEATSINK_ITERATION" >&2`)
	var out, errOut strings.Builder
	c.Stdout, c.Stderr = &out, &errOut
	r := waitRun(t, startRun(c, "HEATSINK_RUN_ID=r1", "HEATSINK_ITERATION=7"))
	if r.status != 0 || out.String() != "out r1\n" || errOut.String() != "err 7\n" {
		t.Errorf("status %d, stdout %q, stderr %q", r.status, out.String(), errOut.String())
	}
}

func TestCommandThatCannotStartIsAnErrorUpFront(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script.sh")
	os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o644)
	for _, argv := range [][]string{
		{"heatsink-no-such-command-here"},
		{filepath.Join(dir, "missing")},
		{notExec},
		{dir},
		{},
	} {
		if _, err := NewCommand(argv); err == nil {
			t.Errorf("NewCommand(%q) succeeded", argv)
		} else if len(argv) > 0 && !strings.Contains(err.Error(), argv[0]) {
			t.Errorf("error %q does not name %q", err, argv[0])
		}
	}
}

func TestStopTerminatesTheWholeGroup(t *testing.T) {
	c := newTestCommand(t, `sleep 300 & echo $!; sleep 300 & echo $!; echo $$; wait`)
	out := newLines()
	c.Stdout = out
	run := startRun(c)
	var pids []int
	for range 3 {
		pid, err := strconv.Atoi(out.next(t))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	pgid := c.Pgid()
	if got := GroupMembers(pgid); len(got) != 3 {
		t.Fatalf("group %d has %v, want the shell and two sleeps %v", pgid, got, pids)
	}
	c.Stop()
	r := waitRun(t, run)
	if r.status != 128+15 {
		t.Errorf("status %d, want 143 (SIGTERM)", r.status)
	}
	if left := GroupMembers(pgid); len(left) != 0 {
		t.Errorf("processes left in group %d: %v", pgid, left)
	}
	for _, pid := range pids {
		if st, ok := readProcStat(pid); ok && st.state != 'Z' {
			t.Errorf("pid %d still alive in state %c", pid, st.state)
		}
	}
}

func TestStopKillsAJobIgnoringSIGTERMAfterTheGrace(t *testing.T) {
	c := newTestCommand(t, `trap "" TERM; sleep 300 & echo ready; wait; wait`)
	c.Grace = 700 * time.Millisecond
	out := newLines()
	c.Stdout = out
	run := startRun(c)
	out.next(t)
	pgid := c.Pgid()
	t0 := time.Now()
	c.Stop()
	r := waitRun(t, run)
	took := time.Since(t0)
	if r.status != 128+9 {
		t.Errorf("status %d, want 137 (SIGKILL)", r.status)
	}
	if took < c.Grace {
		t.Errorf("killed after %v, before the %v grace period", took, c.Grace)
	}
	if left := GroupMembers(pgid); len(left) != 0 {
		t.Errorf("processes left in group %d: %v", pgid, left)
	}
}

func TestKillCutsTheGraceShort(t *testing.T) {
	c := newTestCommand(t, `trap "" TERM; echo ready; while :; do sleep 1; done`)
	c.Grace = time.Hour
	out := newLines()
	c.Stdout = out
	run := startRun(c)
	out.next(t)
	c.Stop()
	time.Sleep(200 * time.Millisecond)
	c.Kill()
	if r := waitRun(t, run); r.status != 128+9 {
		t.Errorf("status %d, want 137", r.status)
	}
}

func TestChildrenLeftBehindAreTerminated(t *testing.T) {
	// The shell exits 0 at once, leaving a sleep in its group holding stdout.
	c := newTestCommand(t, `sleep 300 & echo $!; exit 0`)
	out := newLines()
	c.Stdout = out
	run := startRun(c)
	child, err := strconv.Atoi(out.next(t))
	if err != nil {
		t.Fatal(err)
	}
	r := waitRun(t, run)
	if r.status != 0 {
		t.Errorf("status %d, want the leader's 0", r.status)
	}
	if st, ok := readProcStat(child); ok && st.state != 'Z' {
		t.Errorf("child %d left running (state %c)", child, st.state)
	}
}

func TestPauseStopsAndResumeContinuesTheGroup(t *testing.T) {
	// The leader waits rather than loops: dash vforks its commands, and a
	// parent whose vforked child is stopped shows state D, not T.
	c := newTestCommand(t, `sleep 300 & echo $!; echo $$; wait`)
	out := newLines()
	c.Stdout = out
	run := startRun(c)
	child, _ := strconv.Atoi(out.next(t))
	leader, _ := strconv.Atoi(out.next(t))
	state := func(pid int) byte {
		st, ok := readProcStat(pid)
		if !ok {
			t.Fatalf("pid %d gone", pid)
		}
		return st.state
	}
	waitState := func(pid int, want func(byte) bool, what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !want(state(pid)) {
			if time.Now().After(deadline) {
				t.Fatalf("pid %d in state %c, want %s", pid, state(pid), what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	stopped := func(s byte) bool { return s == 'T' }
	running := func(s byte) bool { return s == 'S' || s == 'R' }
	if err := c.Pause(); err != nil {
		t.Fatal(err)
	}
	waitState(leader, stopped, "T (stopped)")
	waitState(child, stopped, "T (stopped)")
	if err := c.Resume(); err != nil {
		t.Fatal(err)
	}
	waitState(leader, running, "S or R")
	waitState(child, running, "S or R")
	// A stop while paused still ends it: SIGCONT follows the SIGTERM.
	c.Pause()
	waitState(leader, stopped, "T (stopped)")
	c.Stop()
	if r := waitRun(t, run); r.status != 128+15 {
		t.Errorf("status %d, want 143", r.status)
	}
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		in    string
		ok    bool
		state byte
		pgrp  int
	}{
		{"4242 (sleep) S 4240 4240 4240 0 -1 4194560 105 0 0 0", true, 'S', 4240},
		{"17 (a) b) (c) T 1 99 17 0", true, 'T', 99},
		{"17 (x y z) Z 1 3 3", true, 'Z', 3},
		{"17 (x) R", false, 0, 0},
		{"17 x R 1 2", false, 0, 0},
		{"", false, 0, 0},
		{"1 (x) RR 1 2", false, 0, 0},
	}
	for _, tt := range tests {
		st, ok := parseProcStat([]byte(tt.in))
		if ok != tt.ok || (ok && (st.state != tt.state || st.pgrp != tt.pgrp)) {
			t.Errorf("parseProcStat(%q) = %+v, %v; want %c %d %v", tt.in, st, ok, tt.state, tt.pgrp, tt.ok)
		}
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (sleep) S 4240 4240 4240 0 -1"))
	f.Add([]byte("1 ()) Z 0 -5"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseProcStat(b) // must not panic
	})
}
