package spool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Info describes a spool directory as it lies on disk, read without
// opening the spool: what waits in it and for whom.
type Info struct {
	Dir string
	// Destination is what the spool records as its destination; empty for
	// a spool of an older heatsink, whose points belong to nobody known.
	Destination string
	// UnsentPoints and UnsentBytes measure what waits after the committed
	// position; Oldest is when the oldest of it was appended (zero if
	// unknown or none waits).
	UnsentPoints int64
	UnsentBytes  int64
	Oldest       time.Time
	// InUseBy is the pid of the process that has the spool open; empty
	// when none has.
	InUseBy string
}

// Inspect reads the spool in dir without locking or changing it, so it can
// look at a spool another process is using.
func Inspect(dir string) (Info, error) {
	info := Info{Dir: dir}
	dest, err := readDestination(dir)
	if err != nil {
		return info, fmt.Errorf("inspect spool %s: %w", dir, err)
	}
	info.Destination = dest
	info.InUseBy = lockHolder(dir)
	segs, err := listSegments(dir)
	if err != nil {
		return info, fmt.Errorf("inspect spool %s: %w", dir, err)
	}
	if len(segs) == 0 {
		return info, nil
	}
	pos := Position{Seq: segs[0].seq}
	var rec positionRecord
	if b, err := os.ReadFile(filepath.Join(dir, positionFile)); err == nil && json.Unmarshal(b, &rec) == nil {
		if i := slices.IndexFunc(segs, func(s segment) bool { return s.seq == rec.Seq }); i >= 0 && rec.Off <= segs[i].size {
			pos = rec.Position
		}
	}
	for _, s := range segs {
		switch {
		case s.seq == pos.Seq:
			info.UnsentBytes += s.size - pos.Off
		case s.seq > pos.Seq:
			info.UnsentBytes += s.size
		}
	}
	if info.UnsentPoints, err = countPoints(dir, segs, pos); err != nil {
		return info, fmt.Errorf("inspect spool %s: %w", dir, err)
	}
	if info.UnsentPoints > 0 {
		ns := headerIn(filepath.Join(dir, segName(pos.Seq)), pos.Off)
		if ns == 0 {
			ns = rec.Appended
		}
		if ns != 0 {
			info.Oldest = time.Unix(0, ns)
		}
	}
	return info, nil
}

// lockHolder returns the pid written in the lock of a spool that a process
// has open, or "" when none has it.
func lockHolder(dir string) string {
	f, err := os.Open(filepath.Join(dir, lockFile))
	if err != nil {
		return ""
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return ""
	}
	pid, _ := io.ReadAll(io.LimitReader(f, 32))
	if p := strings.TrimSpace(string(pid)); p != "" {
		return p
	}
	return "?"
}

// headerIn returns the append time in the header at off of the segment
// at path, or 0 when off is not at a header.
func headerIn(path string, off int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	buf := make([]byte, 48)
	n, _ := f.ReadAt(buf, off)
	ns, _ := parseHeader(buf[:n])
	return ns
}

// Find returns the spools in root: root itself when it holds segments (the
// layout of an older heatsink, one spool for every destination) and each
// subdirectory that does (a spool per destination), in name order.
func Find(root string) ([]Info, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find spools: %w", err)
	}
	var out []Info
	dirs := []string{root}
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	for _, dir := range dirs {
		segs, err := listSegments(dir)
		if err != nil || len(segs) == 0 {
			continue
		}
		info, err := Inspect(dir)
		if err != nil {
			return out, err
		}
		out = append(out, info)
	}
	return out, nil
}
