package rundir

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// Writer appends points to a run directory's points.lp. It implements the
// collector's Sink interface. Points are buffered and the file is synced on
// Flush and whenever SyncEvery has passed since the last sync.
type Writer struct {
	dir       string
	SyncEvery time.Duration

	mu       sync.Mutex
	f        *os.File
	w        *bufio.Writer
	enc      point.Encoder
	lastSync time.Time
	points   int
	closed   bool
}

// Create makes dir (and parents) if needed and opens points.lp for appending;
// both follow the umask, as every file a user makes does.
// An existing points.lp is appended to, never truncated: nothing recorded is
// lost by reopening a run.
func Create(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("create run directory: %w", err)
	}
	path := filepath.Join(dir, PointsFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &Writer{dir: dir, SyncEvery: 5 * time.Second, f: f, w: bufio.NewWriterSize(f, 256<<10), lastSync: time.Now()}, nil
}

// ErrRunExists is returned by CheckNew for a directory that already holds
// a run.
var ErrRunExists = errors.New("already holds a run")

// CheckNew returns an error wrapping ErrRunExists when dir's points.lp
// already holds points. Whatever writes a run that must start empty (an
// import, an export) checks first, so that two recordings are never mixed
// into one run; an absent or empty points.lp is no run yet.
func CheckNew(dir string) error {
	st, err := os.Stat(filepath.Join(dir, PointsFile))
	if err == nil && st.Size() > 0 {
		return fmt.Errorf("%s %w (%s)", dir, ErrRunExists, PointsFile)
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

// Write encodes points as line protocol. Points that cannot be encoded are
// skipped and returned as an error; the rest are written.
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
		if _, err := w.w.Write(w.enc.Bytes()); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Join(w.dir, PointsFile), err)
		}
		w.points++
	}
	if time.Since(w.lastSync) >= w.SyncEvery {
		if err := w.syncLocked(); err != nil {
			return err
		}
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
	return w.syncLocked()
}

func (w *Writer) syncLocked() error {
	path := filepath.Join(w.dir, PointsFile)
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	w.lastSync = time.Now()
	return nil
}

// Close flushes, syncs and closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.syncLocked()
	if cerr := w.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close %s: %w", filepath.Join(w.dir, PointsFile), cerr)
	}
	return err
}
