// Package residency keeps a long-running agent's resident set to what it
// uses. Package initialisation, flag parsing and start-up touch code and
// tables all over the executable, and the kernel maps each touched page
// together with its neighbours already in the page cache (fault-around):
// in a binary that links the whole CLI, report plotting and the GPU
// kernels, that is some 20 MiB of file pages the tick loop never reads
// again. Trim unmaps the executable's clean read-only pages; the ones still
// in use fault back in from the page cache on their next touch.
package residency

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Mapping is one region of /proc/PID/smaps.
type Mapping struct {
	Start, End uint64 // [Start, End)
	Perms      string // "r-xp"
	Path       string // the mapped file; "" for anonymous memory
	RssKiB     uint64
	// AnonKiB counts pages of a private file mapping that were written and
	// so are copies no longer backed by the file: dropping them would lose
	// the writes.
	AnonKiB uint64
}

// Clean reports whether m can be dropped and refaulted from its file with
// no change: a private, never-writable, never-written file mapping.
func (m Mapping) Clean() bool {
	return m.Path != "" && len(m.Perms) == 4 && m.Perms[1] != 'w' && m.Perms[3] == 'p' && m.AnonKiB == 0
}

// ParseSmaps reads /proc/PID/smaps: each region's header line
// ("START-END PERMS OFFSET DEV INODE [PATH]") followed by "Key: N kB" lines.
func ParseSmaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		key, rest, isField := strings.Cut(text, ":")
		if isField && !strings.Contains(key, " ") && !strings.Contains(key, "-") {
			if len(out) == 0 {
				return nil, fmt.Errorf("smaps line %d: field %q before any region", line, key)
			}
			m := &out[len(out)-1]
			switch key {
			case "Rss", "Anonymous":
				v, err := parseKiB(rest)
				if err != nil {
					return nil, fmt.Errorf("smaps line %d: %s: %w", line, key, err)
				}
				if key == "Rss" {
					m.RssKiB = v
				} else {
					m.AnonKiB = v
				}
			}
			continue
		}
		m, err := parseHeader(text)
		if err != nil {
			return nil, fmt.Errorf("smaps line %d: %w", line, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read smaps: %w", err)
	}
	return out, nil
}

func parseHeader(text string) (Mapping, error) {
	f := strings.Fields(text)
	if len(f) < 5 {
		return Mapping{}, fmt.Errorf("region header %q: want START-END PERMS OFFSET DEV INODE [PATH]", text)
	}
	lo, hi, ok := strings.Cut(f[0], "-")
	start, err1 := strconv.ParseUint(lo, 16, 64)
	end, err2 := strconv.ParseUint(hi, 16, 64)
	if !ok || err1 != nil || err2 != nil || end < start {
		return Mapping{}, fmt.Errorf("region header %q: bad address range %q", text, f[0])
	}
	if len(f[1]) != 4 {
		return Mapping{}, fmt.Errorf("region header %q: bad permissions %q", text, f[1])
	}
	m := Mapping{Start: start, End: end, Perms: f[1]}
	if len(f) > 5 {
		// The path may hold spaces; the kernel appends " (deleted)" to
		// a replaced file.
		m.Path = afterFields(text, 5)
	}
	return m, nil
}

// afterFields returns text after its first n space-separated fields.
func afterFields(text string, n int) string {
	for ; n > 0; n-- {
		text = strings.TrimLeft(text, " \t")
		i := strings.IndexAny(text, " \t")
		if i < 0 {
			return ""
		}
		text = text[i:]
	}
	return strings.TrimSpace(text)
}

func parseKiB(s string) (uint64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), " ")
	if unit != "kB" {
		return 0, fmt.Errorf("value %q: want N kB", strings.TrimSpace(s))
	}
	return strconv.ParseUint(num, 10, 64)
}
