package influx

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/collectors/spool"
	"github.com/heatsink-hpc/heatsink/point"
)

func TestDestinationsAreNormalised(t *testing.T) {
	tests := []struct {
		a, b Config
		same bool
	}{
		{Config{URL: "http://DB.example:8086/", Bucket: "x"}, Config{URL: "http://db.example:8086", Bucket: "x"}, true},
		{Config{URL: "http://db", Bucket: "x"}, Config{URL: "http://db:80", Bucket: "x"}, true},
		{Config{URL: "https://db", Bucket: "x"}, Config{URL: "https://db:443/", Bucket: "x"}, true},
		{Config{URL: "http://db:8086", Bucket: "heatsink/"}, Config{URL: "http://db:8086", Bucket: "heatsink"}, true},
		{Config{URL: "http://db:8086", Bucket: "heatsink"}, Config{URL: "http://db:8086", Bucket: "heatsink/autogen"}, false},
		{Config{URL: "http://db:8086", Bucket: "x"}, Config{URL: "http://db:8087", Bucket: "x"}, false},
		{Config{URL: "http://db:8086", Bucket: "x"}, Config{URL: "https://db:8086", Bucket: "x"}, false},
		{Config{URL: "http://db:8086", Org: "a", Bucket: "x"}, Config{URL: "http://db:8086", Org: "b", Bucket: "x"}, false},
		{Config{URL: "http://db:8086/proxy/a", Bucket: "x"}, Config{URL: "http://db:8086/proxy/b", Bucket: "x"}, false},
	}
	for _, tt := range tests {
		da, err := SpoolDirOf(tt.a)
		if err != nil {
			t.Fatal(err)
		}
		db, err := SpoolDirOf(tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if (da == db) != tt.same {
			t.Errorf("%+v and %+v: spools %s and %s, want the same: %v", tt.a, tt.b, da, db, tt.same)
		}
	}
}

// The report, rebuilt: points one process left in the spool root
// for another destination, and points an older heatsink left in the root
// itself, never reach a fresh database; the operator's command sends the
// latter, and only then do they land.
func TestSpoolOfAnotherDestinationNeverReachesThisOne(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t)
	root := t.TempDir()
	ptsAt := func(host string, n int) []point.Point {
		var pts []point.Point
		for i := range n {
			p := point.New("cpu", time.Unix(1700000000, int64(i)))
			p.AddTag("host", host).AddFloat("usage_pct", float64(i))
			pts = append(pts, p)
		}
		return pts
	}

	// Another process's fixture run, for a server that is not there.
	other := Options{Config: Config{URL: "http://" + closedPort(t), Bucket: influxtest.Bucket, SpoolDir: root},
		Logger: quietLogger(t), DrainTimeout: 100 * time.Millisecond}
	first, err := New(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Write(ptsAt("fixture", 300)); err != nil {
		t.Fatal(err)
	}
	first.Close()
	// An older heatsink's machine-wide spool in the root itself.
	old, err := spool.Open(root, spool.Options{Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var enc point.Encoder
	for _, p := range ptsAt("older", 50) {
		enc.Encode(&p)
	}
	if err := old.Append(enc.Bytes(), 50); err != nil {
		t.Fatal(err)
	}
	old.Close()

	// The README's first collect on a fresh database.
	var logBuf syncBuffer
	o := testOptions(t, srv)
	o.SpoolDir = root
	o.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	sink, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	mine := ptsAt("fresh", 10)
	if err := sink.Write(mine); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	assertLanded(t, srv, mine)
	log := logBuf.String()
	if want := "heatsink spool send " + root + " --to URL --bucket BUCKET"; !strings.Contains(log, want) || !strings.Contains(log, "points=50") {
		t.Errorf("log does not say where the older spool's 50 points are and how to send them (%q):\n%s", want, log)
	}
	infos, err := spool.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]int64{}
	for _, in := range infos {
		left[in.Destination] = in.UnsentPoints
	}
	dest, _ := DestinationOf(other.Config)
	if left[dest.String()] != 300 || left[""] != 50 {
		t.Errorf("spools left %v, want 300 for %s and 50 for no destination", left, dest)
	}

	rep, err := SendSpool(context.Background(), root, o.Config, quietLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.SentPoints != 50 || rep.LeftPoints != 0 || rep.Recorded != "" {
		t.Errorf("spool send: %+v, want 50 sent, none left, no recorded destination", rep)
	}
	assertLanded(t, srv, append(ptsAt("older", 50), mine...))
}

// syncBuffer is a bytes.Buffer a logger may write from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A spool directory whose record names another destination is refused,
// naming both, even when reached through its own path.
func TestSinkRefusesASpoolOfAnotherDestination(t *testing.T) {
	root := t.TempDir()
	a := Config{URL: "http://" + closedPort(t), Bucket: "a", SpoolDir: root}
	dirA, _ := SpoolDirOf(a)
	b := a
	b.Bucket = "b"
	dirB, _ := SpoolDirOf(b)
	if err := spoolWithDestination(dirB, a); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{Config: b, Logger: quietLogger(t)})
	if err == nil || !strings.Contains(err.Error(), `bucket "a"`) || !strings.Contains(err.Error(), `bucket "b"`) {
		t.Fatalf("a sink for bucket b on a spool of bucket a: %v, want an error naming both", err)
	}
	if dirA == dirB || filepath.Dir(dirA) != root {
		t.Errorf("spools %s and %s: want two subdirectories of %s", dirA, dirB, root)
	}
}

func spoolWithDestination(dir string, c Config) error {
	d, err := DestinationOf(c)
	if err != nil {
		return err
	}
	s, err := spool.Open(dir, spool.Options{Destination: d.String()})
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	return s.Close()
}
