package probe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSampleReadsEveryProbeAndRefusesBadLines(t *testing.T) {
	tests := []struct {
		name, file, wantErr string
		want                int
	}{
		{"fixture", "testdata/temps", "", 2},
		{"bad value", writeTemp(t, "inlet warm\n"), `"warm" is not a temperature`, 0},
		{"three fields", writeTemp(t, "\ninlet 1 2\n"), ":2: want", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pts, err := New(tt.file).Sample(context.Background(), time.Unix(0, 0), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(pts) != tt.want {
				t.Fatalf("%d points, err %v", len(pts), err)
			}
			if v, _ := pts[1].Field("temp_c"); pts[1].Tag("probe") != "outlet" || v.FloatV() != 27.25 {
				t.Errorf("second point %s", pts[1])
			}
		})
	}
}

func TestMissingFileIsAbsentNotBroken(t *testing.T) {
	err := New(filepath.Join(t.TempDir(), "none")).Discover(context.Background())
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("err %v, want ErrUnsupported", err)
	}
}

// FuzzRead: any file is probes or an error naming the file.
func FuzzRead(f *testing.F) {
	f.Add([]byte("inlet 21.5\noutlet 27.25\n"))
	f.Add([]byte("x\n y 1e400\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "temps")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := read(path); err != nil && !strings.Contains(err.Error(), path) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

func writeTemp(t *testing.T, s string) string {
	path := filepath.Join(t.TempDir(), "temps")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
