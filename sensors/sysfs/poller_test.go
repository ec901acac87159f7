package sysfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// dev is a device of the test class: a directory with a value file kept
// open between samples.
type dev struct {
	dir string
	val *Attr
}

func (d *dev) Dir() string    { return d.dir }
func (d *dev) String() string { return "test " + filepath.Base(d.dir) }
func (d *dev) Close()         { d.val.Close() }

// testSource lists <root>/class/test/devN and reads each one's value.
type testSource struct {
	*Poller[*dev]
	root        string
	discoveries int
	refreshes   []bool
}

func newTestSource(t *testing.T, rediscover bool, devs ...string) *testSource {
	t.Helper()
	s := &testSource{root: t.TempDir()}
	for _, d := range devs {
		s.add(t, d, "1")
	}
	s.Poller = NewPoller(PollerConfig[*dev]{Name: "test", Discover: s.discover, Read: s.read, Refresh: 3, Rediscover: rediscover})
	return s
}

func (s *testSource) add(t *testing.T, name, value string) {
	t.Helper()
	dir := filepath.Join(s.root, "class", "test", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "value"), []byte(value+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

var devName = regexp.MustCompile(`^dev[0-9]+$`)

func (s *testSource) discover() ([]*dev, error) {
	s.discoveries++
	dir, names, err := ReadClass(s.root, "test", devName)
	if err != nil {
		return nil, err
	}
	var out []*dev
	for _, n := range names {
		out = append(out, &dev{dir: filepath.Join(dir, n), val: NewAttr(filepath.Join(dir, n, "value"))})
	}
	s.SetDescription(names)
	if len(out) == 0 {
		return nil, errors.New("no test devices")
	}
	return out, nil
}

func (s *testSource) read(_ context.Context, d *dev, r *Reading) {
	s.refreshes = append(s.refreshes, r.Refresh)
	v, err := d.val.ReadInt()
	if err != nil {
		r.FailRead(err)
		return
	}
	p := point.Point{Measurement: "test", Time: r.Time}
	p.AddInt("value", v)
	r.Points = append(r.Points, p)
}

var at = time.Unix(1000, 0)

func TestPollerSamplesEveryDeviceAndRefreshesEveryN(t *testing.T) {
	s := newTestSource(t, true, "dev0", "dev1", "other")
	ctx := context.Background()
	if err := s.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	if got := s.Describe(); strings.Join(got, ",") != "dev0,dev1" || s.Name() != "test" {
		t.Fatalf("describe %q, name %q", got, s.Name())
	}
	for range 4 {
		pts, err := s.Sample(ctx, at, nil)
		if err != nil || len(pts) != 2 {
			t.Fatalf("%d points, %v", len(pts), err)
		}
	}
	want := []bool{true, true, false, false, false, false, true, true}
	if len(s.refreshes) != len(want) {
		t.Fatalf("refreshes %v", s.refreshes)
	}
	for i := range want {
		if s.refreshes[i] != want[i] {
			t.Fatalf("refreshes %v, want %v", s.refreshes, want)
		}
	}
}

func TestPollerRediscoversAfterADeviceVanishes(t *testing.T) {
	s := newTestSource(t, true, "dev0", "dev1")
	ctx := context.Background()
	if err := s.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(s.root, "class", "test", "dev1"))
	s.add(t, "dev2", "7")
	pts, err := s.Sample(ctx, at, nil)
	if len(pts) != 1 || err == nil || !strings.Contains(err.Error(), "test dev1 vanished: stat ") {
		t.Fatalf("vanished: %d points, %v", len(pts), err)
	}
	pts, err = s.Sample(ctx, at, nil)
	if err != nil || len(pts) != 2 || s.discoveries != 2 {
		t.Fatalf("after rediscovery: %d points, %v, %d discoveries", len(pts), err, s.discoveries)
	}
	if v, _ := pts[1].Float("value"); v != 7 {
		t.Errorf("dev2 read %v", v)
	}
}

func TestPollerWithoutRediscoverKeepsReportingTheVanishedDevice(t *testing.T) {
	s := newTestSource(t, false, "dev0", "dev1")
	ctx := context.Background()
	if err := s.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(s.root, "class", "test", "dev1"))
	for range 2 {
		if pts, err := s.Sample(ctx, at, nil); len(pts) != 1 || err == nil {
			t.Fatalf("%d points, %v", len(pts), err)
		}
	}
	if s.discoveries != 1 {
		t.Errorf("%d discoveries, want 1", s.discoveries)
	}
}

func TestPollerRescansOnItsInterval(t *testing.T) {
	s := newTestSource(t, true, "dev0")
	ctx := context.Background()
	if err := s.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	s.add(t, "dev1", "2")
	if pts, _ := s.Sample(ctx, at, nil); len(pts) != 1 {
		t.Fatalf("no interval: %d points", len(pts))
	}
	s.SetRescanEvery(time.Nanosecond)
	if pts, err := s.Sample(ctx, at, nil); len(pts) != 2 || err != nil {
		t.Fatalf("with an interval: %d points, %v", len(pts), err)
	}
}

func TestPollerReturnsAFailedRediscovery(t *testing.T) {
	s := newTestSource(t, true, "dev0")
	ctx := context.Background()
	if err := s.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(s.root, "class"))
	s.Sample(ctx, at, nil)
	pts, err := s.Sample(ctx, at, []point.Point{{Measurement: "kept"}})
	if len(pts) != 1 || err == nil || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("rediscovery without the class: %v, %v", pts, err)
	}
}

func TestPollerStopsAtTheEndOfTheContext(t *testing.T) {
	s := newTestSource(t, true, "dev0", "dev1")
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	pts, err := s.Sample(ctx, at, nil)
	if len(pts) != 0 || !errors.Is(err, context.Canceled) || strings.Count(err.Error(), "canceled") != 1 {
		t.Fatalf("cancelled: %d points, %v", len(pts), err)
	}
}

// TestPollerCloseDoesNotWaitForASampleInFlight: a hung driver must not hold
// the process's shutdown.
func TestPollerCloseDoesNotWaitForASampleInFlight(t *testing.T) {
	s := newTestSource(t, true, "dev0")
	if err := s.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.sampling.Lock() // a sample in flight
	done := make(chan error)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for the sample")
	}
	s.sampling.Unlock()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReadClassSaysWhatIsMissing(t *testing.T) {
	_, _, err := ReadClass(t.TempDir(), "hwmon", devName)
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "no hwmon class at ") {
		t.Errorf("no class: %v", err)
	}
}
