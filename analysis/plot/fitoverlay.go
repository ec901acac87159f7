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
// fit. A curve is drawn only over the stretch of its fit that has readings
// (x in [first, last reading] of that stretch), never extrapolated before
// or after them; the caller keeps the y axis to the readings, so a model
// that strays from them is cut at the frame.
func overlayFits(p *gplot.Plot, c analysis.ComponentResult, scale float64) (*plotter.Line, error) {
	var last *plotter.Line
	draw := func(from, to float64, at func(float64) float64) error {
		from, to, ok := covered(c.Series, from, to)
		if !ok {
			return nil
		}
		pts := make(plotter.XYs, fitSteps+1)
		for k := range pts {
			t := from + (to-from)*float64(k)/fitSteps
			pts[k] = plotter.XY{X: t * scale, Y: at(t)}
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

// covered narrows [from, to] to the first and last reading of s within
// it; ok is false when fewer than minPoints readings lie there.
func covered(s *analysis.Component, from, to float64) (lo, hi float64, ok bool) {
	if s == nil {
		return 0, 0, false
	}
	n := 0
	for _, t := range s.T {
		if t < from || t > to {
			continue
		}
		if n == 0 {
			lo = t
		}
		hi = t
		n++
	}
	return lo, hi, n >= minPoints
}
