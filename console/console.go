// Package console writes heatsink's log for the person at the terminal:
// a short time, the protocol phase as a column and the message in words
// (`19:00:37 load      repeat dgemm for 1m30s`), while JSON and logfmt
// keep the machine formats for files and log shippers.
package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Format is how log records are written.
type Format string

// The formats --log-format takes. Auto is Human on a terminal, else Logfmt.
const (
	Auto   Format = "auto"
	Human  Format = "human"
	JSON   Format = "json"
	Logfmt Format = "logfmt"
)

// Formats lists the formats, for flag help and errors.
func Formats() []string { return []string{string(Auto), string(Human), string(JSON), string(Logfmt)} }

// ParseFormat reads a --log-format value.
func ParseFormat(s string) (Format, error) {
	if slices.Contains(Formats(), s) {
		return Format(s), nil
	}
	return "", fmt.Errorf("log format %q: want one of %s", s, strings.Join(Formats(), ", "))
}

// Levels lists the log levels, for flag help and errors.
func Levels() []string { return []string{"debug", "info", "warn", "error"} }

// ParseLevel reads a --log-level value.
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if !slices.Contains(Levels(), strings.ToLower(s)) || l.UnmarshalText([]byte(s)) != nil {
		return 0, fmt.Errorf("log level %q: want one of %s", s, strings.Join(Levels(), ", "))
	}
	return l, nil
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// NewHandler returns the handler for format writing to w; Auto picks Human
// when w is a terminal.
func NewHandler(w io.Writer, format Format, level slog.Leveler) slog.Handler {
	opts := &slog.HandlerOptions{Level: level}
	if format == Auto {
		format = Logfmt
		if f, ok := w.(*os.File); ok && IsTerminal(f) {
			format = Human
		}
	}
	switch format {
	case JSON:
		return slog.NewJSONHandler(w, opts)
	case Human:
		return &humanHandler{w: w, level: level, mu: &sync.Mutex{}}
	}
	return slog.NewTextHandler(w, opts)
}

// humanHandler writes one line per record: time, phase column, message,
// then the remaining attributes, words before key=value pairs.
type humanHandler struct {
	w     io.Writer
	level slog.Leveler
	mu    *sync.Mutex
	attrs []slog.Attr
	group string
}

func (h *humanHandler) Enabled(_ context.Context, l slog.Level) bool {
	min := slog.LevelInfo
	if h.level != nil {
		min = h.level.Level()
	}
	return l >= min
}

func (h *humanHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(slices.Clip(h.attrs), h.qualify(as)...)
	return &c
}

func (h *humanHandler) WithGroup(name string) slog.Handler {
	c := *h
	if c.group != "" {
		name = c.group + "." + name
	}
	c.group = name
	return &c
}

func (h *humanHandler) qualify(as []slog.Attr) []slog.Attr {
	if h.group == "" {
		return as
	}
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = slog.Attr{Key: h.group + "." + a.Key, Value: a.Value}
	}
	return out
}

// words are attributes whose value is a sentence: printed as it is,
// without its key.
var words = map[string]bool{"plan": true, "result": true, "reason": true, "why": true, "message": true}

// phaseWidth fits the longest phase name, wait_nominal.
const phaseWidth = 12

func (h *humanHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, h.qualify([]slog.Attr{a})...)
		return true
	})
	var b strings.Builder
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	b.WriteString(t.Format("15:04:05 "))
	phase := ""
	for i, a := range attrs {
		if a.Key == "phase" {
			phase = a.Value.String()
			attrs = slices.Delete(attrs, i, i+1)
			break
		}
	}
	fmt.Fprintf(&b, "%-*s", phaseWidth, phase)
	if r.Level >= slog.LevelWarn {
		b.WriteString(strings.ToUpper(r.Level.String()) + ": ")
	}
	switch r.Message {
	case "phase start":
		// The phase column already says which; the plan says the rest.
	case "phase end":
		b.WriteString("done: ")
	default:
		b.WriteString(r.Message)
		if len(attrs) > 0 {
			b.WriteString(": ")
		}
	}
	var sentences, pairs []string
	for _, a := range attrs {
		v := a.Value.Resolve()
		if words[a.Key] {
			sentences = append(sentences, v.String())
			continue
		}
		pairs = append(pairs, a.Key+"="+quote(v))
	}
	b.WriteString(strings.Join(append(pairs, sentences...), " "))
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

// quote leaves a value bare unless it holds a space or a quote.
func quote(v slog.Value) string {
	s := v.String()
	if v.Kind() == slog.KindDuration {
		s = v.Duration().String()
	}
	if s == "" || strings.ContainsAny(s, " \t\"=") {
		q, _ := json.Marshal(s)
		return string(q)
	}
	return s
}
