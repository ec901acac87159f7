package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/heatsink-hpc/heatsink/analysis/report"
)

// palette tells up to ten series apart (Tableau 10, which stays
// distinguishable in print and for the common colour-vision deficiencies
// better than gonum's seven): an 8-GPU node gets a colour per GPU.
var palette = []color.Color{
	color.NRGBA{R: 31, G: 119, B: 180, A: 255},
	color.NRGBA{R: 255, G: 127, B: 14, A: 255},
	color.NRGBA{R: 44, G: 160, B: 44, A: 255},
	color.NRGBA{R: 214, G: 39, B: 40, A: 255},
	color.NRGBA{R: 148, G: 103, B: 189, A: 255},
	color.NRGBA{R: 140, G: 86, B: 75, A: 255},
	color.NRGBA{R: 227, G: 119, B: 194, A: 255},
	color.NRGBA{R: 127, G: 127, B: 127, A: 255},
	color.NRGBA{R: 188, G: 189, B: 34, A: 255},
	color.NRGBA{R: 23, G: 190, B: 207, A: 255},
}

// colour is the i-th colour of the palette, repeating after ten.
func colour(i int) color.Color { return palette[i%len(palette)] }

// drawable is a figure ready to be drawn onto a canvas.
type drawable interface{ Draw(draw.Canvas) }

// framed draws a plot with its legend beside the data, never over it, and
// with an optional second y axis on the right. legendW, when set, is the
// room kept for the legend whatever its own width (stack aligns its panels
// with it).
type framed struct {
	p       *gplot.Plot
	right   *rightAxis
	legendW vg.Length
}

// rightAxis is a second quantity drawn against the plot's y axis after a
// linear map, with its own scale on the right edge.
type rightAxis struct {
	label    string
	min, max float64 // its range, drawn over the left axis's range
}

// toLeft maps a right-axis value onto the left axis of p.
func (r *rightAxis) toLeft(p *gplot.Plot, v float64) float64 {
	if r.max == r.min {
		return (p.Y.Min + p.Y.Max) / 2
	}
	return p.Y.Min + (v-r.min)/(r.max-r.min)*(p.Y.Max-p.Y.Min)
}

const gap = vg.Length(6)

func (f framed) Draw(c draw.Canvas) {
	leg := f.p.Legend
	f.p.Legend = gplot.NewLegend()
	defer func() { f.p.Legend = leg }()
	leg.Top, leg.Left = true, true
	legW := f.legendW
	if legW == 0 {
		legW = legendWidth(leg, c)
	}
	axisW := f.right.width(f.p)
	plotC := draw.Crop(c, 0, -(legW + axisW), 0, 0)
	f.p.Draw(plotC)
	data := f.p.DataCanvas(plotC)
	if f.right != nil {
		f.right.draw(c, data, f.p)
	}
	if legW > 0 {
		legC := c
		legC.Min.X = c.Max.X - legW + gap
		legC.Max.Y = data.Max.Y
		leg.Draw(legC)
	}
}

// legendWidth is the room a legend takes beside a plot on c: its own
// width and a gap either side, at most 40 % of the figure.
func legendWidth(leg gplot.Legend, c draw.Canvas) vg.Length {
	leg.Top, leg.Left = true, true
	if r := leg.Rectangle(c); r.Size().X > 0 {
		return min(r.Size().X+2*gap, c.Size().X*0.4)
	}
	return 0
}

// width is the room the right axis takes: ticks, their labels, its title.
func (r *rightAxis) width(p *gplot.Plot) vg.Length {
	if r == nil {
		return 0
	}
	w := vg.Length(0)
	for _, t := range p.Y.Tick.Marker.Ticks(r.min, r.max) {
		if t.Label != "" {
			w = max(w, p.Y.Tick.Label.Rectangle(t.Label).Size().X)
		}
	}
	return p.Y.Tick.Length + gap + w + gap + p.Y.Label.TextStyle.Rectangle(r.label).Size().Y + gap
}

func (r *rightAxis) draw(c, data draw.Canvas, p *gplot.Plot) {
	x := data.Max.X
	ls := p.Y.LineStyle
	c.StrokeLine2(ls, x, data.Min.Y, x, data.Max.Y)
	tick := p.Y.Tick.Label
	tick.XAlign, tick.YAlign = draw.XLeft, draw.YCenter
	w := vg.Length(0)
	for _, t := range p.Y.Tick.Marker.Ticks(r.min, r.max) {
		if t.Label == "" || t.Value < r.min || t.Value > r.max {
			continue
		}
		y := data.Y(p.Y.Norm(r.toLeft(p, t.Value)))
		c.StrokeLine2(p.Y.Tick.LineStyle, x, y, x+p.Y.Tick.Length, y)
		c.FillText(tick, vg.Point{X: x + p.Y.Tick.Length + gap/2, Y: y}, t.Label)
		w = max(w, tick.Rectangle(t.Label).Size().X)
	}
	title := p.Y.Label.TextStyle
	title.Rotation = -math.Pi / 2
	// Turned a quarter clockwise, the text's bottom faces the labels.
	title.XAlign, title.YAlign = draw.XCenter, draw.YBottom
	lx := x + p.Y.Tick.Length + gap + w + gap
	c.FillText(title, vg.Point{X: lx, Y: (data.Min.Y + data.Max.Y) / 2}, r.label)
}

// stack draws plots one above the other on a shared time axis.
type stack []*gplot.Plot

func (s stack) Draw(c draw.Canvas) {
	rows := make([][]*gplot.Plot, len(s))
	for i, p := range s {
		rows[i] = []*gplot.Plot{p}
	}
	cs := gplot.Align(rows, draw.Tiles{Rows: len(s), Cols: 1, PadY: vg.Points(8), PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(4)}, c)
	// Every panel keeps the room of the widest legend, so that panels
	// without one share the others' time axis.
	legW := vg.Length(0)
	for i, p := range s {
		legW = max(legW, legendWidth(p.Legend, cs[i][0]))
	}
	for i, p := range s {
		framed{p: p, legendW: legW}.Draw(cs[i][0])
	}
}

// figureSize is every figure's size: wide enough for a legend beside it.
const figureW, figureH = 28 * vg.Centimeter, 14 * vg.Centimeter

// render draws d as SVG (for the HTML report, inline) and PNG (for files
// and everything else), on a white page of the figure's size.
func render(d drawable, h vg.Length) (svg, png []byte, err error) {
	for _, format := range []string{"svg", "png"} {
		cw, err := draw.NewFormattedCanvas(figureW, h, format)
		if err != nil {
			return nil, nil, fmt.Errorf("render %s: %w", format, err)
		}
		dc := draw.New(cw)
		dc.SetColor(color.White)
		dc.Fill(dc.Rectangle.Path())
		d.Draw(draw.Crop(dc, vg.Points(4), -vg.Points(4), vg.Points(4), -vg.Points(4)))
		var buf bytes.Buffer
		if _, err := cw.WriteTo(&buf); err != nil {
			return nil, nil, fmt.Errorf("render %s: %w", format, err)
		}
		if format == "svg" {
			svg = inlineSVG(buf.Bytes())
		} else {
			png = buf.Bytes()
		}
	}
	return svg, png, nil
}

// inlineSVG strips the XML declaration and the generator's comment, which
// may not stand inside an HTML page, leaving the <svg> element. Its width
// and height stay (the figure's size in points) and its viewBox lets the
// page scale it.
func inlineSVG(b []byte) []byte {
	if i := bytes.Index(b, []byte("<svg")); i > 0 {
		b = b[i:]
	}
	return b
}

// save writes a rendered figure as name.svg and name.png in dir.
func save(dir string, f report.Figure, png []byte) error {
	for file, data := range map[string][]byte{f.SVG: f.Data, f.PNG: png} {
		path := filepath.Join(dir, file)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("save plot %s: %w", path, err)
		}
	}
	return nil
}

// floor raises an axis's minimum to lo where it reaches below it (a
// quantity that cannot be negative), keeping its span.
func floor(a *gplot.Axis, lo float64) {
	if a.Min < lo {
		a.Max += lo - a.Min
		a.Min = lo
	}
}

// atLeast widens an axis that would zoom into a single value (one pump
// cycle, a flat series) to span, centred on it.
func atLeast(a *gplot.Axis, span float64) {
	if a.Max-a.Min >= span {
		return
	}
	mid := (a.Max + a.Min) / 2
	a.Min, a.Max = mid-span/2, mid+span/2
}
