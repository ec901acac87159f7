package hwmon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/filter"
	"github.com/heatsink-hpc/heatsink/sensors/fixture"
)

// One hwmon attribute whose read blocks (a driver stuck on its I2C bus)
// must cost only its own reading: the reliability review lost all 61
// readings of 3 chips for as long as one blocked. A FIFO without a writer
// stands in for the driver: open(2) blocks on it until a writer comes, as
// read(2) blocks in a stuck driver, and nothing can interrupt either.
func TestABlockingAttributeCostsOnlyItsOwnReading(t *testing.T) {
	sys := fixture.CopySys(t, "intel-node")
	fifo := filepath.Join(sys, "devices/platform/coretemp.0/hwmon/hwmon1/temp3_input")
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	s := discover(t, sys, filter.Spec{})
	const deadline = 200 * time.Millisecond
	sample := func() ([]point.Point, error, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		t0 := time.Now()
		type result struct {
			pts []point.Point
			err error
		}
		done := make(chan result, 1)
		go func() {
			pts, err := s.Sample(ctx, stamp, nil)
			done <- result{pts, err}
		}()
		select {
		case r := <-done:
			return r.pts, r.err, time.Since(t0)
		case <-time.After(5 * time.Second):
			t.Fatal("the sample has not returned after 5 s: one blocked attribute holds up the whole source")
			return nil, nil, 0
		}
	}
	isStuck := func(p point.Point) bool {
		return p.Tag("chip") == "platform_coretemp_0" && p.Tag("sensor") == "temp3"
	}

	// Five ticks with the attribute stuck, and a rediscovery among them
	// (every minute, or after a chip vanished): every other reading each
	// tick, and still one read stuck, never one more a tick. While it
	// stays stuck the error says the same each tick, so that the
	// collector, which logs an error when it changes, logs it once.
	var stuckErrs []string
	for tick := range 5 {
		if tick == 3 {
			if err := s.Discover(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		pts, err, took := sample()
		if took >= deadline {
			t.Fatalf("tick %d: the sample took %v, past its %v deadline: the blocked read held up the whole source", tick, took, deadline)
		}
		if len(pts) != 14 {
			t.Fatalf("tick %d: %d readings of the fixture's 15 with one blocked; want the 14 others", tick, len(pts))
		}
		for _, p := range pts {
			if isStuck(p) {
				t.Fatalf("tick %d: a reading of the blocked attribute: %v", tick, p)
			}
		}
		if err == nil || !strings.Contains(err.Error(), "platform_coretemp_0 temp3: stalled") {
			t.Errorf("tick %d: error %v; want the blocked channel named as stalled", tick, err)
		}
		if n := s.Stalled(); n != 1 {
			t.Errorf("tick %d: %d reads stuck; want 1, the first, never a second read of the same attribute", tick, n)
		}
		if tick > 0 && err != nil {
			stuckErrs = append(stuckErrs, err.Error())
		}
	}
	for _, e := range stuckErrs[1:] {
		if e != stuckErrs[0] {
			t.Errorf("the error of a read still stuck changed from one tick to the next:\n%s\n%s", stuckErrs[0], e)
			break
		}
	}

	// The driver answers again: a writer serves every open of the FIFO.
	stop := make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			_, err = f.WriteString("51000\n")
			f.Close()
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		// Unblock the writer's open, which waits for a reader.
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-served
			f.Close()
		}
	})
	var back bool
	for tick := 0; tick < 10 && !back; tick++ {
		pts, err, _ := sample()
		for _, p := range pts {
			if v, _ := p.Float("temp_c"); isStuck(p) && v == 51 {
				back = len(pts) == 15 && err == nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !back {
		t.Fatal("the attribute answers again, but its reading did not come back with the 14 others and no error within 10 samples")
	}
	if n := s.Stalled(); n != 0 {
		t.Errorf("%d reads still counted stuck after the attribute answered", n)
	}
}

// A sample's deadline bounds it even when every read is slow: what was
// not read in time is reported as such, not waited for.
func TestASampleOutOfTimeSaysWhatItDidNotRead(t *testing.T) {
	s := discover(t, fixture.Sys("intel-node"), filter.Spec{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pts, err := s.Sample(ctx, stamp, nil)
	if len(pts) != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("a sample whose context is over gave %d points and %v", len(pts), err)
	}
}

// BenchmarkHwmonSampleWithABlockedAttribute is a sample of the 2-socket
// node while one coretemp attribute's read is stuck: the stuck channel is
// skipped, not waited for, so the sample costs what a healthy one does.
func BenchmarkHwmonSampleWithABlockedAttribute(b *testing.B) {
	sys := fixture.CopySys(b, "bench-node")
	fifo := filepath.Join(sys, "class/hwmon/hwmon0/temp3_input")
	if real, err := filepath.EvalSymlinks(fifo); err == nil {
		fifo = real
	}
	if err := os.Remove(fifo); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		b.Fatal(err)
	}
	s := New(sys, filter.Filter{})
	b.Cleanup(func() {
		// Release the stuck open: a writer that comes and goes.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	if err := s.Discover(context.Background()); err != nil {
		b.Fatal(err)
	}
	s.Sample(context.Background(), stamp, nil) // the read gets stuck here, once
	var buf []point.Point
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = s.Sample(context.Background(), stamp, buf[:0])
	}
	if s.Stalled() != 1 {
		b.Fatalf("%d reads stuck, want 1", s.Stalled())
	}
	b.ReportMetric(float64(len(buf)), "points/op")
}
