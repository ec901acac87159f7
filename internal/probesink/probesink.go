// Package probesink is a sink that exists to show what adding a sink
// takes: this package and one import line (node/probesink_test.go). It
// appends every point, as line protocol after a tag of its own, to a file
// it holds an exclusive lock on while open, the way the InfluxDB sink holds
// its spool: so a reload must close it before opening its successor on the
// same file, which the node does through a handoff.
package probesink

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/registry"
)

// Sink appends points to its file.
type Sink struct {
	mu      sync.Mutex
	f       *os.File
	tag     string
	enc     point.Encoder
	written int64
	lastErr error
}

// Open opens path for appending, under an exclusive lock: a second Sink on
// the same file fails until the first is closed.
func Open(path, tag string) (*Sink, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("probe sink: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("probe sink: lock %s (another sink has it open): %w", path, err)
	}
	return &Sink{f: f, tag: tag}, nil
}

// Write appends one line per point: the tag, a space, the line protocol.
func (s *Sink) Write(points []point.Point) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return errors.New("probe sink: write after close")
	}
	var buf []byte
	for i := range points {
		s.enc.Reset()
		if err := s.enc.Encode(&points[i]); err != nil {
			continue // a point without fields: nothing to write
		}
		buf = append(append(append(buf, s.tag...), ' '), s.enc.Bytes()...)
	}
	if _, err := s.f.Write(buf); err != nil {
		s.lastErr = fmt.Errorf("probe sink: write %s: %w", s.f.Name(), err)
		return s.lastErr
	}
	s.written += int64(len(points))
	s.lastErr = nil
	return nil
}

// Flush syncs the file.
func (s *Sink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	return s.f.Sync()
}

// Close releases the file and its lock.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	if err != nil {
		return fmt.Errorf("probe sink: close: %w", err)
	}
	return nil
}

// Health says how many points the sink wrote and whether the last write
// failed.
func (s *Sink) Health() registry.SinkHealth {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := registry.SinkHealth{OK: s.lastErr == nil, SentPointsTotal: s.written}
	if s.lastErr != nil {
		h.Problem = s.lastErr.Error()
	}
	return h
}
