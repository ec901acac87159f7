package host

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// cpuTimes are one /proc/stat cpu line, in USER_HZ ticks. guest and
// guest_nice are left out: the kernel already counts them in user and nice.
type cpuTimes struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

// overflows reports whether the columns cannot be summed in 64 bits, which
// no real counter reaches: such a line is garbage.
func (c cpuTimes) overflows() bool {
	var sum, carry uint64
	for _, v := range []uint64{c.user, c.nice, c.system, c.idle, c.iowait, c.irq, c.softirq, c.steal} {
		var cy uint64
		sum, cy = bits.Add64(sum, v, 0)
		carry |= cy
	}
	return carry != 0
}

// parseStat calls fn for each cpu line of /proc/stat ("cpu" for the total,
// then "cpu0", "cpu1"...), in file order. It stops at the first line after
// the cpu block, so the long intr line is never parsed. Kernels before 2.6
// give only the first four columns; the rest then count as zero.
func parseStat(b []byte, fn func(name []byte, t cpuTimes) error) error {
	seen := false
	for n := 1; len(b) > 0; n++ {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		if !bytes.HasPrefix(line, []byte("cpu")) {
			if seen {
				break
			}
			continue
		}
		seen = true
		name, rest, _ := bytes.Cut(line, []byte{' '})
		if !validCPUName(name) {
			return fmt.Errorf("line %d: %q is not a cpu name", n, clip(name))
		}
		var cols [8]uint64
		i := 0
		for f := range bytes.FieldsSeq(rest) {
			if i == len(cols) {
				break
			}
			v, err := strconv.ParseUint(string(f), 10, 64)
			if err != nil {
				return fmt.Errorf("line %d (%s): column %d: %q is not a tick count", n, name, i+1, clip(f))
			}
			cols[i] = v
			i++
		}
		if i < 4 {
			return fmt.Errorf("line %d (%s): %d columns, want at least 4 (user nice system idle)", n, name, i)
		}
		t := cpuTimes{cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7]}
		if t.overflows() {
			return fmt.Errorf("line %d (%s): tick counts overflow", n, name)
		}
		if err := fn(name, t); err != nil {
			return err
		}
	}
	if !seen {
		return errors.New("no cpu lines")
	}
	return nil
}

func validCPUName(b []byte) bool {
	if len(b) == 3 {
		return true // "cpu"
	}
	for _, c := range b[3:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// util is CPU time between two readings, as percentages: usage is
// everything but idle and iowait; user includes nice; system includes irq
// and softirq. user+system+iowait+idle+steal = 100.
type util struct {
	usage, user, system, iowait, idle float64
}

// utilisation compares two readings of one CPU. It reports false when no
// tick passed between them, as the percentages are then undefined. A counter
// that went backwards (iowait can, on some kernels) counts as zero.
func utilisation(a, b cpuTimes) (util, bool) {
	d := func(x, y uint64) float64 {
		if y < x {
			return 0
		}
		return float64(y - x)
	}
	user := d(a.user, b.user) + d(a.nice, b.nice)
	system := d(a.system, b.system) + d(a.irq, b.irq) + d(a.softirq, b.softirq)
	idle := d(a.idle, b.idle)
	iowait := d(a.iowait, b.iowait)
	steal := d(a.steal, b.steal)
	total := user + system + idle + iowait + steal
	if total == 0 {
		return util{}, false
	}
	pct := 100 / total
	return util{
		usage:  (user + system + steal) * pct,
		user:   user * pct,
		system: system * pct,
		iowait: iowait * pct,
		idle:   idle * pct,
	}, true
}

// meminfo holds the /proc/meminfo values heatsink records, in bytes.
type meminfo struct {
	total, available, swapTotal, swapFree uint64
	haveAvailable, haveSwap               bool
}

// parseMeminfo reads "Key:   value kB" lines. MemTotal is required;
// MemAvailable (Linux 3.14+) and the swap lines are used when present. Lines
// it does not need are not checked.
func parseMeminfo(b []byte) (meminfo, error) {
	var m meminfo
	var haveTotal, haveSwapTotal, haveSwapFree bool
	for n := 1; len(b) > 0; n++ {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		key, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		var dst *uint64
		var have *bool
		switch string(key) {
		case "MemTotal":
			dst, have = &m.total, &haveTotal
		case "MemAvailable":
			dst, have = &m.available, &m.haveAvailable
		case "SwapTotal":
			dst, have = &m.swapTotal, &haveSwapTotal
		case "SwapFree":
			dst, have = &m.swapFree, &haveSwapFree
		default:
			continue
		}
		v, err := parseKB(rest)
		if err != nil {
			return meminfo{}, fmt.Errorf("line %d (%s): %w", n, key, err)
		}
		*dst, *have = v, true
	}
	if !haveTotal {
		return meminfo{}, errors.New("no MemTotal line")
	}
	if m.haveAvailable && m.available > m.total {
		return meminfo{}, fmt.Errorf("MemAvailable %d above MemTotal %d", m.available, m.total)
	}
	m.haveSwap = haveSwapTotal && haveSwapFree
	if m.haveSwap && m.swapFree > m.swapTotal {
		return meminfo{}, fmt.Errorf("SwapFree %d above SwapTotal %d", m.swapFree, m.swapTotal)
	}
	return m, nil
}

// parseKB parses " 24684092 kB" into bytes (the kernel's kB are KiB).
func parseKB(b []byte) (uint64, error) {
	f := bytes.Fields(b)
	if len(f) != 2 || string(f[1]) != "kB" {
		return 0, fmt.Errorf("%q is not \"N kB\"", clip(bytes.TrimSpace(b)))
	}
	v, err := strconv.ParseUint(string(f[0]), 10, 64)
	if err != nil || v > math.MaxUint64/1024 {
		return 0, fmt.Errorf("%q is not a size in kB", clip(f[0]))
	}
	return v * 1024, nil
}

// loadavg is /proc/loadavg: "0.01 0.30 0.26 1/96 12147".
type loadavg struct {
	load1, load5, load15 float64
	running              int64
}

func parseLoadavg(b []byte) (loadavg, error) {
	f := bytes.Fields(b)
	if len(f) != 5 {
		return loadavg{}, fmt.Errorf("%q: %d fields, want 5", clip(bytes.TrimSpace(b)), len(f))
	}
	var l loadavg
	for i, dst := range []*float64{&l.load1, &l.load5, &l.load15} {
		v, err := strconv.ParseFloat(string(f[i]), 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return loadavg{}, fmt.Errorf("field %d: %q is not a load average", i+1, clip(f[i]))
		}
		*dst = v
	}
	run, _, ok := bytes.Cut(f[3], []byte{'/'})
	v, err := strconv.ParseInt(string(run), 10, 64)
	if !ok || err != nil || v < 0 {
		return loadavg{}, fmt.Errorf("field 4: %q is not running/total", clip(f[3]))
	}
	l.running = v
	return l, nil
}

// clip shortens a value quoted in an error, so a garbage file cannot flood the log.
func clip(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
