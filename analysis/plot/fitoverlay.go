package plot

import (
	"fmt"
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// fitSteps is how many points draw each fitted curve: smooth at any width.
const fitSteps = 200

// overlayFits draws c's fitted load rise and cooldown over its readings,
// dotted black so that a reader sees where the model leaves the data; it
// returns the last line drawn (for one legend entry), or nil when c has no
// fit.
func overlayFits(p *gplot.Plot, c analysis.ComponentResult, scale float64) (*plotter.Line, error) {
	var last *plotter.Line
	draw := func(from, to float64, at func(float64) float64) error {
		pts := make(plotter.XYs, fitSteps+1)
		for k := range pts {
			t := from + (to-from)*float64(k)/fitSteps
			pts[k] = plotter.XY{X: t / scale, Y: at(t)}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot %s fit: %w", c.ID, err)
		}
		l.Color = color.Black
		l.Width = vg.Points(1)
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(l)
		last = l
		return nil
	}
	if f := c.LoadFit; f != nil {
		if err := draw(f.FromS, f.ToS, f.At); err != nil {
			return nil, err
		}
	}
	if f := c.CooldownFit; f != nil {
		if err := draw(f.FromS, f.ToS, f.At); err != nil {
			return nil, err
		}
	}
	return last, nil
}
