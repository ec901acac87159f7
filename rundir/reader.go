package rundir

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/heatsink-hpc/heatsink/point"
)

// Run is a run directory loaded into memory.
type Run struct {
	Dir    string
	Meta   *Meta
	Points []point.Point
	// BadLines are lines of points.lp that could not be decoded (a torn last
	// line after a crash, say); they are skipped, never fatal.
	BadLines []*point.LineError
}

// PointsGzFile is points.lp compressed, as a site archives a finished run
// (gzip points.lp): readers take it where points.lp is absent.
const PointsGzFile = PointsFile + ".gz"

// OpenPoints opens dir's points: points.lp, or where that is absent,
// points.lp.gz read through gzip. It returns the path it opened; the error
// wraps fs.ErrNotExist when dir has neither.
func OpenPoints(dir string) (io.ReadCloser, string, error) {
	path := filepath.Join(dir, PointsFile)
	f, err := os.Open(path)
	if !errors.Is(err, fs.ErrNotExist) {
		if err != nil {
			return nil, path, fmt.Errorf("read run points: %w", err)
		}
		return f, path, nil
	}
	gzPath := filepath.Join(dir, PointsGzFile)
	gf, gerr := os.Open(gzPath)
	if errors.Is(gerr, fs.ErrNotExist) {
		return nil, path, fmt.Errorf("read run points: %w", err)
	}
	if gerr != nil {
		return nil, gzPath, fmt.Errorf("read run points: %w", gerr)
	}
	z, err := gzip.NewReader(bufio.NewReaderSize(gf, 1<<20))
	if err != nil {
		gf.Close()
		return nil, gzPath, fmt.Errorf("read run points %s: %w", gzPath, err)
	}
	return &gzipFile{z, gf}, gzPath, nil
}

// gzipFile closes the decompressor and the file beneath it.
type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g *gzipFile) Close() error {
	return errors.Join(g.Reader.Close(), g.f.Close())
}

// ForEachPoint streams the points of dir's points.lp (or points.lp.gz) to
// fn without holding them all in memory. Bad lines go to bad (which may be
// nil).
func ForEachPoint(dir string, fn func(*point.Point) error, bad func(*point.LineError)) error {
	f, path, err := OpenPoints(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	r := point.NewReader(f, path)
	r.RequireNewline(true)
	for {
		p, lerr, ok := r.Next()
		if !ok {
			break
		}
		if lerr != nil {
			if bad != nil {
				bad(lerr)
			}
			continue
		}
		if err := fn(&p); err != nil {
			return err
		}
	}
	return r.Err()
}

// Load reads run.json and every point of dir.
func Load(dir string) (*Run, error) {
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	run := &Run{Dir: dir, Meta: m}
	err = ForEachPoint(dir, func(p *point.Point) error {
		run.Points = append(run.Points, *p)
		return nil
	}, func(e *point.LineError) { run.BadLines = append(run.BadLines, e) })
	if err != nil {
		return nil, err
	}
	return run, nil
}
