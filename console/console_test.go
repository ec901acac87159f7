package console

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

func TestHumanLogReadsLikeATool(t *testing.T) {
	at := time.Date(2026, 11, 24, 19, 0, 37, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		level slog.Level
		msg   string
		attrs []any
		want  string
	}{
		{"phase start", slog.LevelInfo, "phase start", []any{"phase", "load", "plan", "repeat dgemm for 1m30s"},
			"19:00:37 load        repeat dgemm for 1m30s\n"},
		{"phase end", slog.LevelInfo, "phase end", []any{"phase", "cooldown", "result", "recorded 2m0s"},
			"19:00:37 cooldown    done: recorded 2m0s\n"},
		{"pairs before words", slog.LevelInfo, "sources unavailable", []any{"sources", "hwmon, nvml", "why", "not on this machine"},
			"19:00:37             sources unavailable: sources=\"hwmon, nvml\" not on this machine\n"},
		{"warning", slog.LevelWarn, "source error", []any{"source", "pdu", "err", "timeout"},
			"19:00:37             WARN: source error: source=pdu err=timeout\n"},
		{"durations", slog.LevelInfo, "dgemm", []any{"n", 896, "took", 1500 * time.Millisecond},
			"19:00:37             dgemm: n=896 took=1.5s\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			h := NewHandler(&b, Human, slog.LevelInfo)
			r := slog.NewRecord(at, tc.level, tc.msg, 0)
			r.Add(tc.attrs...)
			if err := h.Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got  %q\nwant %q", b.String(), tc.want)
			}
		})
	}
}

func TestHandlerAttrsAndLevels(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(NewHandler(&b, Human, slog.LevelWarn)).With("source", "tank")
	log.Info("hidden")
	log.Warn("slow", "latency", "2s")
	if got := b.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "WARN: slow: source=tank latency=2s") {
		t.Errorf("%q", got)
	}
}

// Not a terminal (a file, a pipe): auto is logfmt, which tools parse.
func TestAutoIsLogfmtOffATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	slog.New(NewHandler(f, Auto, slog.LevelInfo)).Info("phase start", "phase", "load")
	b, _ := os.ReadFile(f.Name())
	if !strings.Contains(string(b), `level=INFO msg="phase start" phase=load`) {
		t.Errorf("%q", b)
	}
	var j bytes.Buffer
	slog.New(NewHandler(&j, JSON, slog.LevelInfo)).Info("phase start", "phase", "load")
	if !strings.Contains(j.String(), `"msg":"phase start","phase":"load"`) {
		t.Errorf("%q", j.String())
	}
}

func TestParseLevelAndFormatListTheirValues(t *testing.T) {
	if l, err := ParseLevel("warn"); err != nil || l != slog.LevelWarn {
		t.Errorf("warn: %v %v", l, err)
	}
	if _, err := ParseLevel("verbose"); err == nil || !strings.Contains(err.Error(), "debug, info, warn, error") {
		t.Errorf("verbose: %v", err)
	}
	if _, err := ParseLevel("info+2"); err == nil {
		t.Error("info+2 accepted")
	}
	if _, err := ParseFormat("text"); err == nil || !strings.Contains(err.Error(), "auto, human, json, logfmt") {
		t.Errorf("text: %v", err)
	}
}
