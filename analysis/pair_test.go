package analysis

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/recordings"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// untar unpacks a .tar.gz of plain files and folders into dir.
func untar(t *testing.T, path, dir string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(out, 0o755)
		case tar.TypeReg:
			var w *os.File
			if w, err = os.Create(out); err == nil {
				_, err = io.Copy(w, tr)
				w.Close()
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// importSMI imports an nvidia-smi CSV into a run directory with the phases
// of the heatsink run recorded beside it, as `heatsink import --phase` does.
func importSMI(t *testing.T, csv string, of *rundir.Meta, dir string) {
	t.Helper()
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	var phases []recordings.PhaseSpec
	for _, p := range of.Phases {
		s, err := recordings.ParsePhase(p.Name+"="+p.Start.Format(time.RFC3339Nano)+".."+p.End.Format(time.RFC3339Nano), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		phases = append(phases, s)
	}
	res, err := recordings.Import([]string{csv}, recordings.ImportOptions{
		Options: recordings.Options{Host: of.Host, Location: time.UTC}, Phases: phases}, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteMeta(dir, res.Meta); err != nil {
		t.Fatal(err)
	}
}

// The H100 runs of testdata/h100-pair, each recorded by heatsink and by
// nvidia-smi at once: the fitted plateau rise agrees within 3 %, and the
// two τ differ by less than their difference's interval (within the noise).
func TestRealH100PairAgreesOnTheFits(t *testing.T) {
	dir := t.TempDir()
	untar(t, "testdata/h100-pair/recordings.tar.gz", dir)
	for _, w := range []string{"dgemm", "stream"} {
		t.Run(w, func(t *testing.T) {
			hsDir := filepath.Join(dir, "run-"+w)
			meta, err := rundir.ReadMeta(hsDir)
			if err != nil {
				t.Fatal(err)
			}
			smiDir := filepath.Join(dir, "smi-"+w)
			importSMI(t, filepath.Join(dir, "smi-"+w+".csv"), meta, smiDir)
			var reps [2]*Report
			for k, d := range []string{hsDir, smiDir} {
				run, err := Load(d)
				if err != nil {
					t.Fatal(err)
				}
				reps[k] = Analyze(run, DefaultOptions())
			}
			for _, a := range reps[0].Components {
				var b *ComponentResult
				for i := range reps[1].Components {
					if reps[1].Components[i].ID == a.ID {
						b = &reps[1].Components[i]
					}
				}
				if b == nil {
					t.Fatalf("%s: not in the nvidia-smi recording", a.ID)
				}
				if (a.LoadFit == nil) != (b.LoadFit == nil) {
					t.Errorf("%s: load fit in one recording only: %q / %q", a.ID, a.NotComputed["load_fit"], b.NotComputed["load_fit"])
					continue
				}
				if a.LoadFit == nil {
					t.Logf("%s: no load fit in either recording: %s", a.ID, a.NotComputed["load_fit"])
					continue
				}
				fa, fb := a.LoadFit, b.LoadFit
				t.Logf("%s: τ %.2f [%.2f, %.2f] / %.2f [%.2f, %.2f] s, rise %.2f / %.2f °C, heat interval %.2f / %.2f s/°C",
					a.ID, fa.TauS, fa.TauLoS, fa.TauHiS, fb.TauS, fb.TauLoS, fb.TauHiS, fa.RiseC, fb.RiseC, *a.HeatIntervalSPerC, *b.HeatIntervalSPerC)
				if d := math.Abs(fa.RiseC/fb.RiseC - 1); d > 0.03 {
					t.Errorf("%s: rise %.2f vs %.2f °C, %.1f %% apart", a.ID, fa.RiseC, fb.RiseC, 100*d)
				}
				if d := Differ(Estimate{fa.TauS, fa.TauLoS, fa.TauHiS}, Estimate{fb.TauS, fb.TauLoS, fb.TauHiS}); !d.WithinNoise {
					t.Errorf("%s: τ %.2f and %.2f s differ by %+.2f ± %.2f s: beyond the noise", a.ID, fa.TauS, fb.TauS, d.Value, d.HalfWidth)
				}
			}
		})
	}
}
