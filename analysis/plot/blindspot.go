package plot

import (
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// BlindSpot draws the immersion blind spot: from the start of the load to
// the end of the recording, each component's rise over its own idle mean
// beside the coolant's rise over its idle mean (the only temperature a
// tank's controller sees), with, for each component that recorded a
// limit, the rise at which it reaches that limit as a line in its colour.
// A component far above its coolant and near its limit while the coolant
// line stays flat is the blind spot in one picture.
func BlindSpot(rep *analysis.Report) (*gplot.Plot, error) {
	if len(rep.BlindSpot) == 0 || rep.Phases.Load == nil {
		return nil, fmt.Errorf("blind spot: %w", ErrNothingToPlot)
	}
	byID := map[string]analysis.ComponentResult{}
	for _, c := range rep.Components {
		byID[c.ID] = c
	}
	from := rep.Phases.Load.Start
	scale, unit := timeScale(rep.Run.EndS - from)
	p := gplot.New()
	p.Title.Text = "Blind spot: rise over idle, components against their coolant: run " + rep.Run.ID
	p.X.Label.Text = "time since load start (" + unit + ")"
	p.Y.Label.Text = "rise over its own idle mean (°C)"
	load := rep.Phases.Load
	p.Add(phaseShade{from: 0, to: (load.End - from) * scale, color: loadShade})
	p.Legend.Add("load phase", phaseShade{color: loadShade})
	// rise draws c from the start of the load on, less its idle mean.
	rise := func(c analysis.ComponentResult) (*plotter.Line, error) {
		s := c.Series
		if s == nil || c.IdleMeanC == nil {
			return nil, nil
		}
		var t, v []float64
		for i, x := range s.T {
			if x >= from {
				t, v = append(t, x-from), append(v, s.V[i]-*c.IdleMeanC)
			}
		}
		if len(t) < minPoints {
			return nil, nil
		}
		l, err := plotter.NewLine(thin(t, v, scale))
		if err != nil {
			return nil, fmt.Errorf("blind spot %s: %w", c.ID, err)
		}
		return l, nil
	}
	coolants := map[string]bool{}
	drawn := 0
	for i, b := range rep.BlindSpot {
		c, ok := byID[b.Component]
		if !ok {
			continue
		}
		l, err := rise(c)
		if err != nil {
			return nil, err
		}
		if l == nil {
			continue
		}
		l.Color = notCoolant(i)
		l.Width = vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (rose %.1f °C)", c.ID, b.RiseC), l)
		drawn++
		if b.Limit != nil && c.IdleMeanC != nil {
			y := b.Limit.C - *c.IdleMeanC
			ll, err := plotter.NewLine(plotter.XYs{{X: 0, Y: y}, {X: (rep.Run.EndS - from) * scale, Y: y}})
			if err != nil {
				return nil, fmt.Errorf("blind spot %s limit: %w", c.ID, err)
			}
			ll.Color = notCoolant(i)
			ll.Width = vg.Points(1.5)
			ll.Dashes = limitDashes
			p.Add(ll)
			p.Legend.Add(fmt.Sprintf("%s at its %s limit %.0f °C", c.ID, b.Limit.Field, b.Limit.C), ll)
		}
		if coolants[b.Coolant] {
			continue
		}
		coolants[b.Coolant] = true
		k, ok := byID[b.Coolant]
		if !ok {
			continue
		}
		cl, err := rise(k)
		if err != nil {
			return nil, err
		}
		if cl == nil {
			continue
		}
		cl.Color = kindColors[analysis.KindCoolant]
		cl.Width = vg.Points(2.5)
		cl.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(cl)
		p.Legend.Add(fmt.Sprintf("%s, what the controller sees (rose %.2f °C)", k.ID, b.CoolantRiseC), cl)
	}
	if drawn == 0 {
		return nil, fmt.Errorf("blind spot: %w", ErrNothingToPlot)
	}
	p.Add(plotter.NewGrid())
	p.X.Min, p.X.Max = 0, (rep.Run.EndS-from)*scale
	if p.Y.Max-p.Y.Min < 1 || math.IsInf(p.Y.Max, 0) {
		atLeast(&p.Y, 1)
	}
	return p, nil
}

// notCoolant is the i-th colour of the palette without the coolant's
// green, so no component is mistaken for the coolant.
func notCoolant(i int) color.Color {
	j := i % (len(palette) - 1)
	if j >= 2 {
		j++
	}
	return palette[j]
}
