package point

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
)

// Encoder appends points to a buffer as line protocol with nanosecond timestamps.
// The zero value is ready to use.
type Encoder struct {
	enc  lineprotocol.Encoder
	init bool
}

// Encode appends p. Tags are written sorted by key, as line protocol requires.
// A point with no fields is an error: InfluxDB rejects it.
func (e *Encoder) Encode(p *Point) error {
	if !e.init {
		e.enc.SetPrecision(lineprotocol.Nanosecond)
		e.init = true
	}
	if len(p.Fields) == 0 {
		return fmt.Errorf("point %s: no fields", p.Measurement)
	}
	e.enc.StartLine(p.Measurement)
	for _, t := range sortedTags(p.Tags) {
		e.enc.AddTag(t.Key, t.Value)
	}
	for _, f := range p.Fields {
		e.enc.AddField(f.Key, f.Value)
	}
	e.enc.EndLine(p.Time)
	if err := e.enc.Err(); err != nil {
		e.enc.ClearErr()
		return fmt.Errorf("encode point %s: %w", p.Measurement, err)
	}
	return nil
}

// Bytes returns the encoded lines so far.
func (e *Encoder) Bytes() []byte { return e.enc.Bytes() }

// Reset empties the buffer, keeping its storage.
func (e *Encoder) Reset() { e.enc.Reset() }

// Append encodes points onto dst and returns the extended buffer. Points that
// cannot be encoded are skipped and reported in the joined error.
func Append(dst []byte, points []Point) ([]byte, error) {
	var e Encoder
	e.enc.SetBuffer(dst)
	var errs []error
	for i := range points {
		if err := e.Encode(&points[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return e.Bytes(), errors.Join(errs...)
}

// LineError is a line that could not be decoded.
type LineError struct {
	Name string // file name or other description of the source
	Line int    // 1-based line number
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Reader decodes line protocol one point at a time. Unlike a plain decoder it
// survives bad lines: each is reported with its line number and skipped, so
// one corrupt line never costs the points around it.
type Reader struct {
	name      string
	sc        *LineScanner
	line      int
	precision lineprotocol.Precision
	err       error

	requireNewline bool
	ld             lineDecoder
	intercept      func(line []byte) bool
}

// MaxLineBytes is the longest line a Reader decodes; a longer one is a
// LineError and is skipped.
const MaxLineBytes = 16 << 20

// NewReader returns a Reader over r; name appears in errors.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, sc: NewLineScanner(r, MaxLineBytes), precision: lineprotocol.Nanosecond}
}

// RequireNewline makes a last line without a terminating newline an error.
// heatsink's own writers end every line, so such a line is a write torn by a
// crash, and truncation can leave a valid-looking point with a wrong time.
func (r *Reader) RequireNewline(on bool) { r.requireNewline = on }

// Intercept lets the caller decode the lines it recognises itself, faster
// than a Point can be built, and leave the rest to Next: fn sees each line
// Next would decode (trimmed, not blank nor a comment, not too long,
// terminated where that is required) and returns true when it has consumed
// it, and Next goes on to the following line. line is valid only during the
// call. A caller that cannot be sure it decodes a line exactly as Next would
// must return false, so odd lines keep Next's decoding and its errors.
func (r *Reader) Intercept(fn func(line []byte) bool) { r.intercept = fn }

// SetPrecision sets the timestamp precision of the input (default nanoseconds).
func (r *Reader) SetPrecision(p lineprotocol.Precision) { r.precision = p }

// Next decodes the next point. It returns false at the end of input or on an
// I/O error (see Err). A malformed line comes back as the *LineError, with
// ok true, so the caller can report it and call Next again for the lines
// after it.
func (r *Reader) Next() (Point, *LineError, bool) {
	for r.sc.Scan() {
		r.line++
		if r.sc.TooLong() {
			return Point{}, &LineError{Name: r.name, Line: r.line, Err: fmt.Errorf("line longer than %d MiB: skipped", MaxLineBytes>>20)}, true
		}
		b := bytes.TrimSpace(r.sc.Bytes())
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		if r.requireNewline && r.sc.Unterminated() {
			return Point{}, &LineError{Name: r.name, Line: r.line, Err: errors.New("last line has no newline: a write torn by a crash")}, true
		}
		if r.intercept != nil && r.intercept(b) {
			continue
		}
		p, err := r.ld.decode(b, r.precision)
		if err != nil {
			return Point{}, &LineError{Name: r.name, Line: r.line, Err: err}, true
		}
		return p, nil, true
	}
	if err := r.sc.Err(); err != nil {
		r.err = fmt.Errorf("read %s after line %d: %w", r.name, r.line, err)
	}
	return Point{}, nil, false
}

// Err returns the I/O error that stopped Next, if any.
func (r *Reader) Err() error { return r.err }

// Line returns the number of the line last read.
func (r *Reader) Line() int { return r.line }

// ErrNoTime is returned for a line without a timestamp: a recording without
// times cannot be analysed, so such lines are refused rather than stamped now.
var ErrNoTime = errors.New("no timestamp")

// lineDecoder decodes single lines. It interns names and tag values, which
// repeat on nearly every line of a recording, and sizes slices from the last
// line, so a point costs a few allocations instead of one per string.
type lineDecoder struct {
	strs           map[string]string
	ntags, nfields int
}

// maxInterned bounds the intern table, so a file with ever-new tag values
// (a run id per line, say) cannot grow it without limit.
const maxInterned = 1 << 16

func (ld *lineDecoder) str(b []byte) string {
	if s, ok := ld.strs[string(b)]; ok { // no allocation for the lookup
		return s
	}
	if ld.strs == nil || len(ld.strs) >= maxInterned {
		ld.strs = make(map[string]string, 256)
	}
	s := string(b)
	ld.strs[s] = s
	return s
}

func (ld *lineDecoder) decode(b []byte, prec lineprotocol.Precision) (Point, error) {
	d := lineprotocol.NewDecoderWithBytes(b)
	if !d.Next() {
		return Point{}, errors.New("empty line")
	}
	m, err := d.Measurement()
	if err != nil {
		return Point{}, err
	}
	p := Point{Measurement: ld.str(m)}
	if ld.ntags > 0 {
		p.Tags = make([]Tag, 0, ld.ntags)
	}
	for {
		k, v, err := d.NextTag()
		if err != nil {
			return Point{}, err
		}
		if k == nil {
			break
		}
		p.Tags = append(p.Tags, Tag{ld.str(k), ld.str(v)})
	}
	p.Fields = make([]Field, 0, max(ld.nfields, 1))
	for {
		k, v, err := d.NextField()
		if err != nil {
			return Point{}, err
		}
		if k == nil {
			break
		}
		if v.Kind() == lineprotocol.String {
			// The decoder's string values alias its buffer; copy.
			v, _ = lineprotocol.StringValue(v.StringV())
		}
		p.Fields = append(p.Fields, Field{ld.str(k), v})
	}
	// The zero time.Time stands for "no timestamp": time.Unix(0, 0) differs from it.
	t, err := d.Time(prec, time.Time{})
	if err != nil {
		return Point{}, err
	}
	if t.IsZero() {
		return Point{}, ErrNoTime
	}
	p.Time = t
	if d.Next() {
		return Point{}, errors.New("more than one point on the line")
	}
	if err := d.Err(); err != nil {
		return Point{}, err
	}
	ld.ntags, ld.nfields = len(p.Tags), len(p.Fields)
	return p, nil
}

// ParseLine decodes a single line of line protocol with nanosecond timestamps.
func ParseLine(line []byte) (Point, error) {
	var ld lineDecoder
	return ld.decode(bytes.TrimSpace(line), lineprotocol.Nanosecond)
}
