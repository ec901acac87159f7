// Package spool is a durable on-disk queue of line protocol: points are
// appended before anything tries to send them, and leave only once their
// receiver has confirmed them, so a database that is down, slow or
// restarted costs no sample, and neither does a crash of heatsink itself.
//
// On disk a spool is a directory of append-only segment files
// (00000000000000000001.lp, ...), each plain line protocol that any
// InfluxDB tool can read, and a file "position" holding the committed read
// position (segment and byte offset). Every Append writes whole lines in one
// write(2) before it returns, so a kill -9 loses nothing that was appended;
// by default each Append is also fsynced (Options.SyncEvery), so a power
// loss loses nothing either. A torn last line (power loss in the middle of
// a write) is cut off when the spool is opened. The position is replaced
// atomically (write, rename) but not fsynced: a power loss may move it
// back, which resends points — harmless, since InfluxDB overwrites a point
// with the same series and timestamp. Delivery is at least once.
//
// Each append is preceded by a comment line "# appended=<unix ns>", so the
// age of the oldest unsent point survives a restart.
//
// The spool has a size cap (Options.MaxBytes, default 1 GiB of unsent
// data). An append that would pass it, or that the disk refuses, returns an
// error and its points are counted as refused (Stats.RefusedPoints): the
// spool's owner decides whether they are lost or go some other way.
//
// A spool may belong to one destination (Options.Destination): the file
// "destination" in its directory names it, and opening the spool for
// another destination is an error naming both, so that points recorded for
// one server never go to another by accident.
package spool

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Defaults for Options.
const (
	DefaultMaxBytes     = 1 << 30
	DefaultSegmentBytes = 64 << 20
)

// ErrFull is returned by Append when the points would take the unsent data
// past Options.MaxBytes; they are counted in Stats.RefusedPoints.
var ErrFull = errors.New("spool full")

// ErrOtherDestination is returned by Open when the spool belongs to
// another destination than Options.Destination, or holds unsent points
// recorded for no stated destination (a spool of an older heatsink).
var ErrOtherDestination = errors.New("spool belongs to another destination")

const (
	positionFile = "position"
	lockFile     = "lock"
	destFile     = "destination"
	segmentExt   = ".lp"
	headerPrefix = "# appended="
)

// Options configure a spool. The zero value gives the defaults.
type Options struct {
	// MaxBytes caps the unsent data on disk; default 1 GiB.
	MaxBytes int64
	// SegmentBytes is the size at which a new segment file is started;
	// default 64 MiB. Sent segments are deleted whole.
	SegmentBytes int64
	// SyncEvery is the longest an appended point may stay unsynced: 0
	// (the default) fsyncs every Append; a positive value fsyncs on the
	// first Append after that much time, and on Sync and Close.
	SyncEvery time.Duration
	// Logger receives recoveries and refusals; default slog.Default.
	Logger *slog.Logger
	// Destination names where the spooled points go (for InfluxDB: the
	// server and bucket). When set, a new spool records it and an existing
	// one must have recorded the same; empty opens any spool unchecked,
	// which only a command an operator runs on purpose should do.
	Destination string
}

// Position is a place in the spool: a segment and a byte offset in it.
type Position struct {
	Seq uint64 `json:"seq"`
	Off int64  `json:"off"`
}

// Before reports whether p comes before q.
func (p Position) Before(q Position) bool {
	return p.Seq < q.Seq || (p.Seq == q.Seq && p.Off < q.Off)
}

// Stats describe the spool's content and what passed through it.
type Stats struct {
	// UnsentBytes and UnsentPoints measure what is waiting to be sent.
	UnsentBytes  int64
	UnsentPoints int64
	// Oldest is when the oldest unsent point was appended; zero when none waits.
	Oldest time.Time
	// AppendedPoints counts points appended since Open; RefusedPoints those
	// refused because the spool was full or the disk failed.
	AppendedPoints int64
	RefusedPoints  int64
	Segments       int
}

type segment struct {
	seq  uint64
	size int64
}

// Spool is an open spool directory. Append may be called from any
// goroutine; Next and Commit belong to the single reader that sends.
type Spool struct {
	dir  string
	opts Options
	log  *slog.Logger
	lock *os.File

	mu        sync.Mutex
	closed    bool
	segs      []segment // segs[0] holds the committed position; the last one is appended to
	w         *os.File
	buf       []byte
	lastSync  time.Time
	dirty     bool
	committed Position
	// committedAppended is the append time of the record that holds the
	// line just before the committed position (unix ns).
	committedAppended int64
	unsentPoints      int64
	appended          int64
	refused           int64
	// refusing is true from a refused append to the next that succeeds: one
	// episode, logged once at its start and once at its end.
	refusing       bool
	refusedEpisode int64
	changed        chan struct{}

	// Reader side: the open segment being read.
	r    *os.File
	rseq uint64
	br   *bufio.Reader
}

type positionRecord struct {
	Position
	Appended int64 `json:"appended,omitempty"`
}

// Open opens (creating if needed) the spool in dir. Only one process may
// have a spool open: a second gets an error naming the directory.
func Open(dir string, opts Options) (*Spool, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = DefaultSegmentBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create spool: %w", err)
	}
	s := &Spool{dir: dir, opts: opts, log: opts.Logger, changed: make(chan struct{}), lastSync: time.Now()}
	if err := s.acquire(); err != nil {
		return nil, err
	}
	if err := s.claim(); err != nil {
		s.lock.Close()
		return nil, err
	}
	if err := s.load(); err != nil {
		s.lock.Close()
		return nil, err
	}
	return s, nil
}

// claim checks that the spool belongs to Options.Destination, recording it
// in a spool that holds nothing yet. A spool without a recorded
// destination that still holds points is refused: nobody can tell where
// they were meant to go.
func (s *Spool) claim() error {
	want := s.opts.Destination
	if want == "" {
		return nil
	}
	have, err := readDestination(s.dir)
	if err != nil {
		return err
	}
	switch {
	case have == want:
		return nil
	case have != "":
		return fmt.Errorf("%w: spool %s holds points for %s, not for %s", ErrOtherDestination, s.dir, have, want)
	}
	info, err := Inspect(s.dir)
	if err != nil {
		return err
	}
	if info.UnsentPoints > 0 {
		return fmt.Errorf("%w: spool %s holds %d unsent points recorded for no stated destination; they are not sent to %s automatically", ErrOtherDestination, s.dir, info.UnsentPoints, want)
	}
	path := filepath.Join(s.dir, destFile)
	if err := os.WriteFile(path+".tmp", []byte(want+"\n"), 0o600); err != nil {
		return fmt.Errorf("record the spool's destination: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("record the spool's destination: %w", err)
	}
	return nil
}

// readDestination returns the destination recorded in dir; "" when none is.
func readDestination(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, destFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the spool's destination: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func (s *Spool) acquire() error {
	path := filepath.Join(s.dir, lockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open spool lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := io.ReadAll(f)
		f.Close()
		return fmt.Errorf("spool %s is in use by another process (pid %s): %w", s.dir, strings.TrimSpace(string(pid)), err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	s.lock = f
	return nil
}

func segName(seq uint64) string { return fmt.Sprintf("%020d%s", seq, segmentExt) }

func (s *Spool) segPath(seq uint64) string { return filepath.Join(s.dir, segName(seq)) }

// load finds the segments and the committed position, repairs a torn tail,
// counts the unsent points and opens the last segment for appending.
func (s *Spool) load() error {
	segs, err := listSegments(s.dir)
	if err != nil {
		return err
	}
	s.segs = segs

	var pos positionRecord
	b, err := os.ReadFile(filepath.Join(s.dir, positionFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read spool position: %w", err)
	default:
		if err := json.Unmarshal(b, &pos); err != nil {
			// Starting over from the first segment resends, never loses.
			s.log.Warn("spool position unreadable; resending from the oldest segment", "dir", s.dir, "err", err)
			pos = positionRecord{}
		}
	}

	// Segments before the position were sent; a crash between committing
	// and deleting leaves them behind.
	for len(s.segs) > 0 && s.segs[0].seq < pos.Seq {
		if err := os.Remove(s.segPath(s.segs[0].seq)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove sent spool segment: %w", err)
		}
		s.segs = s.segs[1:]
	}
	if len(s.segs) == 0 {
		seq := max(pos.Seq, 1)
		if err := s.createSegment(seq); err != nil {
			return err
		}
		pos = positionRecord{Position: Position{Seq: seq}}
	} else if s.segs[0].seq != pos.Seq {
		pos = positionRecord{Position: Position{Seq: s.segs[0].seq}}
	}

	last := &s.segs[len(s.segs)-1]
	if err := s.repairTail(last); err != nil {
		return err
	}
	if pos.Off > s.segs[0].size {
		s.log.Warn("spool position beyond its segment; resending that segment", "dir", s.dir, "segment", segName(pos.Seq))
		pos.Off = 0
	}
	s.committed = pos.Position
	s.committedAppended = pos.Appended

	n, err := s.countFrom(s.committed)
	if err != nil {
		return err
	}
	s.unsentPoints = n
	if s.w == nil {
		f, err := os.OpenFile(s.segPath(last.seq), os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("open spool segment: %w", err)
		}
		s.w = f
	}
	if n > 0 {
		s.log.Info("spool holds unsent points from an earlier run; sending them first",
			"dir", s.dir, "points", n, "bytes", s.unsentBytesLocked())
	}
	return nil
}

// repairTail cuts a torn last line: the append that wrote it never
// returned, so its points were never in the spool.
func (s *Spool) repairTail(seg *segment) error {
	if seg.size == 0 {
		return nil
	}
	path := s.segPath(seg.seq)
	f, err := os.OpenFile(path, os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open spool segment: %w", err)
	}
	defer f.Close()
	end := seg.size
	buf := make([]byte, 64<<10)
	for end > 0 {
		n := int64(len(buf))
		if n > end {
			n = end
		}
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	if end == seg.size {
		return nil
	}
	if err := f.Truncate(end); err != nil {
		return fmt.Errorf("truncate torn tail of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	s.log.Warn("spool: cut a torn last line (an append interrupted by a crash)", "segment", path, "bytes", seg.size-end)
	seg.size = end
	return nil
}

// listSegments returns dir's segment files in order.
func listSegments(dir string) ([]segment, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read spool: %w", err)
	}
	var segs []segment
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, segmentExt) {
			continue
		}
		seq, err := strconv.ParseUint(strings.TrimSuffix(name, segmentExt), 10, 64)
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("read spool: %w", err)
		}
		segs = append(segs, segment{seq: seq, size: info.Size()})
	}
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.seq, b.seq) })
	return segs, nil
}

// countFrom counts the points (non-comment lines) from p to the end.
func (s *Spool) countFrom(p Position) (int64, error) { return countPoints(s.dir, s.segs, p) }

// countPoints counts the points (non-comment lines) of dir's segs from p
// to the end.
func countPoints(dir string, segs []segment, p Position) (int64, error) {
	var n int64
	for _, seg := range segs {
		if seg.seq < p.Seq {
			continue
		}
		off := int64(0)
		if seg.seq == p.Seq {
			off = p.Off
		}
		if off >= seg.size {
			continue
		}
		f, err := os.Open(filepath.Join(dir, segName(seg.seq)))
		if err != nil {
			return 0, fmt.Errorf("open spool segment: %w", err)
		}
		br := bufio.NewReaderSize(io.NewSectionReader(f, off, seg.size-off), 256<<10)
		lineStart := true
		for {
			c, err := br.ReadByte()
			if err != nil {
				break
			}
			if lineStart && c != '#' && c != '\n' {
				n++
			}
			lineStart = c == '\n'
		}
		f.Close()
	}
	return n, nil
}

func (s *Spool) createSegment(seq uint64) error {
	path := s.segPath(seq)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create spool segment: %w", err)
	}
	// The new name must survive a power loss along with the data synced into it.
	if d, err := os.Open(s.dir); err == nil {
		d.Sync()
		d.Close()
	}
	s.w = f
	s.segs = append(s.segs, segment{seq: seq})
	return nil
}

func (s *Spool) unsentBytesLocked() int64 {
	var n int64
	for _, seg := range s.segs {
		n += seg.size
	}
	return n - s.committed.Off
}

// Append writes points already encoded as line protocol (whole lines; a
// missing final newline is added). It returns once the lines are in the
// segment file (and fsynced, under the default policy). When the spool is
// full it returns ErrFull and counts the points as dropped.
func (s *Spool) Append(lines []byte, points int) error {
	if len(lines) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("spool closed")
	}
	now := time.Now()
	s.buf = append(s.buf[:0], headerPrefix...)
	s.buf = strconv.AppendInt(s.buf, now.UnixNano(), 10)
	s.buf = append(s.buf, '\n')
	s.buf = append(s.buf, lines...)
	if s.buf[len(s.buf)-1] != '\n' {
		s.buf = append(s.buf, '\n')
	}
	size := int64(len(s.buf))
	if s.unsentBytesLocked()+size > s.opts.MaxBytes {
		s.refuseLocked(points, ErrFull)
		return ErrFull
	}
	if s.w == nil {
		// A rotation failed (a full disk refuses new files too): start the
		// new segment now, or the spool would never append again.
		if err := s.createSegment(s.segs[len(s.segs)-1].seq + 1); err != nil {
			err = fmt.Errorf("append to spool %s: %w", s.dir, err)
			s.refuseLocked(points, err)
			return err
		}
	}
	active := &s.segs[len(s.segs)-1]
	if active.size > 0 && active.size+size > s.opts.SegmentBytes {
		if err := s.rotateLocked(); err != nil {
			s.refuseLocked(points, err)
			return err
		}
		active = &s.segs[len(s.segs)-1]
	}
	n, err := s.w.Write(s.buf)
	if err != nil {
		// Keep the file made of whole lines: cut what a short write left.
		if n > 0 {
			s.w.Truncate(active.size)
		}
		err = fmt.Errorf("append to spool %s: %w", s.dir, err)
		s.refuseLocked(points, err)
		return err
	}
	active.size += size
	s.unsentPoints += int64(points)
	s.appended += int64(points)
	s.dirty = true
	if s.refusing {
		s.refusing = false
		s.log.Info("spool: appends succeed again", "dir", s.dir, "refused_points", s.refusedEpisode)
	}
	if s.opts.SyncEvery <= 0 || now.Sub(s.lastSync) >= s.opts.SyncEvery {
		if err := s.syncLocked(); err != nil {
			return err
		}
	}
	s.broadcastLocked()
	return nil
}

// refuseLocked counts points the spool could not take, logging the first
// refusal of an episode (the next successful append ends it, with the
// count), so a full spool is loud but does not flood. Whether the points
// are lost is the owner's to say: it may send them some other way.
func (s *Spool) refuseLocked(points int, why error) {
	s.refused += int64(points)
	if !s.refusing {
		s.refusing = true
		s.refusedEpisode = 0
		s.log.Warn("spool: refuses appends", "dir", s.dir, "unsent_bytes", s.unsentBytesLocked(), "max_bytes", s.opts.MaxBytes, "err", why)
	}
	s.refusedEpisode += int64(points)
}

func (s *Spool) rotateLocked() error {
	if err := s.syncLocked(); err != nil {
		return err
	}
	err := s.w.Close()
	s.w = nil // Append starts the next segment if creating it fails now
	if err != nil {
		return fmt.Errorf("close spool segment: %w", err)
	}
	return s.createSegment(s.segs[len(s.segs)-1].seq + 1)
}

func (s *Spool) syncLocked() error {
	s.lastSync = time.Now()
	if !s.dirty {
		return nil
	}
	if err := s.w.Sync(); err != nil {
		return fmt.Errorf("sync spool %s: %w", s.dir, err)
	}
	s.dirty = false
	return nil
}

// Sync fsyncs what was appended.
func (s *Spool) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	return s.syncLocked()
}

func (s *Spool) broadcastLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Changed returns a channel closed at the next Append or Commit.
func (s *Spool) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// End returns the position just after the last appended line.
func (s *Spool) End() Position {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.segs[len(s.segs)-1]
	return Position{Seq: last.seq, Off: last.size}
}

// Committed returns the committed read position.
func (s *Spool) Committed() Position {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.committed
}

// Unsent returns the number of points not yet committed; cheaper than Stats.
func (s *Spool) Unsent() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unsentPoints
}

// Dir returns the spool directory.
func (s *Spool) Dir() string { return s.dir }

// Stats returns the spool's state now.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	st := Stats{
		UnsentBytes:    s.unsentBytesLocked(),
		UnsentPoints:   s.unsentPoints,
		AppendedPoints: s.appended,
		RefusedPoints:  s.refused,
		Segments:       len(s.segs),
	}
	pos, appended := s.committed, s.committedAppended
	s.mu.Unlock()
	if st.UnsentPoints > 0 {
		if ns := s.headerAt(pos); ns != 0 {
			appended = ns
		}
		if appended != 0 {
			st.Oldest = time.Unix(0, appended)
		}
	}
	return st
}

// headerAt returns the append time in the header at p, or 0 when p is not
// at a header (it is in the middle of an append).
func (s *Spool) headerAt(p Position) int64 { return headerIn(s.segPath(p.Seq), p.Off) }

// parseHeader parses "# appended=<ns>\n" at the start of b.
func parseHeader(b []byte) (int64, bool) {
	if !bytes.HasPrefix(b, []byte(headerPrefix)) {
		return 0, false
	}
	b = b[len(headerPrefix):]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	ns, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	return ns, true
}

// Batch is a run of unsent lines read by Next. It stays in the spool until
// Commit.
type Batch struct {
	// Lines holds the points as line protocol, one per line, comments removed.
	Lines []byte
	// Points is the number of lines.
	Points int
	// Oldest is when the first point was appended (zero if unknown).
	Oldest time.Time
	// Segment and Offset locate the first line, for error messages.
	Segment string
	Offset  int64

	end          Position
	lastAppended int64
}

// Next reads up to maxPoints unsent points (and about maxBytes, at least
// one line) from the committed position, reusing buf's storage. A batch
// never spans segments. With nothing unsent it returns a batch of no points.
func (s *Spool) Next(maxPoints, maxBytes int, buf []byte) (Batch, error) {
	if maxPoints <= 0 {
		maxPoints = 1
	}
	if maxBytes <= 0 {
		maxBytes = 4 << 20
	}
	for {
		b, skipped, err := s.next(maxPoints, maxBytes, buf)
		if err != nil || b.Points > 0 || !skipped {
			return b, err
		}
		// Only comments before the end (a header whose data a crash tore
		// off): step over them, or a later segment would never be reached.
		if err := s.Commit(b); err != nil {
			return b, err
		}
	}
}

func (s *Spool) next(maxPoints, maxBytes int, buf []byte) (b Batch, skipped bool, err error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return Batch{}, false, errors.New("spool closed")
	}
	// Move past a finished segment that is no longer appended to.
	for len(s.segs) > 1 && s.committed.Off >= s.segs[0].size {
		if err := s.advanceLocked(); err != nil {
			s.mu.Unlock()
			return Batch{}, false, err
		}
	}
	pos, appended := s.committed, s.committedAppended
	size := s.segs[0].size
	s.mu.Unlock()

	b = Batch{Lines: buf[:0], Segment: s.segPath(pos.Seq), Offset: pos.Off, end: pos, lastAppended: appended}
	if pos.Off >= size {
		return b, false, nil
	}
	if s.r == nil || s.rseq != pos.Seq {
		if s.r != nil {
			s.r.Close()
		}
		f, err := os.Open(s.segPath(pos.Seq))
		if err != nil {
			s.r = nil
			return b, false, fmt.Errorf("open spool segment: %w", err)
		}
		s.r, s.rseq = f, pos.Seq
	}
	if s.br == nil {
		s.br = bufio.NewReaderSize(nil, 256<<10)
	}
	br := s.br
	br.Reset(io.NewSectionReader(s.r, pos.Off, size-pos.Off))
	off := pos.Off
	cur := appended
	for b.Points < maxPoints && len(b.Lines) < maxBytes {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: gather it whole.
			long := slices.Clone(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			// Only whole lines lie below size; anything else is the end.
			break
		}
		off += int64(len(line))
		if line[0] == '#' || len(line) == 1 {
			if ns, ok := parseHeader(line); ok {
				cur = ns
			}
			if b.Points == 0 {
				b.end = Position{Seq: pos.Seq, Off: off}
				b.lastAppended = cur
				skipped = true
			}
			continue
		}
		if b.Points == 0 && cur != 0 {
			b.Oldest = time.Unix(0, cur)
		}
		b.Lines = append(b.Lines, line...)
		b.Points++
		b.end = Position{Seq: pos.Seq, Off: off}
		b.lastAppended = cur
	}
	return b, skipped, nil
}

// Commit marks a batch returned by Next as sent: the committed position
// moves past it and is written to disk, and segments wholly sent are
// deleted.
func (s *Spool) Commit(b Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("spool closed")
	}
	if !s.committed.Before(b.end) {
		return nil
	}
	s.committed = b.end
	s.committedAppended = b.lastAppended
	s.unsentPoints -= int64(b.Points)
	if len(s.segs) > 1 && s.committed.Off >= s.segs[0].size {
		return s.advanceLocked()
	}
	if err := s.writePositionLocked(); err != nil {
		return err
	}
	s.broadcastLocked()
	return nil
}

// advanceLocked moves the committed position to the start of the next
// segment and deletes the finished one. The position is written first: a
// crash in between leaves a sent segment that Open deletes.
func (s *Spool) advanceLocked() error {
	old := s.segs[0].seq
	s.segs = s.segs[1:]
	s.committed = Position{Seq: s.segs[0].seq}
	if err := s.writePositionLocked(); err != nil {
		return err
	}
	if s.r != nil && s.rseq == old {
		s.r.Close()
		s.r = nil
	}
	if err := os.Remove(s.segPath(old)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove sent spool segment: %w", err)
	}
	s.broadcastLocked()
	return nil
}

func (s *Spool) writePositionLocked() error {
	b, err := json.Marshal(positionRecord{Position: s.committed, Appended: s.committedAppended})
	if err != nil {
		return err
	}
	path := filepath.Join(s.dir, positionFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write spool position: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write spool position: %w", err)
	}
	return nil
}

// Close syncs and closes the spool; what is unsent stays for the next Open.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	var err error
	if s.w != nil {
		err = s.syncLocked()
		if cerr := s.w.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close spool segment: %w", cerr)
		}
	}
	s.closed = true
	if s.r != nil {
		s.r.Close()
	}
	s.broadcastLocked()
	s.lock.Close()
	return err
}
