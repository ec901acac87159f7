package rundir

import (
	"fmt"
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

// ForEachPoint streams the points of dir's points.lp to fn without holding
// them all in memory. Bad lines go to bad (which may be nil).
func ForEachPoint(dir string, fn func(*point.Point) error, bad func(*point.LineError)) error {
	path := filepath.Join(dir, PointsFile)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read run points: %w", err)
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
