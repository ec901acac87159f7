// Package sysfs reads the kernel's pseudo-files (sysfs attributes and procfs
// tables) the way they have to be read, with errors that name the file and
// what was wrong in it.
//
// A sysfs attribute is read with one read(2) of a small buffer and nothing
// more: some hwmon drivers answer EAGAIN, and os.ReadFile on such a file
// waits on the poller forever (sysfs files are pollable). One read either
// returns the value or fails at once, which is what a 1 Hz sampler needs.
// An attribute sampled every tick is kept open (Attr) and re-read at offset
// 0, which makes the kernel format a fresh value: one system call a reading
// instead of three.
//
// Poller is the lifecycle the sysfs sources (hwmon, nvme, cpufreq, rapl)
// embed: discovery, rediscovery when a device vanishes or on an interval,
// the refresh cadence of slow-changing attributes, Describe and Close.
package sysfs

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"syscall"
)

// AttrMax is the largest value an attribute can hold: the kernel formats
// every sysfs attribute into one page.
const AttrMax = 4096

// ErrEmpty is returned for an attribute that holds no value.
var ErrEmpty = errors.New("empty value")

// ReadAttr reads the attribute at path into buf with a single read(2) and
// returns the value with surrounding white space removed. A value that fills
// buf entirely is refused, as it may have been cut short.
func ReadAttr(path string, buf []byte) ([]byte, error) {
	fd, err := open(path)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var n int
	for {
		n, err = syscall.Read(fd, buf)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &PathError{"read", path, err}
	}
	if n == len(buf) {
		return nil, &PathError{"read", path, fmt.Errorf("value longer than %d bytes", len(buf)-1)}
	}
	return trim(buf[:n]), nil
}

// ReadFile reads a whole file (a procfs table such as /proc/stat, which can
// exceed a page) into buf, growing it as needed, and returns the contents.
// Pass the previous result's storage back in to read without allocating.
func ReadFile(path string, buf []byte) ([]byte, error) {
	fd, err := open(path)
	if err != nil {
		return buf[:0], err
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	if cap(buf) < 512 {
		buf = make([]byte, 0, 4096)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf[:0], &PathError{"read", path, err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// Attr is an attribute kept open between readings. Each reading is one
// pread(2) at offset 0, for which sysfs formats the value afresh. After a
// failed read the file is closed and opened again by path at the next one,
// so a device that went away reads as fs.ErrNotExist and one that was
// re-registered at the same path is found again. An Attr is not safe for
// concurrent use. A pipe (a FIFO standing in for a driver in tests) is
// read with read(2) and opened afresh for each reading.
type Attr struct {
	path string
	fd   int // -1 while closed
}

// NewAttr returns the attribute at path; it is opened at the first reading.
func NewAttr(path string) *Attr { return &Attr{path: path, fd: -1} }

// Path returns the attribute's path.
func (a *Attr) Path() string { return a.path }

// Read reads the value into buf, as ReadAttr does.
func (a *Attr) Read(buf []byte) ([]byte, error) {
	if a.fd < 0 {
		fd, err := open(a.path)
		if err != nil {
			return nil, err
		}
		a.fd = fd
	}
	var n int
	var err error
	for {
		n, err = syscall.Pread(a.fd, buf, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.ESPIPE {
		// A pipe has no offset 0 to come back to: it is read as a stream,
		// and opened again for the next reading.
		for {
			n, err = syscall.Read(a.fd, buf)
			if err != syscall.EINTR {
				break
			}
		}
		a.Close()
	}
	if err != nil {
		a.Close()
		return nil, &PathError{"read", a.path, err}
	}
	if n == len(buf) {
		return nil, &PathError{"read", a.path, fmt.Errorf("value longer than %d bytes", len(buf)-1)}
	}
	return trim(buf[:n]), nil
}

// ReadInt reads an attribute holding one decimal integer.
func (a *Attr) ReadInt() (int64, error) {
	var buf [64]byte
	b, err := a.Read(buf[:])
	if err != nil {
		return 0, err
	}
	v, err := ParseInt(b)
	if err != nil {
		return 0, &PathError{"parse", a.path, err}
	}
	return v, nil
}

// ReadUint reads an attribute holding one unsigned decimal integer.
func (a *Attr) ReadUint() (uint64, error) {
	var buf [64]byte
	b, err := a.Read(buf[:])
	if err != nil {
		return 0, err
	}
	v, err := ParseUint(b)
	if err != nil {
		return 0, &PathError{"parse", a.path, err}
	}
	return v, nil
}

// Close closes the file if it is open. The Attr can be read again after.
func (a *Attr) Close() error {
	if a.fd < 0 {
		return nil
	}
	err := syscall.Close(a.fd)
	a.fd = -1
	if err != nil {
		return &PathError{"close", a.path, err}
	}
	return nil
}

// Gone reports whether err says that the file or its device went away:
// not found at open, or, for a file kept open, ENODEV, which kernfs returns
// once the device is unregistered.
func Gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENODEV)
}

func open(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return -1, &PathError{"open", path, err}
		}
		return fd, nil
	}
}

// PathError is a failure to read an attribute or to make sense of its
// value. It unwraps to the system error (so errors.Is(err, fs.ErrNotExist)
// tells a vanished device) or to ErrEmpty, strconv.ErrSyntax or
// strconv.ErrRange.
type PathError struct {
	Op   string // "open", "read", "parse"
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }

func (e *PathError) Unwrap() error { return e.Err }

// ReadString reads an attribute holding text (a name, a label, a model).
func ReadString(path string) (string, error) {
	var buf [AttrMax]byte
	b, err := ReadAttr(path, buf[:])
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// ReadInt reads an attribute holding one decimal integer.
func ReadInt(path string) (int64, error) {
	var buf [64]byte
	b, err := ReadAttr(path, buf[:])
	if err != nil {
		return 0, err
	}
	v, err := ParseInt(b)
	if err != nil {
		return 0, &PathError{"parse", path, err}
	}
	return v, nil
}

// ReadUint reads an attribute holding one unsigned decimal integer (a
// counter such as energy_uj).
func ReadUint(path string) (uint64, error) {
	var buf [64]byte
	b, err := ReadAttr(path, buf[:])
	if err != nil {
		return 0, err
	}
	v, err := ParseUint(b)
	if err != nil {
		return 0, &PathError{"parse", path, err}
	}
	return v, nil
}

// ParseInt parses one decimal integer, allowing surrounding white space.
// Errors quote the value and wrap ErrEmpty, strconv.ErrSyntax or
// strconv.ErrRange.
func ParseInt(b []byte) (int64, error) {
	b = trim(b)
	if len(b) == 0 {
		return 0, ErrEmpty
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, numError(b, err)
	}
	return v, nil
}

// ParseUint is ParseInt for unsigned values.
func ParseUint(b []byte) (uint64, error) {
	b = trim(b)
	if len(b) == 0 {
		return 0, ErrEmpty
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, numError(b, err)
	}
	return v, nil
}

func numError(b []byte, err error) error {
	const show = 40
	s := string(b)
	if len(s) > show {
		s = s[:show] + "..."
	}
	if errors.Is(err, strconv.ErrRange) {
		return &valueError{fmt.Sprintf("%q is out of range", s), strconv.ErrRange}
	}
	return &valueError{fmt.Sprintf("%q is not a decimal integer", s), strconv.ErrSyntax}
}

// valueError says what is wrong with a value in words, and unwraps to the
// strconv error for callers that test for it.
type valueError struct {
	msg string
	err error
}

func (e *valueError) Error() string { return e.msg }

func (e *valueError) Unwrap() error { return e.err }

func trim(b []byte) []byte {
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == 0
}
