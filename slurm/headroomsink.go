package slurm

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// HeadroomSink is a Headroom fed by the node agent's collector as a sink
// (sinks.slurm_headroom): every tick's points reach Observe, and a
// goroutine of its own judges them every Config.Every, so that scontrol
// never holds up a tick.
type HeadroomSink struct {
	h      *Headroom
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	last    HeadroomOutcome
	lastErr error
}

// StartHeadroom starts the judging goroutine; Close stops it.
func StartHeadroom(client Client, c HeadroomConfig, log *slog.Logger) (*HeadroomSink, error) {
	h, err := NewHeadroom(client, c)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &HeadroomSink{h: h, log: log, cancel: cancel, done: make(chan struct{})}
	go s.run(ctx)
	return s, nil
}

func (s *HeadroomSink) run(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.h.Config.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			out, err := s.h.Step(ctx, now)
			s.report(out, err)
		}
	}
}

// report logs what changed: a weight set, a node left alone, an error
// (once until it changes).
func (s *HeadroomSink) report(out HeadroomOutcome, err error) {
	s.mu.Lock()
	prev, prevErr := s.last, s.lastErr
	s.last, s.lastErr = out, err
	s.mu.Unlock()
	switch {
	case err != nil:
		if prevErr == nil || prevErr.Error() != err.Error() {
			s.log.Warn("slurm headroom", "node", s.h.Config.Node, "err", err)
		}
	case out.Action == "set":
		s.log.Info("slurm headroom: weight set", "node", s.h.Config.Node, "weight", out.Weight, "headroom_c", *out.HeadroomC, "gpu", out.GPU, "from", out.From)
	case out.Why != prev.Why && (out.Action == "left_alone" || out.Action == "not_judged"):
		s.log.Info("slurm headroom", "node", s.h.Config.Node, "action", out.Action, "why", out.Why)
	}
}

// Last returns the latest step's outcome and error, for /healthz.
func (s *HeadroomSink) Last() (HeadroomOutcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, s.lastErr
}

// Write hands the tick's points to the Headroom.
func (s *HeadroomSink) Write(points []point.Point) error {
	s.h.Observe(points)
	return nil
}

// Flush has nothing to make durable.
func (s *HeadroomSink) Flush() error { return nil }

// Close stops judging; the weight stays as it was last set.
func (s *HeadroomSink) Close() error {
	s.cancel()
	<-s.done
	return nil
}
