package analysis

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// The 10 Hz nvidia-smi recordings of the long pair, each cut into ten 1 Hz
// recordings of the same run (every tenth reading, from the first to the
// tenth): what two 1 Hz recordings of one H100 run can agree on. Every
// load is fitted in every one; the fitted rise agrees within 1 %, while
// τ scatters by several per cent (the table is logged), as the sensor's
// readings scatter independently from one tenth of a second to the next
// (lag-1 autocorrelation near 0 over DGEMM's last minute, once the slow
// trend is taken out): the premise of
// TestH100LikeRiseRecordingsAgreeWithinTheirIntervals. DGEMM's core
// scatters more (13 % rms) than that synthetic rise predicts: its first
// second is no exponential (up 12 °C in 0.6 s, down 5 °C as the power
// reaches the 700 W cap, up again), and the decimations' τ move with the
// phase of their first readings within it.
//
// Pairs of decimations agree on τ within their difference's interval in
// 28 of 45 for DGEMM's core, 37 for its memory, 45 for STREAM's. The
// model-averaged intervals (modelAverage) change none of these counts:
// AICc is close to a toss-up in one DGEMM-core decimation only (weight
// 0.57; 0.95 in another, 1.000 in the rest), so the choice of model is not
// what the intervals leave out. What they leave out is a third time scale:
// the 10 Hz core readings still climb 0.02 °C/s, linearly, from 40 s into
// the load to its end at 120 s (63.6, 64.0, 64.3, 64.8 °C over successive
// 20 s), so the two-exponential profile SSE(τ_slow) is nearly flat from
// 20 s to the search's edge (a ~13 s part plus that creep), and which
// decimation's second term takes the 3 s part and which the creep is up to
// its noise; in two of the ten the best two-exponential fit is at the edge
// and is not admitted, leaving one exponential (τ 16.5 and 19.0 s).
func TestRealH100TenHertzDecimations(t *testing.T) {
	// Of the 45 pairs of decimations, how many at least agree within
	// their difference's interval on τ, the rise and the cooldown τ
	// (model-averaged intervals; see the comment above for DGEMM).
	minAgree := map[string][3]int{
		"dgemm gpu_core:0":  {28, 36, 45},
		"dgemm gpu_mem:0":   {37, 41, 45},
		"stream gpu_core:0": {45, 45, 45},
		"stream gpu_mem:0":  {45, 45, 40},
	}
	dir := t.TempDir()
	untar(t, "testdata/h100-pair-long/recordings.tar.gz", dir)
	for _, w := range []string{"dgemm", "stream"} {
		meta, err := rundir.ReadMeta(filepath.Join(dir, "run-"+w))
		if err != nil {
			t.Fatal(err)
		}
		d10 := filepath.Join(dir, "smi10-"+w)
		importSMI(t, filepath.Join(dir, "smi10-"+w+".csv"), meta, d10)
		run, err := Load(d10)
		if err != nil {
			t.Fatal(err)
		}
		rep := Analyze(run, DefaultOptions())
		load := *rep.Phases.Load
		for _, c := range rep.Components {
			if c.Kind != KindGPUCore && c.Kind != KindGPUMem {
				continue
			}
			tt, vv := Finite(c.Series.T, c.Series.V)
			var taus, rises, his []float64
			var tauE, riseE, coolE []Estimate
			twoOf, uncertain := 0, 0
			for k := range 10 {
				var dt, dv []float64
				for i := k; i < len(tt); i += 10 {
					dt, dv = append(dt, tt[i]), append(dv, vv[i])
				}
				idle, err := Idle(dt, dv, rep.Phases.Baseline.Start, rep.Phases.Baseline.End)
				if err != nil {
					t.Fatalf("%s %s, decimation %d: %v", w, c.ID, k, err)
				}
				f, err := FitLoad(dt, dv, load, idle.Mean, 1, 5, 0.95)
				if err != nil {
					t.Fatalf("%s %s, decimation %d: %v", w, c.ID, k, err)
				}
				hi, _, _, err := HeatInterval(dt, dv, load, idle.Mean, 1)
				if err != nil {
					t.Fatalf("%s %s, decimation %d: %v", w, c.ID, k, err)
				}
				cf, err := FitCooldown(dt, dv, load.End, rep.Phases.Cooldown.End, 5, 0.95)
				if err != nil {
					t.Fatalf("%s %s, decimation %d, cooldown: %v", w, c.ID, k, err)
				}
				t.Logf("%s %s, decimation %d: %s (weight %.3f), τ %.2f [%.2f, %.2f] s, cooldown τ %.2f [%.2f, %.2f] s (%s, weight %.3f)",
					w, c.ID, k, f.Model, f.ModelWeight, f.TauS, f.TauLoS, f.TauHiS, cf.CoolTauS, cf.CoolTauLoS, cf.CoolTauHiS, cf.Model, cf.ModelWeight)
				if f.Model == "two-exponential" {
					twoOf++
				}
				if f.ModelWeight < 0.9 {
					uncertain++
				}
				taus, rises, his = append(taus, f.TauS), append(rises, f.RiseC), append(his, hi)
				tauE, riseE = append(tauE, Estimate{f.TauS, f.TauLoS, f.TauHiS}), append(riseE, Estimate{f.RiseC, f.RiseLoC, f.RiseHiC})
				coolE = append(coolE, Estimate{cf.CoolTauS, cf.CoolTauLoS, cf.CoolTauHiS})
			}
			t.Logf("%s %s: τ %.1f–%.1f s (median %.1f, rms %.1f %%); rise %.2f–%.2f °C (rms %.1f %%); heat interval %.2f–%.2f s/°C (rms %.1f %%)",
				w, c.ID, slices.Min(taus), slices.Max(taus), median(taus), 100*rmsRel(taus), slices.Min(rises), slices.Max(rises),
				100*rmsRel(rises), slices.Min(his), slices.Max(his), 100*rmsRel(his))
			agree := func(es []Estimate) int {
				n := 0
				for i := range es {
					for j := i + 1; j < len(es); j++ {
						if Differ(es[i], es[j]).WithinNoise {
							n++
						}
					}
				}
				return n
			}
			nTau, nRise, nCool := agree(tauE), agree(riseE), agree(coolE)
			t.Logf("%s %s: of the 45 pairs of decimations, τ within their difference's interval in %d, rise in %d, cooldown τ in %d; two exponentials chosen in %d of 10, the chosen model's weight under 0.9 in %d",
				w, c.ID, nTau, nRise, nCool, twoOf, uncertain)
			if want := minAgree[w+" "+c.ID]; nTau < want[0] || nRise < want[1] || nCool < want[2] {
				t.Errorf("%s %s: pairs within their interval: τ %d, rise %d, cooldown τ %d; want at least %v", w, c.ID, nTau, nRise, nCool, want)
			}
			if s := rmsRel(rises); s > 0.01 {
				t.Errorf("%s %s: the rise scatters by %.1f %% rms between decimations", w, c.ID, 100*s)
			}
			if w == "dgemm" {
				if r := detrendedLag1(tt, vv, load.End-60, load.End, 3); math.Abs(r) > 0.2 {
					t.Errorf("%s %s: detrended readings' lag-1 autocorrelation %.2f: not independent from one reading to the next", w, c.ID, r)
				} else {
					t.Logf("%s %s: detrended 10 Hz readings' lag-1 autocorrelation %.2f", w, c.ID, r)
				}
			}
		}
	}
}

// rmsRel is the rms deviation of v from its median, over the median.
func rmsRel(v []float64) float64 {
	m, ss := median(v), 0.0
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(len(v))) / m
}

// detrendedLag1 is the lag-1 autocorrelation of the readings in [from, to)
// less their centred moving mean over ±halfS seconds.
func detrendedLag1(t, v []float64, from, to, halfS float64) float64 {
	var r []float64
	for k := range t {
		if t[k] < from+halfS || t[k] >= to-halfS {
			continue
		}
		i, j := window(t, t[k]-halfS, t[k]+halfS)
		s := 0.0
		for _, x := range v[i:j] {
			s += x
		}
		r = append(r, v[k]-s/float64(j-i))
	}
	var c0, c1 float64
	for k := range r {
		c0 += r[k] * r[k]
		if k > 0 {
			c1 += r[k] * r[k-1]
		}
	}
	return c1 / c0
}

// A 420 s DGEMM on the H100 (testdata/h100-dgemm-7min): the core and the
// HBM peak within the first minute and fall back 10 °C at steady power as
// the server's cooling catches up. Both recordings must say so instead of
// fitting a rise, and still fit the cooldown and give the study's interval.
func TestRealH100LongDGEMMCoolingResponds(t *testing.T) {
	reps := pairReports(t, "testdata/h100-dgemm-7min/recordings.tar.gz", []string{"dgemm"})
	for k, rec := range []string{"heatsink", "nvidia-smi"} {
		rep := reps["dgemm"][k]
		seen := 0
		for _, c := range rep.Components {
			if c.Kind != KindGPUCore && c.Kind != KindGPUMem {
				continue
			}
			seen++
			if c.LoadFit != nil {
				t.Errorf("%s %s: a load fit (τ %.1f s) of a rise that fell back 10 °C", rec, c.ID, c.LoadFit.TauS)
			}
			if why := c.NotComputed["load_fit"]; !strings.Contains(why, "the cooling changed during the load") {
				t.Errorf("%s %s: load_fit not computed because %q, want the cooling named", rec, c.ID, why)
			} else {
				t.Logf("%s %s: %s", rec, c.ID, why)
			}
			if c.CooldownFit == nil || c.HeatIntervalBand == nil {
				t.Errorf("%s %s: cooldown fit %v, heat interval band %v: both should be computed (%v)", rec, c.ID, c.CooldownFit != nil, c.HeatIntervalBand != nil, c.NotComputed)
			}
		}
		if seen != 2 {
			t.Errorf("%s: %d GPU components, want the core and the HBM", rec, seen)
		}
	}
}
