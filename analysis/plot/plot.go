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

// ErrNothingToPlot says a figure has no data (no component, no cycle).
var ErrNothingToPlot = errors.New("nothing to plot")

// Temperatures draws every component's temperature over the run, CPU chips
// as their mean with the band between their coolest and hottest sensor,
// coolant and water dashed and heavier, and the phases shaded behind. Each
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
	for _, c := range rep.Components {
		s := c.Series
		if s == nil || len(s.T) == 0 {
			continue
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
	p.Add(plotter.NewGrid())
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

func shadePhases(p *gplot.Plot, ph analysis.Phases, scale float64) {
	for _, s := range []struct {
		name string
		sp   *analysis.Span
		col  color.Color
	}{
		{"baseline", ph.Baseline, color.NRGBA{R: 120, G: 160, B: 255, A: 40}},
		{"load", ph.Load, color.NRGBA{R: 255, G: 120, B: 80, A: 45}},
		{"cooldown", ph.Cooldown, color.NRGBA{R: 80, G: 200, B: 160, A: 40}},
	} {
		if s.sp == nil {
			continue
		}
		sh := phaseShade{from: s.sp.Start * scale, to: s.sp.End * scale, color: s.col}
		p.Add(sh)
		p.Legend.Add(s.name+" phase", sh)
	}
}

// HeatIntervals draws each component's heat-accumulation interval as a bar;
// components without one are left out, never drawn as zero.
func HeatIntervals(rep *analysis.Report) (*gplot.Plot, error) {
	var vals plotter.Values
	var names []string
	for _, c := range rep.Components {
		if c.HeatIntervalSPerC != nil {
			vals = append(vals, *c.HeatIntervalSPerC)
			names = append(names, c.ID)
		}
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("heat intervals: %w", ErrNothingToPlot)
	}
	p := gplot.New()
	p.Title.Text = "Heat-accumulation interval: run " + rep.Run.ID
	p.Y.Label.Text = "heat-accumulation interval (s/°C; lower heats faster)"
	bars, err := plotter.NewBarChart(vals, vg.Points(18))
	if err != nil {
		return nil, fmt.Errorf("heat intervals: %w", err)
	}
	bars.Color = colour(0)
	p.Add(bars, plotter.NewGrid())
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	return p, nil
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
	if len(xy) == 0 {
		return nil, fmt.Errorf("pump cycles: %w", ErrNothingToPlot)
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
	// One cycle, or cycles starting at one temperature, would zoom the axes
	// into a point.
	atLeast(&p.X, 2)
	atLeast(&p.Y, max(1, 0.2*math.Abs((p.Y.Min+p.Y.Max)/2)))
	return p, nil
}

// CompareHeatIntervals draws, per component kind, one bar per run: the mean
// heat interval of that kind's components. A kind with no interval in a run
// has no bar there, and the run's legend entry says which and why.
func CompareHeatIntervals(cmp *analysis.Comparison) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = "Heat-accumulation interval by component kind"
	p.Y.Label.Text = "heat-accumulation interval (s/°C; lower heats faster)"
	var kinds []string
	w := vg.Points(14)
	nRuns := len(cmp.Runs)
	drawn := 0
	for r := 0; r < nRuns; r++ {
		var missing []string
		for k, kc := range cmp.Kinds {
			s := kc.PerRun[r]
			if s.HeatIntervalSPerC == nil {
				missing = append(missing, analysis.KindName(kc.Kind))
				continue
			}
			bar, err := plotter.NewBarChart(plotter.Values{*s.HeatIntervalSPerC}, w)
			if err != nil {
				return nil, fmt.Errorf("compare heat intervals: %w", err)
			}
			bar.XMin = float64(k)
			bar.Offset = vg.Length(float64(r)-float64(nRuns-1)/2) * w
			bar.Color = colour(r)
			p.Add(bar)
			drawn++
		}
		label := fmt.Sprintf("%s: %s", cmp.Labels[r], cmp.Runs[r].Run.ID)
		if len(missing) > 0 {
			label += "; no bar for " + strings.Join(missing, ", ") + " (no heat interval computed)"
		}
		p.Legend.Add(label, swatch{colour(r)})
	}
	if drawn == 0 {
		return nil, fmt.Errorf("compare heat intervals: %w", ErrNothingToPlot)
	}
	for _, kc := range cmp.Kinds {
		kinds = append(kinds, analysis.KindName(kc.Kind))
	}
	p.NominalX(kinds...)
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
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

func writeAll(dir string, figs []figure) ([]report.Figure, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
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
		fig, err := save(d, dir, f.name, f.title, h)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, fig)
	}
	return out, errors.Join(errs...)
}

// WriteReport writes the figures of rep into dir (temperatures.svg/.png,
// throughput, heat-intervals, pump-cycles, host) and returns those it
// drew; a figure without data is skipped.
func WriteReport(dir string, rep *analysis.Report) ([]report.Figure, error) {
	return writeAll(dir, append([]figure{
		{name: "temperatures", title: "Temperatures over time, phases shaded, coolant dashed", draw: plain(func() (*gplot.Plot, error) { return Temperatures(rep) })},
		{name: "throughput", title: "The workload's throughput per iteration over the load, the hottest temperature on the right axis when one was recorded", draw: func() (drawable, error) { return throughputFigure(rep) }},
		{name: "heat-intervals", title: "Heat-accumulation interval per component", draw: plain(func() (*gplot.Plot, error) { return HeatIntervals(rep) })},
		{name: "pump-cycles", title: "Heat removed per pump cycle against coolant temperature at its start", draw: plain(func() (*gplot.Plot, error) { return PumpCycles(rep) })},
		{name: "host", title: "What the host recorded: CPU utilisation, memory used, load average", draw: func() (drawable, error) { return hostFigure(rep) }, height: 20 * vg.Centimeter},
	}, gpuFigures(rep)...)) // gpus.go: episodes, fingerprints, coupling
}

// WriteComparison writes the comparison's heat-interval bars into dir.
func WriteComparison(dir string, cmp *analysis.Comparison) ([]report.Figure, error) {
	return writeAll(dir, append([]figure{
		{name: "heat-intervals-compared", title: "Heat-accumulation interval per component kind across runs", draw: plain(func() (*gplot.Plot, error) { return CompareHeatIntervals(cmp) })},
	}, comparedGPUFigures(cmp)...)) // gpus.go
}
