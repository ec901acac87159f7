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

// pairReports unpacks a testdata pair (run-W and smi-W.csv for each
// workload W) and analyses each run as recorded by heatsink and as
// recorded by nvidia-smi, imported with the run's phases.
func pairReports(t *testing.T, tarball string, workloads []string) map[string][2]*Report {
	t.Helper()
	dir := t.TempDir()
	untar(t, tarball, dir)
	out := map[string][2]*Report{}
	for _, w := range workloads {
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
		out[w] = reps
	}
	return out
}

// relDiff is |a/b − 1|.
func relDiff(a, b float64) float64 { return math.Abs(a/b - 1) }

// The H100 runs of testdata/h100-pair (90 s loads) and h100-pair-long
// (120 s DGEMM, 200 s STREAM), each recorded by heatsink and by nvidia-smi
// at once: the fitted plateau rise agrees within 1 %, the two τ (load and
// cooldown, where both recordings chose the same cooldown model) differ by
// less than their difference's interval (within the noise), and, on the
// long pair, whose loads all last over 5τ, τ is closer between the two
// recordings than the study's interval for every component.
//
// Within 3 % is not asserted: on the long pair STREAM's τ agree to 0.3 %,
// DGEMM's differ by 5-7 %. A DGEMM rise is a sub-second jump of ~15 °C, a
// ~3 s part and only ~10 °C with τ ≈ 20 s; with readings a second apart,
// rounded to whole degrees with ±0.3 °C of independent noise each (the
// 10 Hz recording shows it), two recordings of such a rise differ by a
// median 5 % (TestH100LikeRiseRecordingsAgreeWithinTheirIntervals), and
// ten 1 Hz decimations of the 10 Hz recording scatter by 13 % rms.
func TestRealH100PairAgreesOnTheFits(t *testing.T) {
	for _, pair := range []string{"h100-pair", "h100-pair-long"} {
		reps := pairReports(t, "testdata/"+pair+"/recordings.tar.gz", []string{"dgemm", "stream"})
		for _, w := range []string{"dgemm", "stream"} {
			t.Run(pair+"/"+w, func(t *testing.T) {
				comparePair(t, reps[w][0], reps[w][1], pair == "h100-pair-long")
			})
		}
	}
}

func comparePair(t *testing.T, hs, smi *Report, long bool) {
	for _, a := range hs.Components {
		var b *ComponentResult
		for i := range smi.Components {
			if smi.Components[i].ID == a.ID {
				b = &smi.Components[i]
			}
		}
		if b == nil {
			t.Fatalf("%s: not in the nvidia-smi recording", a.ID)
		}
		if ca, cb := a.CooldownFit, b.CooldownFit; ca != nil && cb != nil {
			d := Differ(Estimate{ca.CoolTauS, ca.CoolTauLoS, ca.CoolTauHiS}, Estimate{cb.CoolTauS, cb.CoolTauLoS, cb.CoolTauHiS})
			t.Logf("%s: cooldown τ %.2f (%s) / %.2f (%s) s", a.ID, ca.CoolTauS, ca.Model, cb.CoolTauS, cb.Model)
			if ca.Model == cb.Model && !d.WithinNoise {
				t.Errorf("%s: cooldown τ %.2f and %.2f s differ by %+.2f ± %.2f s: beyond the noise", a.ID, ca.CoolTauS, cb.CoolTauS, d.Value, d.HalfWidth)
			}
		}
		if (a.LoadFit == nil) != (b.LoadFit == nil) {
			t.Errorf("%s: load fit in one recording only: %q / %q", a.ID, a.NotComputed["load_fit"], b.NotComputed["load_fit"])
			continue
		}
		if a.LoadFit == nil {
			t.Logf("%s: no load fit in either recording: %s", a.ID, a.NotComputed["load_fit"])
			if long {
				t.Errorf("%s: the long loads should all be fitted", a.ID)
			}
			continue
		}
		fa, fb := a.LoadFit, b.LoadFit
		dTau, dHI := relDiff(fa.TauS, fb.TauS), relDiff(*a.HeatIntervalSPerC, *b.HeatIntervalSPerC)
		t.Logf("%s: τ %.2f [%.2f, %.2f] / %.2f [%.2f, %.2f] s (%.1f %% apart), rise %.2f / %.2f °C, heat interval %.2f / %.2f s/°C (%.1f %% apart)",
			a.ID, fa.TauS, fa.TauLoS, fa.TauHiS, fb.TauS, fb.TauLoS, fb.TauHiS, 100*dTau, fa.RiseC, fb.RiseC, *a.HeatIntervalSPerC, *b.HeatIntervalSPerC, 100*dHI)
		if d := relDiff(fa.RiseC, fb.RiseC); d > 0.01 {
			t.Errorf("%s: rise %.2f vs %.2f °C, %.1f %% apart", a.ID, fa.RiseC, fb.RiseC, 100*d)
		}
		if d := Differ(Estimate{fa.TauS, fa.TauLoS, fa.TauHiS}, Estimate{fb.TauS, fb.TauLoS, fb.TauHiS}); !d.WithinNoise {
			t.Errorf("%s: τ %.2f and %.2f s differ by %+.2f ± %.2f s: beyond the noise", a.ID, fa.TauS, fb.TauS, d.Value, d.HalfWidth)
		}
		if long && dTau >= dHI {
			t.Errorf("%s: τ (%.1f %% apart) is no closer between the recordings than the heat interval (%.1f %%)", a.ID, 100*dTau, 100*dHI)
		}
	}
}
