package probesink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// The lock is what makes the sink exclusive: a second sink on the file
// fails until the first closes, and each line carries its sink's tag.
func TestSecondSinkOnAFileWaitsForTheFirstToClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.lp")
	p := point.New("m", time.Unix(1, 0))
	p.AddFloat("v", 1)
	first, err := Open(path, "a")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		run     func() error
		wantErr string
	}{
		{"write", func() error { return first.Write([]point.Point{p}) }, ""},
		{"second open while the first holds the lock", func() error { _, err := Open(path, "b"); return err }, "another sink has it open"},
		{"close", first.Close, ""},
		{"second open once it closed", func() error {
			s, err := Open(path, "b")
			if err != nil {
				return err
			}
			defer s.Close()
			return s.Write([]point.Point{p})
		}, ""},
		{"write after close", func() error { return first.Write([]point.Point{p}) }, "write after close"},
	}
	for _, tt := range tests {
		err := tt.run()
		if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: err %v, want %q", tt.name, err, tt.wantErr)
		}
	}
	b, _ := os.ReadFile(path)
	if got := string(b); got != "a m v=1 1000000000\nb m v=1 1000000000\n" {
		t.Errorf("file holds %q", got)
	}
	if h := first.Health(); !h.OK || h.SentPointsTotal != 1 {
		t.Errorf("health %+v", h)
	}
}
