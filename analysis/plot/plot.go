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
	"path/filepath"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/analysis/report"
)

// maxPoints bounds the points drawn per line: a day at 1 Hz is 86,400
// readings, far more than a figure has pixels. Each bucket of time keeps its
// lowest and highest reading, so peaks survive the thinning.
const maxPoints = 2000

// maxLegend is the most components given a legend entry each.
const maxLegend = 8

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
// coolant and water dashed and heavier, and the phases shaded behind.
func Temperatures(rep *analysis.Report) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = "Temperatures: run " + rep.Run.ID
	scale, unit := timeScale(rep.Run.EndS)
	p.X.Label.Text = "time since start (" + unit + ")"
	p.Y.Label.Text = "°C"
	// Top right: after the load the curves have come down there.
	p.Legend.Top = true
	shadePhases(p, rep.Phases, scale)
	// A node with many components gets one colour and one legend entry per
	// kind, so the legend does not bury the curves.
	byKind := len(rep.Components) > maxLegend
	perKind := map[string]int{}
	for _, c := range rep.Components {
		perKind[c.Kind]++
	}
	legend := map[string]bool{}
	n, entries := 0, 0
	var fitLine *plotter.Line
	for _, sp := range []*analysis.Span{rep.Phases.Baseline, rep.Phases.Load, rep.Phases.Cooldown} {
		if sp != nil {
			entries++
		}
	}
	for i, c := range rep.Components {
		s := c.Series
		if s == nil || len(s.T) == 0 {
			continue
		}
		col := plotutil.Color(i)
		if byKind {
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
		l.Width = vg.Points(1)
		if c.Kind == analysis.KindCoolant || c.Kind == analysis.KindWater {
			l.Width = vg.Points(2.5)
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
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
			entries++
		case !legend[c.Kind]:
			legend[c.Kind] = true
			p.Legend.Add(fmt.Sprintf("%s (%d)", analysis.KindName(c.Kind), perKind[c.Kind]), l)
			entries++
		}
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("temperatures: %w", ErrNothingToPlot)
	}
	if fitLine != nil {
		p.Legend.Add("fitted model", fitLine)
		entries++
	}
	p.Add(plotter.NewGrid())
	// Headroom above the hottest curve for the legend, a line per entry.
	p.Y.Max += max(0.25, 0.06*float64(entries)) * (p.Y.Max - p.Y.Min)
	return p, nil
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
	p.Y.Label.Text = "s/°C (lower heats faster)"
	bars, err := plotter.NewBarChart(vals, vg.Points(18))
	if err != nil {
		return nil, fmt.Errorf("heat intervals: %w", err)
	}
	bars.Color = plotutil.Color(0)
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
	sc.Color = plotutil.Color(0)
	sc.Shape = draw.CircleGlyph{}
	p.Add(sc, plotter.NewGrid())
	p.Legend.Add("complete cycles", sc)
	if f := rep.PumpCycleFit; f != nil {
		xmin, xmax, _, _ := plotter.XYRange(xy)
		line := plotter.NewFunction(func(x float64) float64 { return f.InterceptKJ + f.SlopeKJPerC*x })
		line.XMin, line.XMax = xmin, xmax
		line.Color = plotutil.Color(1)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(fmt.Sprintf("fit: %.0f kJ + %.1f kJ/°C·T (r² %.2f)", f.InterceptKJ, f.SlopeKJPerC, f.R2), line)
	}
	p.Legend.Top = true
	return p, nil
}

// CompareHeatIntervals draws, per component kind, one bar per run: the mean
// heat interval of that kind's components. A kind with no interval in a run
// has no bar there.
func CompareHeatIntervals(cmp *analysis.Comparison) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = "Heat-accumulation interval by component kind"
	p.Y.Label.Text = "s/°C (lower heats faster)"
	var kinds []string
	w := vg.Points(14)
	nRuns := len(cmp.Runs)
	drawn := 0
	for r := 0; r < nRuns; r++ {
		legend := false
		for k, kc := range cmp.Kinds {
			s := kc.PerRun[r]
			if s.HeatIntervalSPerC == nil {
				continue
			}
			bar, err := plotter.NewBarChart(plotter.Values{*s.HeatIntervalSPerC}, w)
			if err != nil {
				return nil, fmt.Errorf("compare heat intervals: %w", err)
			}
			bar.XMin = float64(k)
			bar.Offset = vg.Length(float64(r)-float64(nRuns-1)/2) * w
			bar.Color = plotutil.Color(r)
			p.Add(bar)
			drawn++
			if !legend {
				p.Legend.Add(fmt.Sprintf("%s: %s", cmp.Labels[r], cmp.Runs[r].Run.ID), bar)
				legend = true
			}
		}
	}
	if drawn == 0 {
		return nil, fmt.Errorf("compare heat intervals: %w", ErrNothingToPlot)
	}
	for _, kc := range cmp.Kinds {
		kinds = append(kinds, analysis.KindName(kc.Kind))
	}
	p.NominalX(kinds...)
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p, nil
}

// save writes p as name.svg and name.png in dir.
func save(p *gplot.Plot, dir, name, title string) (report.Figure, error) {
	f := report.Figure{Title: title, SVG: name + ".svg", PNG: name + ".png"}
	for _, file := range []string{f.SVG, f.PNG} {
		if err := p.Save(24*vg.Centimeter, 13*vg.Centimeter, filepath.Join(dir, file)); err != nil {
			return f, fmt.Errorf("save plot %s: %w", filepath.Join(dir, file), err)
		}
	}
	return f, nil
}

// figure is one plot to draw.
type figure struct {
	name, title string
	draw        func() (*gplot.Plot, error)
}

func writeAll(dir string, figs []figure) ([]report.Figure, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	var out []report.Figure
	var errs []error
	for _, f := range figs {
		p, err := f.draw()
		if errors.Is(err, ErrNothingToPlot) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fig, err := save(p, dir, f.name, f.title)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, fig)
	}
	return out, errors.Join(errs...)
}

// WriteReport writes the figures of rep into dir (temperatures.svg/.png,
// heat-intervals, pump-cycles) and returns those it drew; a figure without
// data is skipped.
func WriteReport(dir string, rep *analysis.Report) ([]report.Figure, error) {
	return writeAll(dir, []figure{
		{"temperatures", "Temperatures over time, phases shaded, coolant dashed", func() (*gplot.Plot, error) { return Temperatures(rep) }},
		{"heat-intervals", "Heat-accumulation interval per component", func() (*gplot.Plot, error) { return HeatIntervals(rep) }},
		{"pump-cycles", "Heat removed per pump cycle against coolant temperature at its start", func() (*gplot.Plot, error) { return PumpCycles(rep) }},
	})
}

// WriteComparison writes the comparison's heat-interval bars into dir.
func WriteComparison(dir string, cmp *analysis.Comparison) ([]report.Figure, error) {
	return writeAll(dir, []figure{
		{"heat-intervals-compared", "Heat-accumulation interval per component kind across runs", func() (*gplot.Plot, error) { return CompareHeatIntervals(cmp) }},
	})
}
