// Package plot draws the figures of a report with gonum.org/v1/plot:
// temperatures over time with the phases shaded and the coolant overlaid,
// heat-accumulation intervals as bars, heat removed per pump cycle against
// the coolant temperature at its start with the fitted line, and heat
// intervals across runs for a comparison. Each is saved as SVG and PNG.
package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"os"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/analysis/report"
)

// maxPoints bounds the points drawn per line: a day at 1 Hz is 86,400
// readings, far more than a figure has pixels. Each bucket of time keeps its
// lowest and highest reading, so peaks survive the thinning.
const maxPoints = 2000

// maxLegend is the most components given a legend entry each: a legend
// beside a 14 cm figure holds about 30 lines, phases included.
const maxLegend = 24

// kindColors colour components by kind on a crowded figure.
var kindColors = map[string]color.Color{
	analysis.KindGPUCore: color.NRGBA{R: 214, G: 39, B: 40, A: 255},
	analysis.KindGPUMem:  color.NRGBA{R: 255, G: 127, B: 14, A: 255},
	analysis.KindCPU:     color.NRGBA{R: 31, G: 119, B: 180, A: 255},
	analysis.KindNVMe:    color.NRGBA{R: 148, G: 103, B: 189, A: 255},
	analysis.KindCoolant: color.NRGBA{R: 44, G: 160, B: 44, A: 255},
	analysis.KindWater:   color.NRGBA{R: 23, G: 190, B: 207, A: 255},
}

// minPoints is the fewest points a figure is drawn for: one or two points
// make no picture a table does not give better (a single iteration, a
// single pump cycle).
const minPoints = 3

// ErrNothingToPlot says a figure has no data (no component, no cycle), or
// fewer than minPoints.
var ErrNothingToPlot = errors.New("nothing to plot")

// Temperatures draws every component's temperature over the run, CPU chips
// as their mean with the band between their coolest and hottest sensor,
// coolant and water dashed and heavier, the phases shaded behind and each
// limit a device recorded (slowdown, memory maximum, ...) as a line. Each
// GPU has its own colour, its memory dashed in the same colour; the legend
// goes beside the plot (see framed).
func Temperatures(rep *analysis.Report) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = "Temperatures: run " + rep.Run.ID
	scale, unit := timeScale(rep.Run.EndS)
	p.X.Label.Text = "time since start (" + unit + ")"
	p.Y.Label.Text = "temperature (°C)"
	shadePhases(p, rep.Phases, scale)
	// A node with very many components gets one legend entry per kind, so
	// the legend stays readable; colours still tell the devices apart.
	byKind := len(rep.Components) > maxLegend
	perKind := map[string]int{}
	for _, c := range rep.Components {
		perKind[c.Kind]++
	}
	legend := map[string]bool{}
	devices := map[string]int{}
	n := 0
	var fitLine *plotter.Line
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, c := range rep.Components {
		s := c.Series
		if s == nil || len(s.T) < minPoints {
			continue
		}
		for i, v := range s.V {
			lo, hi := v, v
			if s.Min != nil {
				lo, hi = min(lo, s.Min[i]), max(hi, s.Max[i])
			}
			ylo, yhi = min(ylo, lo), max(yhi, hi)
		}
		key := deviceKey(c)
		if _, ok := devices[key]; !ok {
			devices[key] = len(devices)
		}
		col := colour(devices[key])
		if byKind && kindColors[c.Kind] != nil && !isGPU(c.Kind) {
			col = kindColors[c.Kind]
		}
		if s.Min != nil {
			band, err := plotter.NewPolygon(bandXYs(s.T, s.Min, s.Max, scale))
			if err != nil {
				return nil, fmt.Errorf("plot %s band: %w", c.ID, err)
			}
			band.Color = fade(col)
			band.LineStyle.Width = 0
			p.Add(band)
		}
		l, err := plotter.NewLine(thin(s.T, s.V, scale))
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", c.ID, err)
		}
		l.Color = col
		l.Width = vg.Points(1.2)
		switch c.Kind {
		case analysis.KindCoolant, analysis.KindWater:
			l.Width = vg.Points(2.5)
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		case analysis.KindGPUMem:
			l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		}
		p.Add(l)
		if fl, err := overlayFits(p, c, scale); err != nil {
			return nil, err
		} else if fl != nil {
			fitLine = fl
		}
		switch {
		case !byKind:
			p.Legend.Add(c.ID, l)
		case !legend[c.Kind]:
			legend[c.Kind] = true
			p.Legend.Add(fmt.Sprintf("%s (%d)", analysis.KindName(c.Kind), perKind[c.Kind]), l)
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("temperatures: %w", ErrNothingToPlot)
	}
	if fitLine != nil {
		p.Legend.Add("fitted model", fitLine)
	}
	// Each device's own limit is a line, and the axis reaches it: the
	// margin to it is what a reader looks for first.
	llo, lhi, err := addLimits(p, rep, rep.Run.EndS*scale)
	if err != nil {
		return nil, err
	}
	ylo, yhi = min(ylo, llo), max(yhi, lhi)
	p.Add(plotter.NewGrid())
	// The axes are the readings' and the limits': a fitted curve that
	// strays from them is cut at the frame rather than stretching the axis.
	pad := max(0.5, 0.03*(yhi-ylo))
	p.Y.Min, p.Y.Max = ylo-pad, yhi+pad
	p.X.Min, p.X.Max = 0, rep.Run.EndS*scale
	return p, nil
}

func isGPU(kind string) bool { return kind == analysis.KindGPUCore || kind == analysis.KindGPUMem }

// deviceKey groups a GPU's core and memory temperature under one colour:
// component IDs are [host/]kind:device.
func deviceKey(c analysis.ComponentResult) string {
	if !isGPU(c.Kind) {
		return c.ID
	}
	host, id, ok := strings.Cut(c.ID, "/")
	if !ok {
		host, id = "", c.ID
	}
	_, dev, _ := strings.Cut(id, ":")
	return host + "/gpu:" + dev
}

// timeScale picks seconds, minutes or hours for the time axis, so that a
// short run's ticks are not fractions of a minute.
func timeScale(endS float64) (float64, string) {
	switch {
	case endS > 3*3600:
		return 1.0 / 3600, "h"
	case endS <= 300:
		return 1, "s"
	}
	return 1.0 / 60, "min"
}

// thin returns at most maxPoints points of t, v: the lowest and highest
// reading of each time bucket, in time order.
func thin(t, v []float64, scale float64) plotter.XYs {
	if len(t) <= maxPoints {
		xy := make(plotter.XYs, len(t))
		for i := range t {
			xy[i] = plotter.XY{X: t[i] * scale, Y: v[i]}
		}
		return xy
	}
	buckets := maxPoints / 2
	t0, span := t[0], t[len(t)-1]-t[0]
	xy := make(plotter.XYs, 0, maxPoints)
	for i := 0; i < len(t); {
		b := int(float64(buckets) * (t[i] - t0) / span)
		lo, hi := i, i
		j := i
		for ; j < len(t) && int(float64(buckets)*(t[j]-t0)/span) == b; j++ {
			if v[j] < v[lo] {
				lo = j
			}
			if v[j] > v[hi] {
				hi = j
			}
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		xy = append(xy, plotter.XY{X: t[lo] * scale, Y: v[lo]})
		if hi != lo {
			xy = append(xy, plotter.XY{X: t[hi] * scale, Y: v[hi]})
		}
		i = j
	}
	return xy
}

// bandXYs returns the outline of the band between lo and hi, thinned.
func bandXYs(t, lo, hi []float64, scale float64) plotter.XYs {
	l := thin(t, lo, scale)
	h := thin(t, hi, scale)
	out := make(plotter.XYs, 0, len(l)+len(h))
	out = append(out, l...)
	for i := len(h) - 1; i >= 0; i-- {
		out = append(out, h[i])
	}
	return out
}

func fade(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 60}
}

// phaseShade fills a phase's stretch of the time axis from top to bottom.
type phaseShade struct {
	from, to float64
	color    color.Color
}

func (s phaseShade) Plot(c draw.Canvas, plt *gplot.Plot) {
	trX, _ := plt.Transforms(&c)
	x0, x1 := trX(s.from), trX(s.to)
	pts := []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}}
	c.FillPolygon(s.color, c.ClipPolygonXY(pts))
}

func (s phaseShade) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(s.color, c.ClipPolygonXY(pts))
}

// loadShade is the load phase's shade, in every figure that shows it.
var loadShade = color.NRGBA{R: 255, G: 120, B: 80, A: 45}

func shadePhases(p *gplot.Plot, ph analysis.Phases, scale float64) {
	for _, s := range []struct {
		name string
		sp   *analysis.Span
		col  color.Color
	}{
		{"baseline", ph.Baseline, color.NRGBA{R: 120, G: 160, B: 255, A: 40}},
		{"load", ph.Load, loadShade},
		{"cooldown", ph.Cooldown, color.NRGBA{R: 80, G: 200, B: 160, A: 40}},
	} {
		if s.sp == nil {
			continue
		}
		sh := phaseShade{from: s.sp.Start * scale, to: s.sp.End * scale, color: s.col}
		p.Add(sh)
		p.Legend.Add(s.name+" phase", sh)
	}
	// A load trimmed to its powered span: the recorded tail, after the
	// work had ended, is shaded apart so the reader sees what was left out.
	if ld, end := ph.Load, ph.LoadRecordedEndS; ld != nil && end != nil && *end > ld.End {
		sh := phaseShade{from: ld.End * scale, to: *end * scale, color: trimmedShade}
		p.Add(sh)
		p.Legend.Add("load after the work ended (left out)", sh)
	}
}

// trimmedShade marks the recorded load after the work had ended.
var trimmedShade = color.NRGBA{R: 120, G: 120, B: 120, A: 50}

// HeatIntervals draws each component's heat-accumulation interval as a
// bar, with the band the analysis computed over the peak's variants as a
// whisker; components without one are left out, never drawn as zero. Bars
// stand one unit apart on a nominal axis with half a unit of margin at
// either end, so none sits on the axis's edge, and the axis reaches above
// the tallest bar and whisker.
func HeatIntervals(rep *analysis.Report) (*gplot.Plot, error) {
	var bars intervalBars
	var names []string
	for _, c := range rep.Components {
		if c.HeatIntervalSPerC == nil {
			continue
		}
		b := bar{x: float64(len(names)), halfW: barHalfWidth, v: *c.HeatIntervalSPerC, lo: math.NaN(), hi: math.NaN(), color: colour(0)}
		if band := c.HeatIntervalBand; band != nil {
			b.lo, b.hi = band.LoSPerC, band.HiSPerC
		}
		bars.bars = append(bars.bars, b)
		names = append(names, c.ID)
	}
	if len(bars.bars) == 0 {
		return nil, fmt.Errorf("heat intervals: %w", ErrNothingToPlot)
	}
	bars.slots = len(names)
	p := gplot.New()
	p.Title.Text = "Heat-accumulation interval: run " + rep.Run.ID
	p.Y.Label.Text = "heat-accumulation interval (s/°C; lower heats faster)"
	p.Add(plotter.NewGrid(), bars)
	p.NominalX(names...)
	p.Legend.Add("interval", swatch{colour(0)})
	if bars.banded() {
		p.Legend.Add("band over the peak's variants", whisker{})
	}
	p.Y.Min, p.Y.Max = 0, 1.08*p.Y.Max
	if len(names) > 4 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	return p, nil
}

// bar is one interval at x, halfW wide either side in data units, in its
// colour, with its band (NaN: none).
type bar struct {
	x, halfW  float64
	v, lo, hi float64
	color     color.Color
}

// intervalBars draws bars in data units, so their spacing and width follow
// the axis, whatever the figure's size; slots is the number of nominal
// positions (0, 1, ...), each given half a unit of margin either side.
type intervalBars struct {
	bars  []bar
	slots int
}

// barHalfWidth is half a bar's width in units of the spacing between
// nominal positions.
const barHalfWidth = 0.3

func (b intervalBars) banded() bool {
	for _, x := range b.bars {
		if !math.IsNaN(x.lo) {
			return true
		}
	}
	return false
}

func (b intervalBars) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	outline := draw.LineStyle{Color: color.Black, Width: vg.Points(0.5)}
	for _, x := range b.bars {
		x0, x1 := trX(x.x-x.halfW), trX(x.x+x.halfW)
		y0, y1 := trY(0), trY(x.v)
		pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}, {X: x0, Y: y0}}
		c.FillPolygon(x.color, c.ClipPolygonXY(pts))
		c.StrokeLines(outline, c.ClipLinesXY(pts)...)
		if math.IsNaN(x.lo) {
			continue
		}
		xm, cap := trX(x.x), (x1-x0)/4
		lo, hi := trY(x.lo), trY(x.hi)
		c.StrokeLines(whiskerStyle, c.ClipLinesXY([]vg.Point{{X: xm, Y: lo}, {X: xm, Y: hi}},
			[]vg.Point{{X: xm - cap, Y: lo}, {X: xm + cap, Y: lo}}, []vg.Point{{X: xm - cap, Y: hi}, {X: xm + cap, Y: hi}})...)
	}
}

// DataRange puts half a spacing beside the outer positions and takes the
// bands into the height.
func (b intervalBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	for _, x := range b.bars {
		ymax = max(ymax, x.v)
		if !math.IsNaN(x.hi) {
			ymax = max(ymax, x.hi)
		}
	}
	return -0.5, float64(b.slots) - 0.5, 0, ymax
}

var whiskerStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.2)}

// whisker is the band's legend entry: an upright line with caps.
type whisker struct{}

func (whisker) Thumbnail(c *draw.Canvas) {
	xm, w := (c.Min.X+c.Max.X)/2, (c.Max.X-c.Min.X)/4
	c.StrokeLines(whiskerStyle, []vg.Point{{X: xm, Y: c.Min.Y}, {X: xm, Y: c.Max.Y}},
		[]vg.Point{{X: xm - w, Y: c.Min.Y}, {X: xm + w, Y: c.Min.Y}}, []vg.Point{{X: xm - w, Y: c.Max.Y}, {X: xm + w, Y: c.Max.Y}})
}

// PumpCycles draws heat removed per complete cycle against the coolant
// temperature at its start, with the fitted line when there is one.
func PumpCycles(rep *analysis.Report) (*gplot.Plot, error) {
	var xy plotter.XYs
	for _, c := range rep.PumpCycles {
		if c.Complete && c.StartCoolantC != nil && c.HeatRemovedKJ != nil {
			xy = append(xy, plotter.XY{X: *c.StartCoolantC, Y: *c.HeatRemovedKJ})
		}
	}
	if len(xy) < minPoints {
		return nil, fmt.Errorf("pump cycles: %d complete cycles: %w", len(xy), ErrNothingToPlot)
	}
	p := gplot.New()
	p.Title.Text = "Heat removed per pump cycle: run " + rep.Run.ID
	p.X.Label.Text = "coolant temperature at the cycle's start (°C)"
	p.Y.Label.Text = "heat removed (kJ)"
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, fmt.Errorf("pump cycles: %w", err)
	}
	sc.Color = colour(0)
	sc.Shape = draw.CircleGlyph{}
	p.Add(sc, plotter.NewGrid())
	p.Legend.Add(fmt.Sprintf("complete cycles (%d)", len(xy)), sc)
	if f := rep.PumpCycleFit; f != nil {
		xmin, xmax, _, _ := plotter.XYRange(xy)
		line := plotter.NewFunction(func(x float64) float64 { return f.InterceptKJ + f.SlopeKJPerC*x })
		line.XMin, line.XMax = xmin, xmax
		line.Color = colour(1)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("fit: %.0f kJ + %.1f kJ/°C·T (r² %.2f)", f.InterceptKJ, f.SlopeKJPerC, f.R2), line)
	}
	// Cycles starting at one temperature would zoom the axes into a point;
	// heat removed is not negative when no cycle's is.
	atLeast(&p.X, 2)
	atLeast(&p.Y, max(1, 0.2*math.Abs((p.Y.Min+p.Y.Max)/2)))
	if _, _, ymin, _ := plotter.XYRange(xy); ymin >= 0 {
		floor(&p.Y, 0)
	}
	return p, nil
}

// CompareHeatIntervals draws, per component kind, one bar per run: the mean
// heat interval of that kind's components, the runs side by side within
// the kind's slot (as HeatIntervals, in data units, none on the axis's
// edge). A kind with no interval in a run has no bar there, and the run's
// legend entry says which and why.
func CompareHeatIntervals(cmp *analysis.Comparison) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = "Heat-accumulation interval by component kind"
	p.Y.Label.Text = "heat-accumulation interval (s/°C; lower heats faster)"
	nRuns := len(cmp.Runs)
	bars := intervalBars{slots: len(cmp.Kinds)}
	// The runs share 80 % of a slot; each bar takes 90 % of its share.
	share := 0.8 / float64(max(nRuns, 1))
	for r := 0; r < nRuns; r++ {
		var missing []string
		for k, kc := range cmp.Kinds {
			s := kc.PerRun[r]
			if s.HeatIntervalSPerC == nil {
				missing = append(missing, analysis.KindName(kc.Kind))
				continue
			}
			bars.bars = append(bars.bars, bar{x: float64(k) + (float64(r)-float64(nRuns-1)/2)*share, halfW: 0.45 * share,
				v: *s.HeatIntervalSPerC, lo: math.NaN(), hi: math.NaN(), color: colour(r)})
		}
		label := fmt.Sprintf("%s: %s", cmp.Labels[r], cmp.Runs[r].Run.ID)
		if len(missing) > 0 {
			label += "; no bar for " + strings.Join(missing, ", ") + " (no heat interval computed)"
		}
		p.Legend.Add(label, swatch{colour(r)})
	}
	if len(bars.bars) == 0 {
		return nil, fmt.Errorf("compare heat intervals: %w", ErrNothingToPlot)
	}
	var kinds []string
	for _, kc := range cmp.Kinds {
		kinds = append(kinds, analysis.KindName(kc.Kind))
	}
	p.Add(plotter.NewGrid(), bars)
	p.NominalX(kinds...)
	p.Y.Min, p.Y.Max = 0, 1.08*p.Y.Max
	return p, nil
}

// swatch is a legend entry's filled square of a colour.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.c, c.ClipPolygonXY([]vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}))
}

// figure is one plot to draw.
type figure struct {
	name, title string
	draw        func() (drawable, error)
	height      vg.Length // 0: figureH
}

// plain frames a plot-returning function as a figure's draw.
func plain(f func() (*gplot.Plot, error)) func() (drawable, error) {
	return func() (drawable, error) {
		p, err := f()
		if err != nil {
			return nil, err
		}
		return framed{p: p}, nil
	}
}

// writeAll draws figs; with dir set it also writes each as name.svg and
// name.png there. A figure without data is skipped.
func writeAll(dir string, figs []figure) ([]report.Figure, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("plots: %w", err)
		}
	}
	var out []report.Figure
	var errs []error
	for _, f := range figs {
		d, err := f.draw()
		if errors.Is(err, ErrNothingToPlot) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h := f.height
		if h == 0 {
			h = figureH
		}
		svg, png, err := render(d, h)
		if err != nil {
			errs = append(errs, fmt.Errorf("plot %s: %w", f.name, err))
			continue
		}
		fig := report.Figure{Title: f.title, Data: svg}
		if dir != "" {
			fig.SVG, fig.PNG = f.name+".svg", f.name+".png"
			if err := save(dir, fig, png); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		out = append(out, fig)
	}
	return out, errors.Join(errs...)
}

// WriteReport draws the figures of rep (temperatures, throughput,
// heat-intervals, pump-cycles, host) and returns those it drew, each with
// its SVG for inlining; with dir set it also writes them there as
// name.svg and name.png. A figure without data is skipped.
func WriteReport(dir string, rep *analysis.Report) ([]report.Figure, error) {
	return writeAll(dir, append([]figure{
		{name: "temperatures", title: "Temperatures over time, phases shaded, coolant dashed", draw: plain(func() (*gplot.Plot, error) { return Temperatures(rep) })},
		{name: "throughput", title: throughputTitle(rep), draw: func() (drawable, error) { return throughputFigure(rep) }},
		{name: "hold", title: "Hold: the component against its set point, and the duty the job ran at", draw: func() (drawable, error) { return holdFigure(rep) }},
		{name: "blind-spot", title: "Immersion blind spot: the component nearest its limit (or that rose most) against the coolant the tank's controller sees", draw: func() (drawable, error) { return BlindSpot(rep) }},
		{name: "heat-intervals", title: "Heat-accumulation interval per component", draw: plain(func() (*gplot.Plot, error) { return HeatIntervals(rep) })},
		{name: "pump-cycles", title: "Heat removed per pump cycle against coolant temperature at its start", draw: plain(func() (*gplot.Plot, error) { return PumpCycles(rep) })},
		{name: "host", title: "What the host recorded: CPU utilisation, memory used, load average", draw: func() (drawable, error) { return hostFigure(rep) }, height: 20 * vg.Centimeter},
	}, gpuFigures(rep)...)) // gpus.go: episodes, fingerprints, coupling
}

// WriteComparison draws the comparison's heat-interval bars, and with dir
// set writes them there, as WriteReport does.
func WriteComparison(dir string, cmp *analysis.Comparison) ([]report.Figure, error) {
	return writeAll(dir, append([]figure{
		{name: "heat-intervals-compared", title: "Heat-accumulation interval per component kind across runs", draw: plain(func() (*gplot.Plot, error) { return CompareHeatIntervals(cmp) })},
	}, comparedGPUFigures(cmp)...)) // gpus.go
}
