package spool

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

func lines(from, n int) []byte {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "cpu,host=a usage_pct=%d %d\n", i, 1700000000000000000+int64(i))
	}
	return []byte(b.String())
}

// drain reads and commits everything unsent, returning the usage_pct values in order.
func drain(t *testing.T, s *Spool, batch int) []int {
	t.Helper()
	var got []int
	for {
		b, err := s.Next(batch, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b.Points == 0 {
			return got
		}
		got = append(got, values(t, b.Lines)...)
		if len(values(t, b.Lines)) != b.Points {
			t.Fatalf("batch says %d points, holds %d lines", b.Points, len(values(t, b.Lines)))
		}
		if err := s.Commit(b); err != nil {
			t.Fatal(err)
		}
	}
}

func values(t *testing.T, lp []byte) []int {
	t.Helper()
	r := point.NewReader(strings.NewReader(string(lp)), "batch")
	var out []int
	for {
		p, lerr, ok := r.Next()
		if !ok {
			return out
		}
		if lerr != nil {
			t.Fatalf("batch holds a bad line: %v", lerr)
		}
		v, _ := p.Float("usage_pct")
		out = append(out, int(v))
	}
}

func wantSequence(t *testing.T, got []int, from, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("got %d points, want %d", len(got), n)
	}
	for i, v := range got {
		if v != from+i {
			t.Fatalf("point %d is %d, want %d (order or loss)", i, v, from+i)
		}
	}
}

func TestAppendedPointsComeOutInOrderAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if err := s.Append(lines(i*7, 7), 7); err != nil {
			t.Fatal(err)
		}
	}
	// Send the first 25, as a shipper would, then stop.
	b, err := s.Next(25, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantSequence(t, values(t, b.Lines), 0, 25)
	if b.Oldest.IsZero() || time.Since(b.Oldest) > time.Minute {
		t.Errorf("batch oldest %v, want the append time", b.Oldest)
	}
	if err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	// A batch read but not committed is sent again after a restart.
	if _, err := s.Next(10, 0, nil); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.UnsentPoints != 45 || st.Oldest.IsZero() {
		t.Errorf("stats %+v, want 45 unsent with an oldest time", st)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.Stats(); st.UnsentPoints != 45 {
		t.Fatalf("after reopen %d unsent, want 45", st.UnsentPoints)
	}
	wantSequence(t, drain(t, s, 8), 25, 45)
	if st := s.Stats(); st.UnsentPoints != 0 || st.UnsentBytes != 0 || !st.Oldest.IsZero() {
		t.Errorf("after draining: %+v", st)
	}
}

func TestSentSegmentsAreDeleted(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{SegmentBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if err := s.Append(lines(i*3, 3), 3); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Stats().Segments; n < 5 {
		t.Fatalf("%d segments for ~7 kB at 1 kB each", n)
	}
	wantSequence(t, drain(t, s, 7), 0, 150)
	segs, _ := filepath.Glob(filepath.Join(dir, "*.lp"))
	if len(segs) != 1 {
		t.Errorf("segments left after sending everything: %v", segs)
	}
	s.Close()
	// Appending goes on after a reopen, into the same sequence.
	s, err = Open(dir, Options{SegmentBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Append(lines(150, 2), 2); err != nil {
		t.Fatal(err)
	}
	wantSequence(t, drain(t, s, 7), 150, 2)
}

func TestTornLastLineIsCutAtOpen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(lines(0, 5), 5); err != nil {
		t.Fatal(err)
	}
	seg := s.Stats().Segments
	s.Close()
	// A crash in the middle of a write leaves half a line.
	segs, _ := filepath.Glob(filepath.Join(dir, "*.lp"))
	if len(segs) != seg {
		t.Fatal(segs)
	}
	f, err := os.OpenFile(segs[len(segs)-1], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("# appended=1\ncpu,host=a usage_pct=99 17000")
	f.Close()

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Append(lines(5, 2), 2); err != nil {
		t.Fatal(err)
	}
	wantSequence(t, drain(t, s, 100), 0, 7)
}

func TestFullSpoolDropsAndCountsThenRecovers(t *testing.T) {
	s, err := Open(t.TempDir(), Options{MaxBytes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	chunk := lines(0, 10) // ~450 bytes
	accepted := 0
	var full int
	for i := 0; i < 10; i++ {
		err := s.Append(chunk, 10)
		switch {
		case errors.Is(err, ErrFull):
			full++
		case err != nil:
			t.Fatal(err)
		default:
			accepted += 10
		}
	}
	st := s.Stats()
	if full == 0 || st.RefusedPoints != int64(full*10) || st.UnsentPoints != int64(accepted) {
		t.Fatalf("%d appends refused; stats %+v, accepted %d", full, st, accepted)
	}
	if st.UnsentBytes > 2000 {
		t.Errorf("unsent %d bytes, over the 2000 cap", st.UnsentBytes)
	}
	if len(drain(t, s, 1000)) != accepted {
		t.Fatal("accepted points lost")
	}
	if err := s.Append(chunk, 10); err != nil {
		t.Errorf("append after draining a full spool: %v", err)
	}
}

func TestSecondOpenOfTheSameSpoolIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Open(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second open: %v, want an in-use error", err)
	}
}

func TestUnreadablePositionResendsRatherThanLoses(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Append(lines(0, 4), 4)
	b, _ := s.Next(2, 0, nil)
	s.Commit(b)
	s.Close()
	os.WriteFile(filepath.Join(dir, positionFile), []byte("{garbage"), 0o600)
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wantSequence(t, drain(t, s, 10), 0, 4)
}

// The crash test runs a real child process that appends in a loop and
// prints each batch number once Append has returned; it is killed with
// SIGKILL mid-stream. Every batch it reported must be in the spool.
func TestKill9LosesNothingThatAppendReturned(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppender$")
	cmd.Env = append(os.Environ(), "SPOOL_APPENDER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	last := -1
	for sc.Scan() {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			continue
		}
		last = n
		if n == 300 {
			cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	io.Copy(io.Discard, out)
	cmd.Wait()
	if last < 300 {
		t.Fatalf("appender reported only %d batches", last)
	}
	s, err := Open(dir, Options{SegmentBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := drain(t, s, 500)
	// Batch k holds points 5k..5k+4; every reported batch must be there,
	// in order, and nothing beyond what the child could have written.
	if len(got) < 5*(last+1) {
		t.Fatalf("spool holds %d points, child had appended at least %d", len(got), 5*(last+1))
	}
	wantSequence(t, got, 0, len(got))
}

func TestHelperAppender(t *testing.T) {
	dir := os.Getenv("SPOOL_APPENDER_DIR")
	if dir == "" {
		t.Skip("helper process for TestKill9LosesNothingThatAppendReturned")
	}
	s, err := Open(dir, Options{SegmentBytes: 4096, SyncEvery: time.Hour})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for k := 0; ; k++ {
		if err := s.Append(lines(5*k, 5), 5); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(k)
	}
}
