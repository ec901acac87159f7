package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// Writer appends points to a run directory's points.lp. It implements the
// collector's Sink interface. Every Write reaches the file before it returns
// (a kill -9 loses nothing), and the file is fsynced on Flush and whenever
// SyncEvery has passed since the last sync (a power loss loses at most that).
//
// A write that fails (a full disk) does not end the recording: the file is
// cut back to its last whole, synced line, the buffered points are kept
// (up to MaxPending bytes; beyond it the oldest are dropped and counted)
// and written again at the next sync. When writing works again, the gap is
// recorded as an event point in points.lp and in Gaps, for run.json.
type Writer struct {
	dir       string
	SyncEvery time.Duration
	// MaxPending caps the bytes kept in memory while writes fail; default 16 MiB.
	MaxPending int

	mu       sync.Mutex
	f        *os.File
	pend     []byte // encoded lines not yet written and synced
	pendN    int    // points in pend
	good     int64  // size of the file up to its last synced whole line
	enc      point.Encoder
	lastSync time.Time
	points   int
	closed   bool
	gap      *Gap // open while writes fail
	gaps     []Gap
}

// Gap is a stretch during which points.lp could not be written.
type Gap struct {
	From, To time.Time
	// LostPoints were dropped: more than MaxPending waited, or the run
	// ended before writing worked again.
	LostPoints int
	Err        string
}

// Event is the gap as a run.json event.
func (g Gap) Event() Event {
	return Event{Time: g.From, Kind: GapEventKind, Message: g.message(),
		Attrs: map[string]string{"end": g.To.UTC().Format(time.RFC3339Nano), "lost_points": strconv.Itoa(g.LostPoints), "error": g.Err}}
}

func (g Gap) message() string {
	return fmt.Sprintf("points.lp could not be written for %.1f s (%s); %d points lost", g.To.Sub(g.From).Seconds(), g.Err, g.LostPoints)
}

// GapEventKind is the kind of the event recording a gap in points.lp.
const GapEventKind = "recording_gap"

// Create makes dir (and parents) if needed and opens points.lp for appending;
// both follow the umask, as every file a user makes does.
// An existing points.lp is appended to, never truncated: nothing recorded is
// lost by reopening a run.
// Neither dir nor points.lp may be a symbolic link (see OpenInDir).
func Create(dir string) (*Writer, error) {
	// MkdirAll would follow a planted link to a directory elsewhere.
	if isSymlink(dir) {
		return nil, fmt.Errorf("create run directory: %s %w", dir, ErrSymlink)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	path := filepath.Join(dir, PointsFile)
	f, err := OpenInDir(dir, PointsFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	return &Writer{dir: dir, SyncEvery: 5 * time.Second, MaxPending: 16 << 20, f: f, good: st.Size(), lastSync: time.Now()}, nil
}

// ErrRunExists is returned by CheckNew for a directory that already holds
// a run.
var ErrRunExists = errors.New("already holds a run")

// CheckNew returns an error wrapping ErrRunExists when dir's points.lp
// (or points.lp.gz) already holds points. Whatever writes a run that must start empty (an
// import, an export) checks first, so that two recordings are never mixed
// into one run; an absent or empty points.lp is no run yet.
func CheckNew(dir string) error {
	for _, name := range []string{PointsFile, PointsGzFile} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err == nil && st.Size() > 0 {
			return fmt.Errorf("%s %w (%s)", dir, ErrRunExists, name)
		}
	}
	return nil
}

// Dir returns the run directory.
func (w *Writer) Dir() string { return w.dir }

// Points returns how many points were written.
func (w *Writer) Points() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.points
}

// Gaps returns the stretches during which points.lp could not be written,
// the one still open (To zero) included.
func (w *Writer) Gaps() []Gap {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.gaps)
	if w.gap != nil {
		out = append(out, *w.gap)
	}
	return out
}

// Write encodes points as line protocol. Points that cannot be encoded are
// skipped and returned as an error; the rest are written. An error writing
// the file is returned too, but the points are kept for the next try.
func (w *Writer) Write(points []point.Point) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return fmt.Errorf("write %s: writer closed", w.dir)
	}
	var bad error
	for i := range points {
		w.enc.Reset()
		if err := w.enc.Encode(&points[i]); err != nil {
			if bad == nil {
				bad = err
			}
			continue
		}
		w.pend = append(w.pend, w.enc.Bytes()...)
		w.pendN++
		// A large batch (an import, an export) goes out a MiB at a time,
		// so the buffer stays small and is reused rather than grown to
		// the whole batch; after a failed write the lines wait in it.
		if len(w.pend) >= 1<<20 && w.gap == nil {
			w.syncLocked(false)
		}
	}
	// Written at once, so a kill -9 loses nothing Write returned; fsynced
	// every SyncEvery, which bounds what a power loss costs.
	if err := w.syncLocked(time.Since(w.lastSync) >= w.SyncEvery); err != nil {
		return err
	}
	return bad
}

// Flush writes buffered points and fsyncs the file.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	return w.syncLocked(true)
}

// syncLocked writes what is pending and, with fsync, syncs the file.
func (w *Writer) syncLocked(fsync bool) error {
	path := filepath.Join(w.dir, PointsFile)
	now := time.Now()
	if fsync {
		w.lastSync = now
	}
	if len(w.pend) == 0 && w.gap == nil && !fsync {
		return nil
	}
	_, err := w.f.Write(w.pend)
	if err == nil && fsync {
		// A full disk may show only here (delayed allocation).
		err = w.f.Sync()
	}
	if err != nil {
		// Keep the file made of whole lines, and the lines for the next try.
		w.f.Truncate(w.good)
		if w.gap == nil {
			w.gap = &Gap{From: now, Err: err.Error()}
		}
		w.dropOldLocked()
		return fmt.Errorf("write %s: %w", path, err)
	}
	w.good += int64(len(w.pend))
	w.points += w.pendN
	w.pend, w.pendN = w.pend[:0], 0
	if w.gap != nil {
		g := *w.gap
		g.To = now
		w.gap = nil
		w.gaps = append(w.gaps, g)
		p := point.New("event", g.From)
		p.AddTag("kind", GapEventKind)
		p.AddString("message", g.message())
		p.AddFloat("gap_s", g.To.Sub(g.From).Seconds())
		p.AddInt("lost_points", int64(g.LostPoints))
		w.enc.Reset()
		if w.enc.Encode(&p) == nil {
			w.pend = append(w.pend, w.enc.Bytes()...)
			w.pendN++
		}
	}
	return nil
}

// dropOldLocked drops the oldest whole lines beyond MaxPending.
func (w *Writer) dropOldLocked() {
	over := len(w.pend) - w.MaxPending
	if w.MaxPending <= 0 || over <= 0 {
		return
	}
	cut := bytes.IndexByte(w.pend[over:], '\n')
	if cut < 0 {
		cut = len(w.pend) - over - 1
	}
	cut += over + 1
	n := bytes.Count(w.pend[:cut], []byte{'\n'})
	w.pend = append(w.pend[:0], w.pend[cut:]...)
	w.pendN -= n
	w.gap.LostPoints += n
}

// Close flushes, syncs and closes the file. Points still unwritten are
// counted as lost in the open gap.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.syncLocked(true)
	if err == nil && len(w.pend) > 0 {
		err = w.syncLocked(true) // the gap's own event
	}
	if w.gap != nil {
		w.gap.LostPoints += w.pendN
		w.gap.To = time.Now()
		w.gaps = append(w.gaps, *w.gap)
		w.gap = nil
	}
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", filepath.Join(w.dir, PointsFile), cerr)
	}
	return err
}

// Discard removes what a run directory's writer and WriteMeta made in dir
// (points.lp, run.json) and dir itself once empty: a failed import leaves
// nothing that would make the retry's CheckNew refuse the directory.
func Discard(dir string) error {
	var errs []error
	for _, name := range []string{PointsFile, MetaFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("discard %s: %w", dir, err))
		}
	}
	os.Remove(dir) // only if empty: the directory may hold the user's files
	return errors.Join(errs...)
}
