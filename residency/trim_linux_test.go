package residency

import (
	"os"
	"regexp"
	"sort"
	"strconv"
	"testing"
)

// rssFileKiB is this process's resident file-backed memory.
func rssFileKiB(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RssFile:\s+(\d+) kB$`).FindSubmatch(b)
	if m == nil {
		t.Skip("no RssFile in /proc/self/status")
	}
	v, _ := strconv.ParseUint(string(m[1]), 10, 64)
	return v
}

func TestTrimUnmapsTheExecutablesPagesAndTheProcessRunsOn(t *testing.T) {
	before := rssFileKiB(t)
	kib, err := Trim()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFileKiB(t)
	t.Logf("RssFile %d KiB -> %d KiB; Trim reports %d KiB", before, after, kib)
	if kib == 0 || after >= before {
		t.Fatalf("Trim dropped %d KiB, RssFile %d -> %d KiB: nothing unmapped", kib, before, after)
	}
	// The code and tables the test runs next fault back in: sorting and
	// formatting still work, and so does a second Trim.
	xs := []int{3, 1, 2}
	sort.Ints(xs)
	if strconv.Itoa(xs[0])+strconv.Itoa(xs[2]) != "13" {
		t.Fatalf("sorted %v", xs)
	}
	if _, err := Trim(); err != nil {
		t.Fatal(err)
	}
}
