package plot

import (
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// immersedRun writes a small immersed run: a GPU and a CPU chip heating
// under a 20 min load, a tank whose pumps cycle every 10 min with heat
// removed growing with the coolant temperature.
func immersedRun(t *testing.T) *analysis.Report {
	t.Helper()
	dir := t.TempDir()
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s) * time.Second) }
	heat := func(s, t0, dT, tau float64) float64 {
		switch {
		case s < 300:
			return t0
		case s < 1500:
			return t0 + dT*(1-math.Exp(-(s-300)/tau))
		}
		return t0 + dT*(1-math.Exp(-1200/tau))*math.Exp(-(s-1500)/tau)
	}
	for s := 0.0; s <= 3600; s++ {
		g := point.New("gpu", at(s))
		g.AddTag("gpu", "0").AddTag("host", "n1").AddFloat("temp_c", heat(s, 35, 40, 120)).AddFloat("mem_temp_c", heat(s, 40, 30, 200))
		pts := []point.Point{g}
		for i, off := range []float64{-1, 0, 1} {
			h := point.New("hwmon", at(s))
			h.AddTag("chip", "platform_coretemp_0").AddTag("class", "cpu_core").AddTag("sensor", "temp"+string(rune('2'+i))).AddTag("host", "n1")
			h.AddFloat("temp_c", heat(s, 40, 30, 60)+off)
			pts = append(pts, h)
		}
		coolant := heat(s, 30, 6, 900)
		on := math.Mod(s, 600) >= 100 && math.Mod(s, 600) < 250
		tk := point.New("tank", at(s))
		tk.AddTag("tank", "pod1").AddTag("host", "n1").AddFloat("coolant_temp_c", coolant)
		tk.AddBool("pump1_on", on)
		if on {
			tk.AddFloat("dissipation_kw", 0.2*(coolant-25)).AddFloat("consumption_w", 350)
		} else {
			tk.AddFloat("dissipation_kw", 0).AddFloat("consumption_w", 50)
		}
		pts = append(pts, tk)
		if err := w.Write(pts); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, l, c := at(300), at(1500), at(3600)
	m := &rundir.Meta{ID: "plot-test", Start: start, IntervalS: 1, Phases: []rundir.Phase{
		{Name: "baseline", Start: start, End: &b}, {Name: "load", Start: b, End: &l}, {Name: "cooldown", Start: l, End: &c}}}
	if err := rundir.WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	run, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return analysis.Analyze(run, analysis.DefaultOptions())
}

func TestWriteReportDrawsEveryFigure(t *testing.T) {
	rep := immersedRun(t)
	if rep.PumpCycleFit == nil {
		t.Fatalf("the scenario needs a pump-cycle fit: %v", rep.NotComputed)
	}
	dir := t.TempDir()
	figs, err := WriteReport(dir, rep)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range figs {
		names = append(names, f.SVG)
	}
	if len(figs) != 4 {
		t.Fatalf("figures %q, want temperatures, blind spot, heat intervals and pump cycles", names)
	}
	for _, fig := range figs {
		checkPNG(t, filepath.Join(dir, fig.PNG))
		checkSVG(t, filepath.Join(dir, fig.SVG))
	}
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// 24 cm × 13 cm at gonum's default 96 dpi.
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 400 {
		t.Errorf("%s is %v", path, b)
	}
}

func checkSVG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	elems := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed SVG: %v", path, err)
		}
		if _, ok := tok.(xml.StartElement); ok {
			elems++
		}
	}
	if elems < 20 {
		t.Errorf("%s has only %d elements", path, elems)
	}
}

func TestWriteReportSkipsFiguresWithoutData(t *testing.T) {
	rep := &analysis.Report{Run: analysis.RunInfo{ID: "empty"}}
	figs, err := WriteReport(t.TempDir(), rep)
	if err != nil || len(figs) != 0 {
		t.Errorf("empty report: %d figures, %v; want none and no error", len(figs), err)
	}
	if _, err := HeatIntervals(rep); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("HeatIntervals on nothing: %v", err)
	}
}

func TestThinKeepsPeaksAndBounds(t *testing.T) {
	n := 86400
	tt := make([]float64, n)
	v := make([]float64, n)
	for i := range tt {
		tt[i] = float64(i)
		v[i] = 40
	}
	v[43210] = 95 // a one-second spike
	v[70000] = 10 // and a dip
	xy := thin(tt, v, 1)
	if len(xy) > maxPoints {
		t.Errorf("%d points, want at most %d", len(xy), maxPoints)
	}
	var hi, lo bool
	for i, p := range xy {
		hi = hi || (p.X == 43210 && p.Y == 95)
		lo = lo || (p.X == 70000 && p.Y == 10)
		if i > 0 && p.X < xy[i-1].X {
			t.Fatalf("points out of time order at %d", i)
		}
	}
	if !hi || !lo {
		t.Errorf("spike kept %v, dip kept %v", hi, lo)
	}
}

func TestCompareHeatIntervalsWithAMissingKind(t *testing.T) {
	a := immersedRun(t)
	b := immersedRun(t)
	b.Run.ID = "no-cpu"
	var keep []analysis.ComponentResult
	for _, c := range b.Components {
		if c.Kind != analysis.KindCPU {
			keep = append(keep, c)
		}
	}
	b.Components = keep
	cmp := analysis.Compare([]*analysis.Report{a, b})
	dir := t.TempDir()
	figs, err := WriteComparison(dir, cmp)
	if err != nil || len(figs) != 1 {
		t.Fatalf("figures %+v, %v", figs, err)
	}
	checkPNG(t, filepath.Join(dir, figs[0].PNG))
	checkSVG(t, filepath.Join(dir, figs[0].SVG))
}
