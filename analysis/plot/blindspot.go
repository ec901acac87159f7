package plot

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// worstBlindSpot is the component the blind-spot figure shows: the one
// that came near its limit first, else the one that rose most above its
// coolant's rise (the summary's sentence names the same one).
func worstBlindSpot(rep *analysis.Report) *analysis.BlindSpot {
	if len(rep.BlindSpot) == 0 {
		return nil
	}
	bs := append([]analysis.BlindSpot(nil), rep.BlindSpot...)
	sort.SliceStable(bs, func(i, j int) bool {
		ni, nj := bs[i].NearLimitAtS != nil, bs[j].NearLimitAtS != nil
		if ni != nj {
			return ni
		}
		if ni && *bs[i].NearLimitAtS != *bs[j].NearLimitAtS {
			return *bs[i].NearLimitAtS < *bs[j].NearLimitAtS
		}
		return bs[i].RiseC-bs[i].CoolantRiseC > bs[j].RiseC-bs[j].CoolantRiseC
	})
	return &bs[0]
}

// BlindSpot draws the immersion blind spot of the worst component over the
// load and what follows: its readings against its own limit (a line) and
// the limit less N (dashed), with markers where it came within N of the
// limit and where the coolant, the only temperature a tank's controller
// sees, had moved; the coolant on the right axis, with the controller's
// threshold when one is known. A component nearing its limit while the
// coolant's line stays flat is the blind spot in one picture.
func BlindSpot(rep *analysis.Report) (drawable, error) {
	b := worstBlindSpot(rep)
	if b == nil {
		return nil, fmt.Errorf("blind spot: %w", ErrNothingToPlot)
	}
	var comp, cool *analysis.Component
	for _, c := range rep.Components {
		switch c.ID {
		case b.Component:
			comp = c.Series
		case b.Coolant:
			cool = c.Series
		}
	}
	from, to := b.FromS, rep.Run.EndS
	ct, cv := within(comp, from, to)
	kt, kv := within(cool, from, to)
	if len(ct) < minPoints || len(kt) < minPoints {
		return nil, fmt.Errorf("blind spot %s: %w", b.Component, ErrNothingToPlot)
	}
	scale, unit := timeScale(rep.Run.EndS)
	p := gplot.New()
	p.Title.Text = b.Component + " against the coolant the tank's controller sees: run " + rep.Run.ID
	p.X.Label.Text = "time since start (" + unit + ")"
	p.Y.Label.Text = b.Component + " temperature (°C)"
	sh := phaseShade{from: b.FromS * scale, to: b.ToS * scale, color: loadShade}
	p.Add(sh, plotter.NewGrid())
	p.Legend.Add("load", sh)
	l, err := plotter.NewLine(thin(ct, cv, scale))
	if err != nil {
		return nil, fmt.Errorf("blind spot %s: %w", b.Component, err)
	}
	l.Color, l.Width = notCoolant(0), vg.Points(1.5)
	p.Add(l)
	p.Legend.Add(fmt.Sprintf("%s (rose %.1f °C)", b.Component, b.RiseC), l)
	lo, hi := minMax(cv)
	horizontal := func(y float64, dashes []vg.Length, label string) error {
		h, err := plotter.NewLine(plotter.XYs{{X: from * scale, Y: y}, {X: to * scale, Y: y}})
		if err != nil {
			return fmt.Errorf("blind spot %s: %w", label, err)
		}
		h.Color, h.Width, h.Dashes = limitColour, vg.Points(1.5), dashes
		p.Add(h)
		p.Legend.Add(label, h)
		return nil
	}
	if b.Limit != nil {
		if err := horizontal(b.Limit.C, nil, fmt.Sprintf("limit %s %.0f °C", b.Limit.Field, b.Limit.C)); err != nil {
			return nil, err
		}
		if err := horizontal(b.Limit.C-b.NearLimitC, limitDashes, fmt.Sprintf("limit − %.3g °C", b.NearLimitC)); err != nil {
			return nil, err
		}
		hi = max(hi, b.Limit.C)
	}
	pad := max(0.5, 0.03*(hi-lo))
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.X.Min, p.X.Max = from*scale, to*scale
	// The coolant on the right axis, its own scale: it moves a fraction of
	// a degree where the component moves tens.
	klo, khi := minMax(kv)
	if b.ControllerC != nil {
		khi = max(khi, *b.ControllerC)
	}
	kpad := max(0.25, 0.05*(khi-klo))
	right := &rightAxis{label: b.Coolant + " (°C)", min: klo - kpad, max: khi + kpad}
	kxy := thin(kt, kv, scale)
	for i := range kxy {
		kxy[i].Y = right.toLeft(p, kxy[i].Y)
	}
	kl, err := plotter.NewLine(kxy)
	if err != nil {
		return nil, fmt.Errorf("blind spot %s: %w", b.Coolant, err)
	}
	kl.Color, kl.Width = kindColors[analysis.KindCoolant], vg.Points(2.5)
	kl.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(kl)
	p.Legend.Add(fmt.Sprintf("%s, right axis (rose %.2f °C)", b.Coolant, b.CoolantRiseC), kl)
	if b.ControllerC != nil {
		y := right.toLeft(p, *b.ControllerC)
		c, err := plotter.NewLine(plotter.XYs{{X: from * scale, Y: y}, {X: to * scale, Y: y}})
		if err != nil {
			return nil, fmt.Errorf("blind spot controller: %w", err)
		}
		c.Color, c.Width, c.Dashes = kindColors[analysis.KindCoolant], vg.Points(1), []vg.Length{vg.Points(1), vg.Points(2)}
		p.Add(c)
		p.Legend.Add(fmt.Sprintf("controller acts at %.1f °C (right axis)", *b.ControllerC), c)
	}
	vertical := func(at float64, label string, col int) error {
		v, err := plotter.NewLine(plotter.XYs{{X: at * scale, Y: p.Y.Min}, {X: at * scale, Y: p.Y.Max}})
		if err != nil {
			return fmt.Errorf("blind spot marker: %w", err)
		}
		v.Color, v.Width = colour(col), vg.Points(1)
		p.Add(v)
		p.Legend.Add(label, v)
		return nil
	}
	if b.NearLimitAtS != nil {
		if err := vertical(*b.NearLimitAtS, fmt.Sprintf("within %.3g °C of its limit at %.0f s", b.NearLimitC, *b.NearLimitAtS), 7); err != nil {
			return nil, err
		}
	}
	if b.CoolantMovedAtS != nil {
		if err := vertical(*b.CoolantMovedAtS, fmt.Sprintf("coolant moved %.3g °C at %.0f s", b.CoolantMoveC, *b.CoolantMovedAtS), 2); err != nil {
			return nil, err
		}
	} else {
		p.Legend.Add(fmt.Sprintf("coolant never moved %.3g °C", b.CoolantMoveC))
	}
	return framed{p: p, right: right}, nil
}

// within returns the readings of c from from to to.
func within(c *analysis.Component, from, to float64) (t, v []float64) {
	if c == nil {
		return nil, nil
	}
	for i, x := range c.T {
		if x >= from && x <= to {
			t, v = append(t, x), append(v, c.V[i])
		}
	}
	return t, v
}

func minMax(v []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
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
