package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// limitColour draws every device limit: dark red, the colour a reader
// expects of a line not to cross.
var limitColour = color.NRGBA{R: 150, G: 0, B: 0, A: 255}

// limitDashes tells a limit apart from the data's dashes (coolant, GPU
// memory) and the fits' dots.
var limitDashes = []vg.Length{vg.Points(10), vg.Points(3), vg.Points(2), vg.Points(3)}

// deviceLimit is one recorded limit and the components that declared it.
type deviceLimit struct {
	field      string
	c          float64
	components []string
}

// limits gathers the limits the components recorded, one per field and
// value (eight GPUs with a slowdown at 89 °C are one line), in the order
// the components come.
func limits(rep *analysis.Report) []deviceLimit {
	var out []deviceLimit
	for _, c := range rep.Components {
		l := c.Limit
		if l == nil || math.IsNaN(l.C) || math.IsInf(l.C, 0) {
			continue
		}
		i := slices.IndexFunc(out, func(d deviceLimit) bool { return d.field == l.Field && d.c == l.C })
		if i < 0 {
			out = append(out, deviceLimit{field: l.Field, c: l.C})
			i = len(out) - 1
		}
		out[i].components = append(out[i].components, c.ID)
	}
	return out
}

// label names a limit for the legend: "slowdown 89 °C (gpu_core:0)".
func (d deviceLimit) label() string {
	who := strings.Join(d.components, ", ")
	if len(d.components) > 3 {
		who = fmt.Sprintf("%s and %d more", strings.Join(d.components[:2], ", "), len(d.components)-2)
	}
	return fmt.Sprintf("limit %s %.0f °C (%s)", strings.TrimSuffix(d.field, "_c"), d.c, who)
}

// addLimits draws each limit of rep as a horizontal line across the time
// axis [0, endX] and returns the lowest and highest limit drawn (+Inf, -Inf
// when none), for the axis to include them.
func addLimits(p *gplot.Plot, rep *analysis.Report, endX float64) (lo, hi float64, err error) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, d := range limits(rep) {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: d.c}, {X: endX, Y: d.c}})
		if err != nil {
			return lo, hi, fmt.Errorf("plot limit %s: %w", d.field, err)
		}
		l.Color = limitColour
		l.Width = vg.Points(1.5)
		l.Dashes = limitDashes
		p.Add(l)
		p.Legend.Add(d.label(), l)
		lo, hi = min(lo, d.c), max(hi, d.c)
	}
	return lo, hi, nil
}
