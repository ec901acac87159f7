// Package probe is a source that exists to show what adding a source
// takes: this package and one import line (node/probe_source.go, built
// with the tag heatsink_probe by cmd/heatsink's TestAddingASource...). It
// reads temperature probes from a text file, one "name value_c" a line,
// the way a fixture tree stands for sysfs.
package probe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// Source reads the probes file on every sample.
type Source struct {
	path string

	mu    sync.Mutex
	names []string
}

// New returns a source reading path.
func New(path string) *Source { return &Source{path: path} }

// Name identifies the source.
func (s *Source) Name() string { return "probe" }

// Discover finds the probes; a missing file means no probes here.
func (s *Source) Discover(ctx context.Context) error {
	readings, err := read(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no probes file %s: %w", s.path, errors.ErrUnsupported)
	}
	if err != nil {
		return err
	}
	names := make([]string, len(readings))
	for i, r := range readings {
		names[i] = r.name
	}
	s.mu.Lock()
	s.names = names
	s.mu.Unlock()
	return nil
}

// Describe lists the probes found.
func (s *Source) Describe() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []string{fmt.Sprintf("%d probes: %s (%s)", len(s.names), strings.Join(s.names, ", "), s.path)}
}

// Sample appends one probe point per line of the file.
func (s *Source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	readings, err := read(s.path)
	if err != nil {
		return buf, err
	}
	for _, r := range readings {
		p := point.New("probe", t)
		p.AddTag("probe", r.name)
		p.AddFloat("temp_c", r.tempC)
		buf = append(buf, p)
	}
	return buf, nil
}

type reading struct {
	name  string
	tempC float64
}

// read parses the probes file; a bad line is an error naming it.
func read(path string) ([]reading, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []reading
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"name value_c\", got %q", path, n, sc.Text())
		}
		v, err := strconv.ParseFloat(fields[1], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %q is not a temperature", path, n, fields[1])
		}
		out = append(out, reading{fields[0], v})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}
