package rundir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

func samplePoints(n int, t0 time.Time) []point.Point {
	var pts []point.Point
	for i := range n {
		p := point.New("gpu", t0.Add(time.Duration(i)*time.Second))
		p.AddTag("gpu", "0").AddFloat("temp_c", 35+float64(i))
		pts = append(pts, p)
	}
	return pts
}

func TestWriterAppendsAndReopeningKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(1_700_000_000, 0)
	w, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(samplePoints(3, t0)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(samplePoints(2, t0.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := WriteMeta(dir, &Meta{ID: "r1", Host: "h", Start: t0,
		Phases: []Phase{{Name: "baseline", Start: t0}}}); err != nil {
		t.Fatal(err)
	}
	run, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Points) != 5 || len(run.BadLines) != 0 {
		t.Fatalf("%d points, %d bad lines; want 5, 0", len(run.Points), len(run.BadLines))
	}
	if v, _ := run.Points[4].Float("temp_c"); v != 36 {
		t.Errorf("last temp_c = %v, want 36", v)
	}
	if _, ok := run.Meta.PhaseNamed("baseline"); !ok || run.Meta.Schema != SchemaVersion {
		t.Errorf("meta %+v", run.Meta)
	}
}

func TestTornLastLineAfterCrashIsReportedNotFatal(t *testing.T) {
	dir := t.TempDir()
	w, _ := Create(dir)
	w.Write(samplePoints(4, time.Unix(1_700_000_000, 0)))
	w.Close()
	path := filepath.Join(dir, PointsFile)
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)-15], 0o644) // a crash mid-write
	WriteMeta(dir, &Meta{ID: "r"})
	run, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Points) != 3 || len(run.BadLines) != 1 || run.BadLines[0].Line != 4 {
		t.Fatalf("got %d points, bad lines %v", len(run.Points), run.BadLines)
	}
}

// What Write returned is in the file, not in a buffer a kill -9 would
// lose; only the fsync waits for SyncEvery (or Flush).
func TestWriteReachesTheFileBeforeItReturns(t *testing.T) {
	dir := t.TempDir()
	w, _ := Create(dir)
	defer w.Close()
	w.SyncEvery = time.Hour
	w.Write(samplePoints(2, time.Unix(1_700_000_000, 0)))
	if b, _ := os.ReadFile(filepath.Join(dir, PointsFile)); bytes.Count(b, []byte{'\n'}) != 2 {
		t.Fatalf("points.lp holds %q after Write, want both points", b)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, MetaFile), []byte(`{"schema": 99}`), 0o644)
	if _, err := ReadMeta(dir); err == nil {
		t.Fatal("schema 99 accepted")
	}
}

func TestCheckNewRefusesADirectoryThatHoldsPoints(t *testing.T) {
	dir := t.TempDir()
	if err := CheckNew(filepath.Join(dir, "absent")); err != nil {
		t.Errorf("absent directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, PointsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckNew(dir); err != nil {
		t.Errorf("empty points.lp: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, PointsFile), []byte("m f=1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := CheckNew(dir)
	if !errors.Is(err, ErrRunExists) || err.Error() != dir+" already holds a run (points.lp)" {
		t.Errorf("points.lp with a point: %v", err)
	}
	// An archived run (gzip points.lp) holds a run too.
	gz := t.TempDir()
	if err := os.WriteFile(filepath.Join(gz, PointsGzFile), []byte{0x1f, 0x8b}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckNew(gz); !errors.Is(err, ErrRunExists) || !strings.Contains(err.Error(), "(points.lp.gz)") {
		t.Errorf("points.lp.gz: %v", err)
	}
}
