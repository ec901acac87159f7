package spool

import (
	"slices"
	"testing"

	"github.com/heatsink-hpc/heatsink/internal/smalldisk"
)

// A full disk (a real tmpfs filled to ENOSPC) loses the appends it refused,
// counted as dropped, and nothing else: once space returns, appending and
// sending resume by themselves, and again after a reopen.
func TestSpoolResumesAfterTheDiskWasFull(t *testing.T) {
	disk := smalldisk.Mount(t, 1<<20)
	dir := disk + "/spool"
	s, err := Open(dir, Options{SegmentBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var kept, sent []int
	next := 0
	appendBatches := func(n int) (failed int) {
		for range n {
			if err := s.Append(lines(next, 10), 10); err != nil {
				failed++
			} else {
				for v := next; v < next+10; v++ {
					kept = append(kept, v)
				}
			}
			next += 10
		}
		return failed
	}
	sendSome := func(n int) {
		for range n {
			b, err := s.Next(10, 0, nil)
			if err != nil || b.Points == 0 {
				return
			}
			// The batch was delivered before Commit is called; a commit that
			// cannot be recorded only means it may be sent again.
			sent = append(sent, values(t, b.Lines)...)
			if s.Commit(b) != nil {
				return
			}
		}
	}

	appendBatches(20)
	sendSome(5)
	free := smalldisk.Fill(t, disk)
	failed := appendBatches(40)
	sendSome(5) // the position cannot be written either
	t.Logf("%d of 40 appends failed on the full disk", failed)
	if failed == 0 {
		t.Fatal("no append failed on a full disk: the test did not fill it")
	}
	free()
	if f := appendBatches(20); f != 0 {
		t.Fatalf("%d appends failed after space returned", f)
	}
	if st := s.Stats(); st.RefusedPoints != int64(10*failed) {
		t.Errorf("dropped %d points, want the %d of the failed appends", st.RefusedPoints, 10*failed)
	}
	sendSome(3)
	if err := s.Close(); err != nil {
		t.Logf("close: %v", err)
	}

	if s, err = Open(dir, Options{SegmentBytes: 4 << 10}); err != nil {
		t.Fatalf("reopen after the disk was full: %v", err)
	}
	defer s.Close()
	if f := appendBatches(5); f != 0 {
		t.Fatalf("%d appends failed after reopening", f)
	}
	sent = append(sent, drain(t, s, 7)...)
	// At least once: a commit that could not be recorded resends.
	got := slices.Compact(slices.Sorted(slices.Values(sent)))
	if !slices.Equal(got, kept) {
		t.Errorf("sent %d distinct points, want the %d appended (missing or extra: first differences %v)", len(got), len(kept), firstDiff(got, kept))
	}
}

func firstDiff(a, b []int) []int {
	var d []int
	for _, v := range a {
		if !slices.Contains(b, v) {
			d = append(d, v)
		}
	}
	for _, v := range b {
		if !slices.Contains(a, v) {
			d = append(d, -v)
		}
	}
	return d[:min(len(d), 10)]
}
