package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// mark is one filled or stroked path as a canvas received it.
type mark struct {
	col   color.Color
	width vg.Length
	pts   []vg.Point
}

// drawing is what a figure put on its canvas: fills, strokes and texts.
type drawing struct {
	fills, strokes []mark
	texts          []string
}

// record draws d on a recording canvas of the figure's size and returns
// what it drew.
func record(d drawable, h vg.Length) drawing {
	rec := &recorder.Canvas{}
	d.Draw(draw.NewCanvas(rec, figureW, h))
	var out drawing
	var col color.Color = color.Black
	width := vg.Length(1)
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			col = a.Color
		case *recorder.SetLineWidth:
			width = a.Width
		case *recorder.Fill:
			out.fills = append(out.fills, mark{col, width, points(a.Path)})
		case *recorder.Stroke:
			out.strokes = append(out.strokes, mark{col, width, points(a.Path)})
		case *recorder.FillString:
			out.texts = append(out.texts, a.String)
		}
	}
	return out
}

func points(p vg.Path) []vg.Point {
	var pts []vg.Point
	for _, c := range p {
		if c.Type == vg.MoveComp || c.Type == vg.LineComp {
			pts = append(pts, c.Pos)
		}
	}
	return pts
}

func sameColour(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

// On the real H100 run the heat-interval bars stand evenly spaced inside
// the axis, none on its edge, the tallest below its top, each with the
// band the analysis computed drawn as a whisker. (The figure before issue
// 29 put two thin bars on the extreme edges, the right one cut off, the
// tallest touching the top, and no band.)
func TestHeatIntervalBarsStandInsideTheAxisWithTheirBand(t *testing.T) {
	rep := realReport(t, "h100-dgemm")
	var want, banded int
	for _, c := range rep.Components {
		if c.HeatIntervalSPerC != nil {
			want++
			if c.HeatIntervalBand != nil {
				banded++
			}
		}
	}
	if want < 2 || banded < 2 {
		t.Fatalf("the run needs two intervals with bands: %d, %d", want, banded)
	}
	p, err := HeatIntervals(rep)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Canvas{}
	c := draw.NewCanvas(rec, figureW, figureH)
	p.Draw(c)
	data := p.DataCanvas(c)
	d := record(recordedPlot{p}, figureH)
	const tol = 1e-6
	var centres []vg.Length
	var top vg.Length
	for _, f := range d.fills {
		if !sameColour(f.col, colour(0)) || len(f.pts) < 4 {
			continue
		}
		lo, hi := f.pts[0], f.pts[0]
		for _, q := range f.pts {
			lo.X, lo.Y, hi.X, hi.Y = min(lo.X, q.X), min(lo.Y, q.Y), max(hi.X, q.X), max(hi.Y, q.Y)
		}
		if math.Abs(float64(lo.Y-data.Min.Y)) > tol {
			continue // the legend's swatch, not a bar standing on 0
		}
		if lo.X < data.Min.X-tol || hi.X > data.Max.X+tol {
			t.Errorf("bar %v-%v leaves the axis %v-%v", lo, hi, data.Min, data.Max)
		}
		centres = append(centres, (lo.X+hi.X)/2)
		top = max(top, hi.Y)
	}
	if len(centres) != want {
		t.Fatalf("%d bars, want %d", len(centres), want)
	}
	if top >= data.Max.Y-1 {
		t.Errorf("the tallest bar reaches the top of the axis (%v of %v)", top, data.Max.Y)
	}
	step := centres[1] - centres[0]
	if first := centres[0] - data.Min.X; math.Abs(float64(first-step/2)) > 0.5 {
		t.Errorf("first bar %v from the axis's left edge, want half the spacing %v", first, step/2)
	}
	for i := 1; i < len(centres); i++ {
		if math.Abs(float64(centres[i]-centres[i-1]-step)) > 0.5 {
			t.Errorf("bars at %v are not evenly spaced", centres)
		}
	}
	whiskers := 0
	for _, s := range d.strokes {
		atBar := false
		for _, x := range centres {
			atBar = atBar || (len(s.pts) == 2 && math.Abs(float64(s.pts[0].X-x)) < 1e-3)
		}
		if atBar && s.width == whiskerStyle.Width && s.pts[0].X == s.pts[1].X && s.pts[0].Y != s.pts[1].Y {
			whiskers++
			if s.pts[0].Y < data.Min.Y-tol || s.pts[1].Y > data.Max.Y+tol {
				t.Errorf("band %v outside the axis", s.pts)
			}
		}
	}
	if whiskers != banded {
		t.Errorf("%d bands drawn, want %d", whiskers, banded)
	}
}

// recordedPlot draws a bare plot, as the test measures its data canvas.
type recordedPlot struct{ p *gplot.Plot }

func (r recordedPlot) Draw(c draw.Canvas) { r.p.Draw(c) }

// A fitted curve is drawn only over the readings of its stretch, at the
// time axis's scale: on a run long enough for minutes, the curves stay
// within the readings' times (they were drawn at t/scale, 3600 times too
// far right).
func TestFitCurvesStayOverTheirReadings(t *testing.T) {
	rep := immersedRun(t)
	scale, unit := timeScale(rep.Run.EndS)
	if unit != "min" {
		t.Fatalf("the scenario needs a time axis in minutes, got %s", unit)
	}
	drawn := 0
	for _, c := range rep.Components {
		p := gplot.New()
		l, err := overlayFits(p, c, scale)
		if err != nil {
			t.Fatal(err)
		}
		if l == nil {
			continue
		}
		drawn++
		first, last := c.Series.T[0]*scale, c.Series.T[len(c.Series.T)-1]*scale
		// The line returned is the last drawn: the cooldown's when fitted.
		var lo, hi float64
		if f := c.CooldownFit; f != nil {
			lo, hi = f.FromS*scale, f.ToS*scale
		} else {
			lo, hi = c.LoadFit.FromS*scale, c.LoadFit.ToS*scale
		}
		for _, pt := range l.XYs {
			if pt.X < max(first, lo)-1e-9 || pt.X > min(last, hi)+1e-9 {
				t.Fatalf("%s: fitted point at %g min, outside its readings [%g, %g] min", c.ID, pt.X, max(first, lo), min(last, hi))
			}
		}
	}
	if drawn == 0 {
		t.Fatal("no fitted curve drawn")
	}
	// The temperature axis is the readings', never stretched by a model.
	p, err := Temperatures(rep)
	if err != nil {
		t.Fatal(err)
	}
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, c := range rep.Components {
		for i, v := range c.Series.V {
			ylo, yhi = min(ylo, v), max(yhi, v)
			if c.Series.Min != nil {
				ylo, yhi = min(ylo, c.Series.Min[i]), max(yhi, c.Series.Max[i])
			}
		}
	}
	if p.Y.Min > ylo || p.Y.Max < yhi || p.Y.Min < ylo-0.05*(yhi-ylo)-0.5 || p.Y.Max > yhi+0.05*(yhi-ylo)+0.5 {
		t.Errorf("temperature axis %g-%g, readings %g-%g", p.Y.Min, p.Y.Max, ylo, yhi)
	}
}

// No figure is drawn for fewer than three points: one or two iterations,
// one or two pump cycles.
func TestNoFigureForFewerThanThreePoints(t *testing.T) {
	cycles := func(n int) []analysis.PumpCycle {
		var out []analysis.PumpCycle
		for i := range n {
			c, kj := 30+float64(i), 100+10*float64(i)
			out = append(out, analysis.PumpCycle{Complete: true, StartCoolantC: &c, HeatRemovedKJ: &kj})
		}
		return out
	}
	timeline := func(n int) []analysis.IterationValue {
		var out []analysis.IterationValue
		for i := range n {
			out = append(out, analysis.IterationValue{AtS: float64(10 * i), Value: 5e13})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		n     int
		drawn bool
	}{{"one", 1, false}, {"two", 2, false}, {"three", 3, true}} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &analysis.Report{Run: analysis.RunInfo{ID: "few", EndS: 100}, PumpCycles: cycles(tc.n),
				Workload: analysis.WorkloadResult{Throughput: "flop_per_s", Timeline: timeline(tc.n)}}
			_, err := PumpCycles(rep)
			if drawn := err == nil; drawn != tc.drawn || (err != nil && !errors.Is(err, ErrNothingToPlot)) {
				t.Errorf("pump cycles of %d: %v", tc.n, err)
			}
			_, err = throughputFigure(rep)
			if drawn := err == nil; drawn != tc.drawn || (err != nil && !errors.Is(err, ErrNothingToPlot)) {
				t.Errorf("throughput of %d iterations: %v", tc.n, err)
			}
		})
	}
}

// The host figure of the VM run names the phases once, floors memory and
// load at zero and shares one time axis across its panels (it named the
// phases three times and put memory below 0 GiB).
func TestHostFigureHasOneLegendAndNoNegativeAxis(t *testing.T) {
	rep := realReport(t, "vm-cpu-stream")
	d, err := hostFigure(rep)
	if err != nil {
		t.Fatal(err)
	}
	st := d.(stack)
	if len(st) != 3 {
		t.Fatalf("%d panels, want CPU, memory and load", len(st))
	}
	for _, p := range st {
		if p.Y.Min < 0 {
			t.Errorf("%s axis reaches %g", p.Y.Label.Text, p.Y.Min)
		}
		if p.X.Min != st[0].X.Min || p.X.Max != st[0].X.Max {
			t.Errorf("%s panel's time axis %g-%g, the first's %g-%g", p.Y.Label.Text, p.X.Min, p.X.Max, st[0].X.Min, st[0].X.Max)
		}
	}
	n := 0
	for _, s := range record(d, 20*vg.Centimeter).texts {
		if s == "baseline phase" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the phase legend appears %d times, want once", n)
	}
}

// A figure's title names only what it draws: the VM run's throughput
// figure has no temperature, the H100 run's has.
func TestThroughputTitleNamesTemperatureOnlyWhenDrawn(t *testing.T) {
	for _, tc := range []struct {
		run         string
		temperature bool
	}{{"vm-cpu-stream", false}, {"h100-dgemm", true}} {
		rep := realReport(t, tc.run)
		d, err := throughputFigure(rep)
		if err != nil {
			t.Fatal(err)
		}
		title := d.(framed).p.Title.Text
		caption := throughputTitle(rep)
		if strings.Contains(title, "temperature") != tc.temperature || strings.Contains(caption, "temperature") != tc.temperature {
			t.Errorf("%s: title %q, caption %q; temperature drawn: %v", tc.run, title, caption, tc.temperature)
		}
	}
}

// Figures drawn without a directory carry their SVG for inlining and
// name no files.
func TestWriteReportWithoutDirectoryInlinesOnly(t *testing.T) {
	figs, err := WriteReport("", realReport(t, "vm-cpu-stream"))
	if err != nil || len(figs) != 2 {
		t.Fatalf("%d figures, %v", len(figs), err)
	}
	for _, f := range figs {
		if f.SVG != "" || f.PNG != "" || !strings.HasPrefix(string(f.Data), "<svg") || !strings.HasSuffix(strings.TrimSpace(string(f.Data)), "</svg>") {
			t.Errorf("figure %q: files %q %q, data %.40q", f.Title, f.SVG, f.PNG, f.Data)
		}
	}
}

// The temperature figure draws each limit the device recorded as a line
// its axis reaches (the H100 run records slowdown_c 89 °C for the core and
// mem_max_c 95 °C for the memory), and none for a run that recorded none.
func TestTemperatureFigureDrawsTheRecordedLimits(t *testing.T) {
	rep := realReport(t, "h100-dgemm")
	var want []float64
	for _, c := range rep.Components {
		if c.Limit != nil {
			want = append(want, c.Limit.C)
		}
	}
	if len(want) != 2 {
		t.Fatalf("the run records %d limits, want the core's and the memory's", len(want))
	}
	p, err := Temperatures(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for _, s := range record(recordedPlot{p}, figureH).texts {
		if strings.HasPrefix(s, "limit ") {
			got = append(got, 0)
		}
	}
	for _, l := range want {
		if p.Y.Max < l {
			t.Errorf("the axis ends at %g °C, below the limit %g °C", p.Y.Max, l)
		}
	}
	if len(got) != len(want) || len(limits(rep)) != len(want) {
		t.Errorf("%d limit legend entries, %d limits; want %d", len(got), len(limits(rep)), len(want))
	}
	for _, c := range immersedRun(t).Components {
		if c.Limit != nil {
			t.Fatalf("%s of the synthetic run has a limit %+v it never recorded", c.ID, c.Limit)
		}
	}
}

// Eight GPUs with the same slowdown limit get one line, not eight.
func TestLimitsOfIdenticalDevicesAreOneLine(t *testing.T) {
	rep := &analysis.Report{}
	for g := range 8 {
		rep.Components = append(rep.Components, analysis.ComponentResult{ID: fmt.Sprintf("gpu_core:%d", g), Limit: &analysis.Limit{Field: "slowdown_c", C: 89}})
	}
	rep.Components = append(rep.Components, analysis.ComponentResult{ID: "gpu_mem:0", Limit: &analysis.Limit{Field: "mem_max_c", C: 95}})
	ls := limits(rep)
	if len(ls) != 2 || len(ls[0].components) != 8 || ls[0].label() != "limit slowdown 89 °C (gpu_core:0, gpu_core:1 and 6 more)" {
		t.Errorf("limits %+v, label %q", ls, ls[0].label())
	}
}

// The blind-spot figure of an immersed run shows the worst component
// against its limit and its limit less N, with the coolant once on the
// right axis; a run without a tank has none.
func TestBlindSpotFigureOfAnImmersedRun(t *testing.T) {
	rep := immersedRun(t)
	if len(rep.BlindSpot) == 0 {
		t.Fatalf("no blind spot computed: %v", rep.NotComputed["blind_spot"])
	}
	for i := range rep.BlindSpot {
		b := &rep.BlindSpot[i]
		b.Limit = &analysis.Limit{Field: "slowdown_c", C: b.PeakC + 3}
	}
	d, err := BlindSpot(rep)
	if err != nil {
		t.Fatal(err)
	}
	f := d.(framed)
	worst := worstBlindSpot(rep)
	if f.right == nil || !strings.HasPrefix(f.p.Title.Text, worst.Component+" against the coolant") {
		t.Errorf("title %q, right axis %+v", f.p.Title.Text, f.right)
	}
	if f.p.Y.Max < worst.Limit.C {
		t.Errorf("the axis ends at %g °C, below the limit %g °C", f.p.Y.Max, worst.Limit.C)
	}
	texts := strings.Join(record(d, figureH).texts, "\n")
	for _, want := range []string{"limit slowdown_c", "limit − 5 °C", worst.Coolant + ", right axis"} {
		if strings.Count(texts, want) != 1 {
			t.Errorf("legend has %q %d times, want once:\n%s", want, strings.Count(texts, want), texts)
		}
	}
	if _, err := BlindSpot(realReport(t, "h100-dgemm")); !errors.Is(err, ErrNothingToPlot) {
		t.Errorf("a run without a tank: %v", err)
	}
}

// The comparison's bars stand inside the axis too, side by side within
// their kind's slot (the leftmost crossed the axis and the tallest touched
// its top).
func TestComparedBarsStandInsideTheAxis(t *testing.T) {
	a, b := immersedRun(t), immersedRun(t)
	b.Run.ID = "second"
	cmp := analysis.Compare([]*analysis.Report{a, b})
	p, err := CompareHeatIntervals(cmp)
	if err != nil {
		t.Fatal(err)
	}
	p.Legend = gplot.NewLegend() // its swatches are not bars
	rec := &recorder.Canvas{}
	c := draw.NewCanvas(rec, figureW, figureH)
	p.Draw(c)
	data := p.DataCanvas(c)
	want := 0
	for _, kc := range cmp.Kinds {
		for _, s := range kc.PerRun {
			if s.HeatIntervalSPerC != nil {
				want++
			}
		}
	}
	got := 0
	for _, f := range record(recordedPlot{p}, figureH).fills {
		if (!sameColour(f.col, colour(0)) && !sameColour(f.col, colour(1))) || len(f.pts) < 4 {
			continue
		}
		lo, hi := f.pts[0], f.pts[0]
		for _, q := range f.pts {
			lo.X, lo.Y, hi.X, hi.Y = min(lo.X, q.X), min(lo.Y, q.Y), max(hi.X, q.X), max(hi.Y, q.Y)
		}
		got++
		if lo.X < data.Min.X || hi.X > data.Max.X || hi.Y >= data.Max.Y-1 {
			t.Errorf("bar %v-%v leaves or fills the axis %v-%v", lo, hi, data.Min, data.Max)
		}
	}
	if got != want || want < 4 {
		t.Errorf("%d bars, want %d (at least 4)", got, want)
	}
}

// A load trimmed to its powered span shows its recorded tail apart, named
// once; an untrimmed load has no such shade.
func TestTrimmedLoadTailIsShadedApart(t *testing.T) {
	end := 110.0
	for _, tc := range []struct {
		recordedEnd *float64
		want        int
	}{{nil, 0}, {&end, 1}} {
		ph := analysis.Phases{Baseline: &analysis.Span{Start: 0, End: 30}, Load: &analysis.Span{Start: 30, End: 100},
			Cooldown: &analysis.Span{Start: 100, End: 200}, LoadRecordedEndS: tc.recordedEnd}
		p := gplot.New()
		shadePhases(p, ph, 1)
		n := 0
		for _, s := range record(recordedPlot{p}, figureH).texts {
			if s == "load after the work ended (left out)" {
				n++
			}
		}
		if n != tc.want {
			t.Errorf("recorded end %v: the tail is named %d times, want %d", tc.recordedEnd, n, tc.want)
		}
	}
}
