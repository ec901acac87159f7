package point

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// LineScanner reads lines of at most a given length. Unlike bufio.Scanner,
// which stops for good at a line longer than its buffer, it skips such a
// line to its end and says so (TooLong), so one giant line (a corrupt or
// hostile file) costs only itself, not the rest of the file.
type LineScanner struct {
	br           *bufio.Reader
	max          int
	buf          []byte
	tooLong      bool
	unterminated bool
	err          error
}

// NewLineScanner returns a scanner over r for lines of at most max bytes
// (without their newline).
func NewLineScanner(r io.Reader, max int) *LineScanner {
	return &LineScanner{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Scan reads the next line; false at the end of input or on an error (Err).
func (s *LineScanner) Scan() bool {
	s.buf, s.tooLong, s.unterminated = s.buf[:0], false, false
	read := false
	for {
		chunk, err := s.br.ReadSlice('\n')
		read = read || len(chunk) > 0
		if !s.tooLong {
			if len(s.buf)+len(bytes.TrimSuffix(chunk, []byte{'\n'})) > s.max {
				s.tooLong, s.buf = true, s.buf[:0]
			} else {
				s.buf = append(s.buf, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !read {
				return false
			}
			s.unterminated = true
		case err != nil:
			s.err = err
			return false
		}
		break
	}
	s.buf = bytes.TrimSuffix(s.buf, []byte{'\n'})
	s.buf = bytes.TrimSuffix(s.buf, []byte{'\r'})
	return true
}

// Bytes is the line Scan read, without its line ending; empty for a line
// that was too long. It is valid until the next Scan.
func (s *LineScanner) Bytes() []byte { return s.buf }

// Text is Bytes as a string.
func (s *LineScanner) Text() string { return string(s.buf) }

// TooLong reports whether the line Scan read was longer than the maximum
// and skipped.
func (s *LineScanner) TooLong() bool { return s.tooLong }

// Unterminated reports whether the line Scan read ended the input without
// a newline.
func (s *LineScanner) Unterminated() bool { return s.unterminated }

// Err is the read error that ended scanning, if any (not io.EOF).
func (s *LineScanner) Err() error { return s.err }
