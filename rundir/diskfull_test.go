package rundir

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/internal/smalldisk"
	"github.com/heatsink-hpc/heatsink/point"
)

// A run directory on a disk that fills up (a real tmpfs, ENOSPC) keeps
// recording once space returns: points written meanwhile are kept and
// written then, unless more than MaxPending waited, and the gap is an
// event in points.lp and in Gaps.
func TestWriterRecoversAfterTheDiskWasFull(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxPending int
		wantLost   bool
	}{
		{"everything kept in memory", 16 << 20, false},
		{"memory cap reached: the oldest dropped and counted", 600, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			disk := smalldisk.Mount(t, 1<<20)
			dir := filepath.Join(disk, "run")
			w, err := Create(dir)
			if err != nil {
				t.Fatal(err)
			}
			w.SyncEvery, w.MaxPending = 0, tc.maxPending
			t0 := time.Unix(1_700_000_000, 0)
			tick := 0
			write := func(n int) (failed int) {
				for range n {
					p := point.New("gpu", t0.Add(time.Duration(tick)*time.Second))
					p.AddTag("gpu", "0").AddFloat("temp_c", float64(tick))
					if w.Write([]point.Point{p}) != nil {
						failed++
					}
					tick++
				}
				return failed
			}
			write(10)
			free := smalldisk.Fill(t, disk)
			if write(300) == 0 {
				t.Fatal("no write failed on the full disk")
			}
			free()
			if f := write(10); f != 0 {
				t.Fatalf("%d writes failed after space returned", f)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			gaps := w.Gaps()
			if len(gaps) != 1 || gaps[0].To.Before(gaps[0].From) || (gaps[0].LostPoints > 0) != tc.wantLost {
				t.Fatalf("gaps %+v", gaps)
			}
			var temps, events int
			err = ForEachPoint(dir, func(p *point.Point) error {
				switch p.Measurement {
				case "gpu":
					temps++
				case "event":
					if p.Tag("kind") == GapEventKind {
						events++
					}
				}
				return nil
			}, func(le *point.LineError) { t.Errorf("bad line in points.lp: %v", le) })
			if err != nil {
				t.Fatal(err)
			}
			if temps+gaps[0].LostPoints != tick || events != 1 {
				t.Errorf("%d readings + %d lost, want the %d written; %d gap events, want 1", temps, gaps[0].LostPoints, tick, events)
			}
		})
	}
}
