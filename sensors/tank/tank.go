// Package tank reads immersion-cooling tanks and CDUs over their HTTP APIs:
// the Submer SmartPod's /api/realTime, and any JSON endpoint mapped field by
// field in YAML. A request is bounded in time and size, and an answer that is
// malformed, partial or wrongly typed is an error for that tick, never a
// reading of zero.
//
// Points: measurement tank, tags tank and vendor, fields as in
// docs/data-model.md (coolant_temp_c, setpoint_c, pump1_on, mode, demo...).
package tank

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// decoder turns one answer into one tank point's fields.
type decoder func(body []byte, p *point.Point) error

// Source samples one tank. It implements the collector's Source, Closer and
// Describer interfaces.
type Source struct {
	cfg    Config
	client *http.Client
	decode decoder

	mu   sync.Mutex
	desc string // what Discover saw
}

// New checks cfg, reads its secrets and returns a source for it; nothing is
// sent until Discover.
func New(cfg Config) (*Source, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("tank %s: %w", cfg.Name, err)
	}
	if err := cfg.resolve(); err != nil {
		return nil, fmt.Errorf("tank %s: %w", cfg.Name, err)
	}
	cfg = cfg.withDefaults()
	client, err := cfg.httpClient()
	if err != nil {
		return nil, fmt.Errorf("tank %s: %w", cfg.Name, err)
	}
	s := &Source{cfg: cfg, client: client}
	switch cfg.Kind {
	case KindSubmer:
		s.decode = submerDecoder(cfg.WaterFlowUnit)
	case KindHTTPJSON:
		if s.decode, err = jsonDecoder(cfg.Fields); err != nil {
			return nil, fmt.Errorf("tank %s: %w", cfg.Name, err)
		}
	}
	return s, nil
}

// Name returns "tank:NAME".
func (s *Source) Name() string { return "tank:" + s.cfg.Name }

// Discover reads the API once, so an unreachable tank, refused credentials
// or an answer in an unexpected format show when the collector starts.
func (s *Source) Discover(ctx context.Context) error {
	p, err := s.read(ctx, time.Now())
	if err != nil {
		return err
	}
	d := fmt.Sprintf("%s %s %s", s.cfg.Name, s.cfg.Vendor, redacted(s.cfg.URL))
	var notes []string
	if v, ok := p.Field(schema.FieldMode); ok {
		notes = append(notes, "mode "+v.StringV())
	}
	if v, ok := p.Field(schema.FieldDemo); ok && v.BoolV() {
		notes = append(notes, "DEMO MODE")
	}
	if v, ok := p.Float(schema.FieldSetpointC); ok {
		notes = append(notes, fmt.Sprintf("setpoint %g °C", v))
	}
	notes = append(notes, fmt.Sprintf("%d fields", len(p.Fields)))
	d += " (" + strings.Join(notes, ", ") + ")"
	s.mu.Lock()
	s.desc = d
	s.mu.Unlock()
	return nil
}

// Describe lists the tank and what its API showed at discovery.
func (s *Source) Describe() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.desc == "" {
		return []string{fmt.Sprintf("%s %s %s", s.cfg.Name, s.cfg.Vendor, redacted(s.cfg.URL))}
	}
	return []string{s.desc}
}

// Sample reads the API once and appends one tank point.
func (s *Source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	p, err := s.read(ctx, t)
	if err != nil {
		return buf, err
	}
	return append(buf, p), nil
}

// Close drops the kept-alive connection.
func (s *Source) Close() error {
	s.client.CloseIdleConnections()
	return nil
}

func (s *Source) read(ctx context.Context, t time.Time) (point.Point, error) {
	body, err := s.fetch(ctx)
	if err != nil {
		return point.Point{}, fmt.Errorf("tank %s: %w", s.cfg.Name, err)
	}
	p := point.New(schema.Tank, t)
	p.AddTag(schema.TagTank, s.cfg.Name)
	p.AddTag(schema.TagVendor, s.cfg.Vendor)
	if err := s.decode(body, &p); err != nil {
		return point.Point{}, fmt.Errorf("tank %s: answer of %s: %w", s.cfg.Name, redacted(s.cfg.URL), err)
	}
	return p, nil
}

// fetch GETs the API under the configured timeout and size limit.
func (s *Source) fetch(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", redacted(s.cfg.URL), err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "heatsink")
	for k, v := range s.cfg.Headers {
		req.Header.Set(k, v.Reveal())
	}
	if b := s.cfg.BasicAuth; b != nil {
		req.SetBasicAuth(b.Username, b.Password.Reveal())
	}
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, s.explain(ctx, start, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return nil, fmt.Errorf("GET %s: HTTP %s: %q", redacted(s.cfg.URL), resp.Status, strings.TrimSpace(string(snippet)))
	}
	max := s.cfg.MaxBodyBytes
	if resp.ContentLength > max {
		return nil, fmt.Errorf("GET %s: answer of %d bytes is over the %d-byte limit (max_body_bytes)", redacted(s.cfg.URL), resp.ContentLength, max)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", s.explain(ctx, start, err))
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("GET %s: answer is over the %d-byte limit (max_body_bytes)", redacted(s.cfg.URL), max)
	}
	return body, nil
}

func (s *Source) explain(ctx context.Context, start time.Time, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("GET %s: no complete answer after %v (timeout %v): %w", redacted(s.cfg.URL),
			time.Since(start).Round(time.Millisecond), s.cfg.Timeout, context.DeadlineExceeded)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("GET %s: %w", redacted(s.cfg.URL), err)
}

// redacted hides any password a URL might hold (Validate refuses them, but
// a URL is shown in errors and Describe, so never take the chance).
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<bad url>"
	}
	return u.Redacted()
}
