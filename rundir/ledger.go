package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// StatusCutOff is the status of a run whose heatsink ended without
// finishing it (kill -9, a crash, a power loss), as the next start finds.
const StatusCutOff = "cut_off"

// CutOffEventKind is the kind of the event that says so in run.json.
const CutOffEventKind = "cut_off"

// ledgerEntry is one run being written, in the ledger directory.
type ledgerEntry struct {
	PID       int    `json:"pid"`
	StartTick uint64 `json:"start_tick"` // the process's start time, against pid reuse
	Dir       string `json:"dir"`
}

// Track records in ledger (a state directory of heatsink's own) that this
// process writes the run in dir, and returns the function that removes the
// record once the run is finished. First it looks for runs of processes
// that are gone without removing theirs: each such run's run.json, if it
// still says running, gets status cut_off, an end at points.lp's last write
// and an event saying what happened; their directories are returned.
func Track(ledger, dir string) (untrack func(), cutOff []string, err error) {
	if err := os.MkdirAll(ledger, 0o755); err != nil {
		return nil, nil, fmt.Errorf("run ledger: %w", err)
	}
	ents, err := os.ReadDir(ledger)
	if err != nil {
		return nil, nil, fmt.Errorf("run ledger: %w", err)
	}
	var errs []error
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".run") {
			continue
		}
		path := filepath.Join(ledger, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue // removed by its owner meanwhile
		}
		var le ledgerEntry
		if json.Unmarshal(b, &le) != nil || le.PID <= 0 {
			os.Remove(path)
			continue
		}
		if st, ok := startTick(le.PID); ok && st == le.StartTick {
			continue // still running
		}
		if err := markCutOff(le); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		} else if err == nil {
			cutOff = append(cutOff, le.Dir)
		}
		os.Remove(path)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, cutOff, fmt.Errorf("run ledger: %w", err)
	}
	pid := os.Getpid()
	st, _ := startTick(pid)
	b, _ := json.Marshal(ledgerEntry{PID: pid, StartTick: st, Dir: abs})
	path := filepath.Join(ledger, strconv.Itoa(pid)+"-"+strconv.FormatUint(st, 10)+".run")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return nil, cutOff, fmt.Errorf("run ledger: %w", err)
	}
	return func() { os.Remove(path) }, cutOff, errors.Join(errs...)
}

// markCutOff records in the run's run.json that its process ended without
// finishing it.
func markCutOff(le ledgerEntry) error {
	m, err := ReadMeta(le.Dir)
	if err != nil {
		return err
	}
	if m.Status != "running" && m.Status != "" {
		return nil // finished after all (killed between run.json and the ledger)
	}
	end := time.Now()
	if st, err := os.Stat(filepath.Join(le.Dir, PointsFile)); err == nil {
		end = st.ModTime()
	}
	m.Status, m.End = StatusCutOff, &end
	m.Events = append(m.Events, Event{Time: end, Kind: CutOffEventKind,
		Message: fmt.Sprintf("heatsink (pid %d) ended without finishing the run (killed, crashed or powered off); found by the next start at %s; the end is points.lp's last write",
			le.PID, time.Now().UTC().Format(time.RFC3339))})
	return WriteMeta(le.Dir, m)
}

// startTick is the process's start time in clock ticks since boot
// (/proc/PID/stat field 22); false when there is no such process.
func startTick(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 || f[0] == "Z" {
		return 0, false
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	return v, err == nil
}
