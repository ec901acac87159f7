package workloads_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/workloads"
)

// The hold's pause (Throttle) and the guard's (Pause/Resume) are kept apart
// on a real process group: neither lets the job run while the other holds
// it.
func TestThrottleAndTheGuardNeverResumeEachOther(t *testing.T) {
	cmd, err := workloads.NewCommand([]string{"sh", "-c", `echo $$; exec sleep 300`})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	quiet := slog.New(slog.DiscardHandler)
	r, err := workloads.NewRunner(context.Background(), workloads.Options{
		Command: cmd, Stdout: pw, Logger: quiet, Protocol: workloads.Protocol{Load: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src := &gpu{}
	src.set(40)
	coll := collectors.New(collectors.Options{Interval: 100 * time.Millisecond, Host: "test", Logger: quiet},
		[]collectors.Source{src}, []collectors.Sink{r.Latest()})
	done := make(chan workloads.Outcome, 1)
	go func() { done <- r.Run(context.Background(), workloads.Recording{Collector: coll, RunID: "throttle"}) }()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatal("the job printed no pid")
	}
	pid := sc.Text()
	go io.Copy(io.Discard, pr)

	steps := []struct {
		what string
		do   func() error
		want byte // 'T' stopped, 'S' running (asleep)
	}{
		{"hold pauses", func() error { return r.Throttle(true) }, 'T'},
		{"guard pauses too", r.Pause, 'T'},
		{"hold lets go while the guard holds", func() error { return r.Throttle(false) }, 'T'},
		{"guard resumes", r.Resume, 'S'},
		{"guard pauses", r.Pause, 'T'},
		{"hold pauses too", func() error { return r.Throttle(true) }, 'T'},
		{"guard resumes while the hold holds", r.Resume, 'T'},
		{"hold lets go", func() error { return r.Throttle(false) }, 'S'},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		time.Sleep(100 * time.Millisecond)
		if got := procState(t, pid); got != s.want {
			t.Fatalf("%s: state %c, want %c", s.what, got, s.want)
		}
	}
	r.Stop()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the stop did not end the run")
	}
}
