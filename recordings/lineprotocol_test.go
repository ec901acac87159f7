package recordings

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// A timestamp that cannot be right (0, 1970, far future) costs its own
// line, reported with its number and why, and never the rest of the file:
// the precision is guessed only from a line whose time is plausible, so a
// bad first line cannot fix the whole file's precision wrong (issue 28).
func TestLineProtocolImplausibleTimestampLosesOnlyItsLine(t *testing.T) {
	const ns = "1709294400000000000"
	for _, tc := range []struct {
		name   string
		in     string
		prec   string // Options.Precision
		points int
		bad    []int
		why    string
		detect string // the precision detected
	}{
		{"zero first", "m f=1 0\nm f=2 " + ns + "\nm f=3 " + ns[:18] + "1\n", "", 2, []int{1}, "1970-01-01", "ns"},
		{"zero middle", "m f=1 " + ns + "\nm f=2 0\nm f=3 " + ns + "\n", "", 2, []int{2}, "1970-01-01", "ns"},
		{"tiny first, seconds after", "m f=1 12\nm f=2 1709294400\nm f=3 1709294401\n", "", 2, []int{1}, "1970-01-01", "s"},
		{"far future first", "m f=1 99999999999\nm f=2 1709294400000\n", "", 1, []int{1}, "overflows", "ms"},
		{"negative first", "m f=1 -5\nm f=2 1709294400000000\n", "", 1, []int{1}, "1969-12-31", "us"},
		{"all bad", "m f=1 0\nm f=2 1\n", "", 0, []int{1, 2}, "1970-01-01", ""},
		{"given precision keeps", "m f=1 0\nm f=2 1709294400\n", "s", 1, []int{1}, "1970-01-01", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pts []point.Point
			res, err := Read(strings.NewReader(tc.in), "x.lp", LineProtocol, Options{Host: "h", Precision: tc.prec}, func(p *point.Point) error {
				pts = append(pts, *p)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(pts) != tc.points {
				t.Errorf("%d points, want %d; bad: %v", len(pts), tc.points, res.Bad)
			}
			if !slices.Equal(badLines(res), tc.bad) {
				t.Errorf("bad lines %v, want %v", badLines(res), tc.bad)
			}
			for _, b := range res.Bad {
				if !strings.Contains(b.Error(), tc.why) || !strings.Contains(b.Error(), "timestamp") {
					t.Errorf("bad line says %q, want the timestamp and %q", b, tc.why)
				}
			}
			if res.Precision != tc.detect {
				t.Errorf("precision %q, want %q", res.Precision, tc.detect)
			}
			for _, p := range pts {
				if p.Time.Year() != 2024 {
					t.Errorf("point at %v, want 2024", p.Time)
				}
			}
		})
	}
}

func FuzzLineProtocol(f *testing.F) {
	for _, name := range []string{"seconds.lp"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("m f=1 0\nm f=2 1709294400000000000\n"))
	f.Add([]byte(fmt.Sprintf("nvidia_smi,index=0,pstate=P2 power_draw=70,memory_used=1e30 %d\n", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).Unix())))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkRead(t, b, LineProtocol, Options{Host: "h"})
	})
}
