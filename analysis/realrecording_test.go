package analysis

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// Real recordings kept in testdata/, each a run directory (run.json with
// baseline, load and cooldown phases, and points.lp) as `heatsink run`
// writes it:
//
//   - h100-dgemm: a short 1 Hz recording of an H100 under FP64 GEMM, from the
//     device machine; its GPU 0 core temperature is checked through the
//     report (component gpu_core:0). It is skipped, saying so, until it is
//     put there.
//   - vm-cpu-stream: this CI machine under `heatsink run --baseline 30s
//     --load 40s --cooldown 40s --workload cpu-stream`. A VM has no thermal
//     sensors, so its total CPU utilisation stands in for a temperature and
//     the analysis functions are checked on it directly; its real runner
//     output also carries the iterations for the slowdown regression.
//
// Every number is checked against a hand computation: straightforward loops
// over the lines of points.lp, sharing no code with the analysis but the
// line-protocol parser.
var realRecordings = []struct {
	dir, measurement, field string
	tags                    map[string]string
	component               string
}{
	{"h100-dgemm", "gpu", "temp_c", map[string]string{"gpu": "0"}, "gpu_core:0"},
	{"vm-cpu-stream", "cpu", "usage_pct", map[string]string{"cpu": "total"}, ""},
}

type reading struct{ t, v float64 }

// handSeries reads one series from points.lp line by line.
func handSeries(t *testing.T, dir string, start time.Time, measurement, field string, tags map[string]string) []reading {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, rundir.PointsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []reading
lines:
	for sc.Scan() {
		p, err := point.ParseLine(sc.Bytes())
		if err != nil || p.Measurement != measurement {
			continue
		}
		for k, v := range tags {
			if p.Tag(k) != v {
				continue lines
			}
		}
		if v, ok := p.Float(field); ok {
			out = append(out, reading{p.Time.Sub(start).Seconds(), v})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRealRecordingsMatchHandComputation(t *testing.T) {
	for _, rec := range realRecordings {
		t.Run(rec.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", rec.dir)
			if _, err := os.Stat(filepath.Join(dir, rundir.MetaFile)); os.IsNotExist(err) {
				t.Skipf("no real recording in %s (expects %s and %s: a `heatsink run` directory with baseline, load and cooldown phases)", dir, rundir.MetaFile, rundir.PointsFile)
			}
			checkRealRecording(t, dir, rec.measurement, rec.field, rec.tags, rec.component)
		})
	}
}

func checkRealRecording(t *testing.T, dir, measurement, field string, tags map[string]string, component string) {
	meta, err := rundir.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	run, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rs := handSeries(t, dir, run.Start, measurement, field, tags)
	if len(rs) < 30 {
		t.Fatalf("%d readings of %s.%s: not a recording to test on", len(rs), measurement, field)
	}
	rel := func(ts time.Time) float64 { return ts.Sub(run.Start).Seconds() }
	phase := func(name string) (float64, float64) {
		p, ok := meta.PhaseNamed(name)
		if !ok || p.End == nil {
			t.Fatalf("%s: no complete %s phase", dir, name)
		}
		return rel(p.Start), rel(*p.End)
	}
	bs, be := phase("baseline")
	ls, le := phase("load")
	_, ce := phase("cooldown")
	const tol, hold, win, maxGap, minRise = 1.0, 30.0, 20.0, 5.0, 1.0

	// By hand: idle statistics over [bs, be).
	n, sum, mn, mx := 0, 0.0, math.Inf(1), math.Inf(-1)
	for _, r := range rs {
		if r.t >= bs && r.t < be {
			n++
			sum += r.v
			mn = math.Min(mn, r.v)
			mx = math.Max(mx, r.v)
		}
	}
	mean := sum / float64(n)
	// Maximum over load and cooldown; load-phase peak and its first time.
	maxLC := math.Inf(-1)
	peak, tPeak := math.Inf(-1), 0.0
	for _, r := range rs {
		if r.t >= ls && r.t <= ce {
			maxLC = math.Max(maxLC, r.v)
		}
		if r.t >= ls && r.t <= le && r.v > peak {
			peak, tPeak = r.v, r.t
		}
	}
	heatOK := peak-mean >= minRise && tPeak > ls
	heat := (tPeak - ls) / (peak - mean)
	// Return to idle: the first reading after the load from which every
	// reading within hold seconds is at or below idle max + tol, with no
	// gap over maxGap, and the readings reach hold seconds.
	retOK, ret := false, 0.0
	for i := range rs {
		if rs[i].t < le {
			continue
		}
		ok, reached := true, false
		for j := i; j < len(rs) && rs[j].t-rs[i].t <= hold+1e-9; j++ {
			if rs[j].v > mx+tol || (j > i && rs[j].t-rs[j-1].t > maxGap) {
				ok = false
				break
			}
			if rs[j].t-rs[i].t >= hold {
				reached = true
			}
		}
		if ok && reached {
			retOK, ret = true, rs[i].t-le
			break
		}
	}
	// Steepest rise: least-squares slope over every win-second window of
	// the load covered at least 90 % with no gap over maxGap.
	best := math.Inf(-1)
	for i := range rs {
		if rs[i].t < ls || rs[i].t+win > le+1e-9 {
			continue
		}
		var xs, ys []float64
		gap := false
		for j := i; j < len(rs) && rs[j].t <= rs[i].t+win+1e-9; j++ {
			if j > i && rs[j].t-rs[j-1].t > maxGap {
				gap = true
			}
			xs, ys = append(xs, rs[j].t), append(ys, rs[j].v)
		}
		if gap || len(xs) < 3 || xs[len(xs)-1]-xs[0] < 0.9*win {
			continue
		}
		var mxx, myy, sxy, sxx float64
		for k := range xs {
			mxx += xs[k] / float64(len(xs))
			myy += ys[k] / float64(len(ys))
		}
		for k := range xs {
			sxy += (xs[k] - mxx) * (ys[k] - myy)
			sxx += (xs[k] - mxx) * (xs[k] - mxx)
		}
		best = math.Max(best, sxy/sxx)
	}
	t.Logf("%s.%s: %d readings; idle %.2f/%.2f/%.2f; max %.2f; peak %.2f at %.0f s; heat %v %.3f; steepest slope %.4f/s; return %v %.0f s",
		measurement, field, len(rs), mn, mean, mx, maxLC, peak, tPeak, heatOK, heat, best, retOK, ret)

	const eps = 1e-9
	if component != "" {
		o := DefaultOptions()
		o.Tolerance, o.Hold, o.Window = tol, time.Duration(hold)*time.Second, time.Duration(win)*time.Second
		o.MaxGap, o.MinRise = time.Duration(maxGap)*time.Second, minRise
		rep := Analyze(run, o)
		c := component
		var got *ComponentResult
		for i := range rep.Components {
			if rep.Components[i].ID == c {
				got = &rep.Components[i]
			}
		}
		if got == nil {
			t.Fatalf("no component %s in the report", c)
		}
		near(t, "idle min", val(t, *got, "idle_min_c", got.IdleMinC), mn, eps)
		near(t, "idle mean", val(t, *got, "idle_mean_c", got.IdleMeanC), mean, eps)
		near(t, "idle max", val(t, *got, "idle_max_c", got.IdleMaxC), mx, eps)
		near(t, "max", val(t, *got, "max_c", got.MaxC), maxLC, eps)
		if heatOK {
			near(t, "heat interval", val(t, *got, "heat_interval_s_per_c", got.HeatIntervalSPerC), heat, eps)
		} else if got.HeatIntervalSPerC != nil {
			t.Errorf("heat interval %v computed where the hand computation refuses", *got.HeatIntervalSPerC)
		}
		if retOK {
			near(t, "return to idle", val(t, *got, "return_to_idle_s", got.ReturnToIdleS), ret, eps)
		} else if got.ReturnToIdleS != nil {
			t.Errorf("return to idle %v where the hand computation finds none", *got.ReturnToIdleS)
		}
		if best > 0 {
			near(t, "steepest", val(t, *got, "steepest_s_per_c", got.SteepestSPerC), 1/best, 1e-6/best)
		}
		return
	}

	// No temperature component: check the functions on the series itself.
	ss := run.Find(measurement, field, func(s *Series) bool {
		for k, v := range tags {
			if s.Tag(k) != v {
				return false
			}
		}
		return true
	})
	if len(ss) != 1 {
		t.Fatalf("%d series of %s.%s", len(ss), measurement, field)
	}
	st, sv := Finite(ss[0].T, ss[0].V)
	if len(st) != len(rs) {
		t.Fatalf("loaded %d readings, hand %d", len(st), len(rs))
	}
	idle, err := Idle(st, sv, bs, be)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "idle min", idle.Min, mn, eps)
	near(t, "idle mean", idle.Mean, mean, eps)
	near(t, "idle max", idle.Max, mx, eps)
	if _, m, err := Peak(st, sv, ls, ce); err != nil || math.Abs(m-maxLC) > eps {
		t.Errorf("max = %v, %v; hand %v", m, err, maxLC)
	}
	h, _, _, err := HeatInterval(st, sv, Span{Start: ls, End: le}, idle.Mean, minRise)
	if heatOK {
		if err != nil {
			t.Errorf("heat interval: %v; hand %v", err, heat)
		} else {
			near(t, "heat interval", h, heat, eps)
		}
	} else if err == nil {
		t.Errorf("heat interval %v where the hand computation refuses", h)
	}
	r, err := ReturnToIdle(st, sv, le, idle.Max, tol, hold, maxGap)
	if retOK {
		if err != nil {
			t.Errorf("return to idle: %v; hand %v", err, ret)
		} else {
			near(t, "return to idle", r, ret, eps)
		}
	} else if err == nil {
		t.Errorf("return to idle %v where the hand computation finds none", r)
	}
	if s, _, err := SteepestRise(st, sv, ls, le, win, maxGap); best > 0 && (err != nil || math.Abs(s-1/best) > 1e-6/best) {
		t.Errorf("steepest = %v, %v; hand %v", s, err, 1/best)
	}

	// The runner's iterations: runtime against the mean of the series
	// during each, by hand.
	var xs, ys []float64
	for _, it := range meta.Workload.Iterations {
		if it.ExitStatus != 0 || it.RuntimeS <= 0 {
			continue
		}
		from, to := rel(it.Start), rel(it.End)
		s, k := 0.0, 0
		for _, r := range rs {
			if r.t >= from && r.t <= to {
				s += r.v
				k++
			}
		}
		if k > 0 {
			xs, ys = append(xs, s/float64(k)), append(ys, it.RuntimeS)
		}
	}
	var gx, gy []float64
	for _, it := range meta.Workload.Iterations {
		if it.ExitStatus != 0 || it.RuntimeS <= 0 {
			continue
		}
		if m, err := MeanOver(st, sv, rel(it.Start), rel(it.End)); err == nil {
			gx, gy = append(gx, m), append(gy, it.RuntimeS)
		}
	}
	if len(gx) != len(xs) {
		t.Fatalf("%d iterations with readings, hand %d", len(gx), len(xs))
	}
	f, err := Slowdown(gx, gy)
	if err != nil {
		t.Fatal(err)
	}
	var mxx, myy, sxy, sxx float64
	for k := range xs {
		mxx += xs[k] / float64(len(xs))
		myy += ys[k] / float64(len(ys))
	}
	for k := range xs {
		sxy += (xs[k] - mxx) * (ys[k] - myy)
		sxx += (xs[k] - mxx) * (xs[k] - mxx)
	}
	near(t, "slowdown slope", f.Slope, sxy/sxx, 1e-9*math.Abs(sxy/sxx)+1e-12)
	near(t, "slowdown p-value", f.PValue, pValueByBeta(xs, ys), 1e-9)
	t.Logf("%d iterations: runtime slope %.4g s per unit, p %.3g", f.N, f.Slope, f.PValue)
}
