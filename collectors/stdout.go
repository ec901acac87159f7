package collectors

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// StreamSink writes points to a stream (stdout) as line protocol or JSON lines.
type StreamSink struct {
	mu   sync.Mutex
	w    *bufio.Writer
	json bool
	enc  point.Encoder
}

// NewStreamSink returns a sink writing to w in format "lp" (line protocol) or "json".
func NewStreamSink(w io.Writer, format string) (*StreamSink, error) {
	switch format {
	case "", "lp":
		return &StreamSink{w: bufio.NewWriter(w)}, nil
	case "json":
		return &StreamSink{w: bufio.NewWriter(w), json: true}, nil
	}
	return nil, fmt.Errorf("stdout sink: unknown format %q (want lp or json)", format)
}

// JSONPoint is the JSON-lines form of a point.
type JSONPoint struct {
	Measurement string            `json:"measurement"`
	Tags        map[string]string `json:"tags"`
	Fields      map[string]any    `json:"fields"`
	Time        time.Time         `json:"time"`
}

// ToJSON converts a point into its JSON-lines form.
func ToJSON(p *point.Point) JSONPoint {
	j := JSONPoint{Measurement: p.Measurement, Tags: map[string]string{}, Fields: map[string]any{}, Time: p.Time}
	for _, t := range p.Tags {
		j.Tags[t.Key] = t.Value
	}
	for _, f := range p.Fields {
		j.Fields[f.Key] = f.Value.Interface()
	}
	return j
}

// Write implements Sink. A point that cannot be written (one without
// fields, say) is skipped and reported in the error; the others are
// written, as the run directory's writer does.
func (s *StreamSink) Write(points []point.Point) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var bad []error
	for i := range points {
		if s.json {
			b, err := json.Marshal(ToJSON(&points[i]))
			if err != nil {
				bad = append(bad, fmt.Errorf("stdout sink: point %s: %w", points[i].Measurement, err))
				continue
			}
			s.w.Write(b)
			s.w.WriteByte('\n')
			continue
		}
		s.enc.Reset()
		if err := s.enc.Encode(&points[i]); err != nil {
			bad = append(bad, fmt.Errorf("stdout sink: %w", err))
			continue
		}
		s.w.Write(s.enc.Bytes())
	}
	return errors.Join(append(bad, s.w.Flush())...)
}

// Flush implements Sink.
func (s *StreamSink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Flush()
}

// Close implements Sink.
func (s *StreamSink) Close() error { return s.Flush() }
