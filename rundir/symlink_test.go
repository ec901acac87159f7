package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// plant makes link a symbolic link to a file outside the run directory and
// returns that file, which must stay as it was.
func plant(t *testing.T, link string) string {
	t.Helper()
	target := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(target, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return target
}

func untouched(t *testing.T, target string) {
	t.Helper()
	if b, err := os.ReadFile(target); err != nil || string(b) != "precious\n" {
		t.Errorf("symlink target written: %q, %v", b, err)
	}
}

// A run is often written as root: a symbolic link planted where a run file
// goes must be refused, never followed.
func TestCreateRefusesAPlantedPointsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := plant(t, filepath.Join(dir, PointsFile))
	w, err := Create(dir)
	if !errors.Is(err, ErrSymlink) {
		if w != nil {
			w.Close()
		}
		t.Fatalf("Create through a symlinked points.lp: %v, want ErrSymlink", err)
	}
	untouched(t, target)
}

func TestCreateRefusesASymlinkedRunDir(t *testing.T) {
	real := t.TempDir()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Symlink(real, dir); err != nil {
		t.Fatal(err)
	}
	w, err := Create(dir)
	if !errors.Is(err, ErrSymlink) {
		if w != nil {
			w.Close()
		}
		t.Fatalf("Create in a symlinked directory: %v, want ErrSymlink", err)
	}
	if err := WriteMeta(dir, &Meta{ID: "x"}); !errors.Is(err, ErrSymlink) {
		t.Errorf("WriteMeta in a symlinked directory: %v, want ErrSymlink", err)
	}
	if ents, _ := os.ReadDir(real); len(ents) != 0 {
		t.Errorf("written through the link: %v", ents)
	}
}

func TestWriteMetaRefusesAPlantedRunJSONSymlink(t *testing.T) {
	dir := t.TempDir()
	target := plant(t, filepath.Join(dir, MetaFile))
	if err := WriteMeta(dir, &Meta{ID: "x"}); !errors.Is(err, ErrSymlink) {
		t.Fatalf("WriteMeta over a symlinked run.json: %v, want ErrSymlink", err)
	}
	untouched(t, target)
}

func TestOpenInDirRefusesAPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	target := plant(t, filepath.Join(dir, "job.stdout"))
	f, err := OpenInDir(dir, "job.stdout", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if !errors.Is(err, ErrSymlink) {
		if f != nil {
			f.Write([]byte("x"))
			f.Close()
		}
		t.Fatalf("OpenInDir through a symlink: %v, want ErrSymlink", err)
	}
	untouched(t, target)
}
