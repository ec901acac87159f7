// Package recordings reads telemetry that other tools recorded — InfluxDB
// line protocol files (Telegraf's file output), nvidia-smi
// --query-gpu --format=csv logs and LibSensorsTools JSON — into heatsink
// points and run phases, so that existing experiments can be analysed like
// heatsink's own runs.
//
// Readings are mapped onto docs/data-model.md (an nvidia-smi power.draw
// becomes gpu.power_w). A line or row that cannot be read is reported with
// its file and line and skipped; it never costs the readings around it, and
// nothing is dropped in bulk without a report.
package recordings

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// Format is the kind of a recording.
type Format string

// The formats Import reads.
const (
	LineProtocol    Format = "lp"
	NvidiaSMI       Format = "nvidia-smi-csv"
	LibSensorsTools Format = "libsensorstools-json"
)

// Formats lists the formats, for help texts.
var Formats = []Format{LineProtocol, NvidiaSMI, LibSensorsTools}

// Options say what the files do not.
type Options struct {
	// Format forces the format of every file; "" detects it from the content.
	Format Format
	// Host is the host tag of points that lack one (nvidia-smi and
	// LibSensorsTools files never name their host).
	Host string
	// Start is the wall-clock time a LibSensorsTools recording started: its
	// timestamps count seconds from there and the file does not record it.
	Start time.Time
	// Location is the time zone of nvidia-smi timestamps, which carry none;
	// default the local zone.
	Location *time.Location
	// Precision of line-protocol timestamps: "ns", "us", "ms" or "s"; ""
	// detects it per file from the magnitude of the first timestamp.
	Precision string
}

// FileResult is what reading one file produced.
type FileResult struct {
	Path   string
	Format Format
	Points int
	// Bad lists every line or row skipped, with its file and line.
	Bad []*point.LineError
	// Warnings are things read but not mapped (unknown columns or keys),
	// each reported once.
	Warnings []string
	// Devices names what the file recorded (gpu 0 NVIDIA H100...).
	Devices []string
	// Phases found in the file (LibSensorsTools events).
	Phases []rundir.Phase
	// Events are other marks on the timeline (unknown LibSensorsTools events).
	Events []rundir.Event
	// Versions of the recording tool and libraries, when the file says.
	Versions map[string]string
	// Command is the command the recording tool wrapped, when it says.
	Command []string
	// Interval between samples, estimated from the timestamps; 0 if unknown.
	Interval time.Duration
	// Precision detected for line protocol.
	Precision string
	First     time.Time
	Last      time.Time

	enc point.Encoder
}

// storable reports whether p can be written as line protocol, and reports
// the line when not (a tag value with a control character, say): the
// import finds it here, with its line, rather than a sink refusing it later.
func (r *FileResult) storable(line int, p *point.Point) bool {
	r.enc.Reset()
	if err := r.enc.Encode(p); err != nil {
		r.bad(line, fmt.Errorf("cannot be stored: %w", err))
		return false
	}
	return true
}

func (r *FileResult) bad(line int, err error) {
	r.Bad = append(r.Bad, &point.LineError{Name: r.Path, Line: line, Err: err})
}

func (r *FileResult) warnOnce(seen map[string]bool, msg string) {
	if !seen[msg] {
		seen[msg] = true
		r.Warnings = append(r.Warnings, msg)
	}
}

// tracker keeps the points read from one file: it notes their times for
// First, Last and the interval estimate, which is the median gap between
// successive readings of one series, and their devices.
type tracker struct {
	r       *FileResult
	prev    map[string]time.Time
	diffs   []time.Duration
	devices map[string]bool
}

// keep passes the point read at line to fn and counts it, or, when it
// cannot be stored, reports the line as bad and skips it.
func (t *tracker) keep(line int, p *point.Point, fn func(*point.Point) error) error {
	if !t.r.storable(line, p) {
		return nil
	}
	if t.devices == nil {
		t.devices = map[string]bool{}
	}
	t.devices[describe(p)] = true
	t.see(p)
	t.r.Points++
	return fn(p)
}

func (t *tracker) see(p *point.Point) {
	ts := p.Time
	if t.r.First.IsZero() || ts.Before(t.r.First) {
		t.r.First = ts
	}
	if ts.After(t.r.Last) {
		t.r.Last = ts
	}
	if len(t.diffs) >= 10000 {
		return
	}
	if t.prev == nil {
		t.prev = map[string]time.Time{}
	}
	key := p.SeriesKey()
	if prev, ok := t.prev[key]; ok && ts.After(prev) {
		t.diffs = append(t.diffs, ts.Sub(prev))
	}
	t.prev[key] = ts
}

// finish sets the file's devices and interval from the points kept.
func (t *tracker) finish() {
	t.r.Devices = sortedKeys(t.devices)
	if len(t.diffs) == 0 {
		return
	}
	slices.Sort(t.diffs)
	// Tools stamp readings when they take them, a few ms late: round to
	// the interval they were asked for.
	d := t.diffs[len(t.diffs)/2]
	if d > 50*time.Millisecond {
		d = d.Round(10 * time.Millisecond)
	}
	t.r.Interval = d
}

// Detect tells the format of a recording from its first bytes.
func Detect(head []byte) (Format, error) {
	b := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(b) == 0 {
		return "", errors.New("empty file")
	}
	if b[0] == '[' || b[0] == '{' {
		if bytes.Contains(head, []byte(`"event"`)) || bytes.Contains(head, []byte(`"arguments"`)) || bytes.Contains(head, []byte(`"versions"`)) {
			return LibSensorsTools, nil
		}
		return "", errors.New("JSON, but not LibSensorsTools output (no \"event\" records)")
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	if first[0] == '#' {
		// Line protocol files may start with comments.
		return LineProtocol, nil
	}
	if bytes.Contains(first, []byte(",")) && !bytes.Contains(first, []byte("=")) {
		return NvidiaSMI, nil
	}
	return LineProtocol, nil
}

// ReadFile reads one recording and hands each point to fn. Errors about
// single lines are in the result; the error returned is for the file as a
// whole (unreadable, of an unknown format, without any point).
func ReadFile(path string, o Options, fn func(*point.Point) error) (*FileResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	// A rotated log (logrotate's compress, a Telegraf file gzipped, a run's
	// archived points.lp.gz) is read through gzip, by its magic bytes, not
	// its name.
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("read recording %s: %w", path, err)
		}
		defer z.Close()
		br = bufio.NewReaderSize(z, 1<<20)
	}
	format := o.Format
	if format == "" {
		head, _ := br.Peek(4096)
		if format, err = Detect(head); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	res, err := Read(br, path, format, o, fn)
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			// A reader's own failure (a gzip stream cut short, JSON
			// that ends early) names no file: say which.
			err = fmt.Errorf("%s: %w", path, err)
		}
		return res, err
	}
	if res.Points == 0 {
		msg := fmt.Sprintf("%s: no readings found in this %s file", path, format)
		if len(res.Bad) > 0 {
			msg += fmt.Sprintf(" (%d bad lines; the first: %v)", len(res.Bad), res.Bad[0])
		}
		return res, errors.New(msg)
	}
	return res, nil
}

// Read reads a recording of the given format from r; name appears in
// errors. See ReadFile.
func Read(r io.Reader, name string, format Format, o Options, fn func(*point.Point) error) (*FileResult, error) {
	res := &FileResult{Path: name, Format: format}
	var err error
	switch format {
	case LineProtocol:
		err = readLineProtocol(r, res, o, fn)
	case NvidiaSMI:
		err = readNvidiaSMI(r, res, o, fn)
	case LibSensorsTools:
		err = readLibSensorsTools(r, res, o, fn)
	default:
		return nil, fmt.Errorf("%s: unknown format %q (want one of %s)", name, format, formatList())
	}
	return res, err
}

func formatList() string {
	s := make([]string, len(Formats))
	for i, f := range Formats {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// maxDevices bounds the series listed per file in run.json: a Telegraf file
// can hold thousands.
const maxDevices = 100

// SourceInfo describes a file for run.json's sources list.
func (r *FileResult) SourceInfo() rundir.SourceInfo {
	abs, err := filepath.Abs(r.Path)
	if err != nil {
		abs = r.Path
	}
	info := rundir.SourceInfo{Name: string(r.Format) + ":" + abs, Devices: r.Devices}
	if n := len(info.Devices); n > maxDevices {
		info.Devices = append(slices.Clip(info.Devices[:maxDevices]), fmt.Sprintf("... and %d more series", n-maxDevices))
	}
	var notes []string
	if len(r.Bad) > 0 {
		notes = append(notes, fmt.Sprintf("%d lines skipped, the first %v", len(r.Bad), r.Bad[0]))
	}
	notes = append(notes, r.Warnings...)
	info.Error = strings.Join(notes, "; ")
	return info
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Preflight checks, before anything is written, that every file can be
// opened, that its format is known, and that what its format needs from
// the options is there (a start time for LibSensorsTools).
func Preflight(paths []string, o Options) error {
	var errs []error
	for _, path := range paths {
		format, err := DetectFile(path, o.Format)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if format == LibSensorsTools && o.Start.IsZero() {
			errs = append(errs, fmt.Errorf("%s: LibSensorsTools timestamps count seconds from the tool's start, which the file does not record: give --start (the wall-clock time the tool started)", path))
		}
	}
	return errors.Join(errs...)
}

// DetectFile returns the format of the file at path; a non-empty force is
// checked and returned.
func DetectFile(path string, force Format) (Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read recording: %w", err)
	}
	defer f.Close()
	if force != "" {
		if !slices.Contains(Formats, force) {
			return "", fmt.Errorf("unknown format %q (want one of %s)", force, formatList())
		}
		return force, nil
	}
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	format, err := Detect(head[:n])
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return format, nil
}
