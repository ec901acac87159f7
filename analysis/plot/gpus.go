package plot

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// gpuFigures are the figures of a recording with load episodes: every
// GPU's temperature with its episodes shaded, the fingerprints as bars with
// their intervals, and the coupling matrix.
func gpuFigures(rep *analysis.Report) []figure {
	return []figure{
		{name: "gpu-episodes", title: "Every GPU's core temperature, each GPU in its own colour, its load episodes shaded in the same colour", draw: plain(func() (*gplot.Plot, error) { return GPUEpisodes(rep) })},
		{name: "gpu-fingerprints", title: "Thermal resistance per GPU (°C per watt above idle), core and memory, with intervals", draw: plain(func() (*gplot.Plot, error) { return Fingerprints(rep.Verdicts) })},
		{name: "gpu-coupling", title: "Neighbour heating: the idle GPU's rise per watt the loaded GPU drew above idle (°C/W)", draw: plain(func() (*gplot.Plot, error) { return CouplingMatrix(rep.Coupling, "core") })},
	}
}

// GPUEpisodes draws every GPU's core temperature over the recording in
// its own colour (ten before they repeat), each load episode shaded in
// its GPU's colour.
func GPUEpisodes(rep *analysis.Report) (*gplot.Plot, error) {
	if len(rep.Episodes) == 0 {
		return nil, fmt.Errorf("GPU episodes: %w", ErrNothingToPlot)
	}
	p := gplot.New()
	p.Title.Text = "GPU temperatures and load episodes: run " + rep.Run.ID
	scale, unit := timeScale(rep.Run.EndS)
	p.X.Label.Text = "time since start (" + unit + ")"
	p.Y.Label.Text = "GPU core temperature (°C)"
	idx := map[string]int{}
	for _, c := range rep.Components {
		if c.Kind == analysis.KindGPUCore && c.Series != nil && len(c.Series.T) > 0 {
			idx[c.ID] = len(idx)
		}
	}
	for _, e := range rep.Episodes {
		i, ok := idx[e.Device]
		if !ok {
			continue
		}
		r, g, b, _ := colour(i).RGBA()
		p.Add(phaseShade{from: e.StartS * scale, to: e.EndS * scale, color: color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 35}})
	}
	for _, c := range rep.Components {
		i, ok := idx[c.ID]
		if !ok {
			continue
		}
		l, err := plotter.NewLine(thin(c.Series.T, c.Series.V, scale))
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", c.ID, err)
		}
		l.Color, l.Width = colour(i), vg.Points(1.2)
		if i >= len(palette) {
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)} // the eleventh GPU on: dashed
		}
		p.Add(l)
		p.Legend.Add(c.ID, l)
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// errPoints are bar tops with their intervals, for plotter.YErrorBars.
type errPoints struct {
	xy  plotter.XYs
	err plotter.YErrors
}

func (e errPoints) Len() int                        { return len(e.xy) }
func (e errPoints) XY(i int) (float64, float64)     { return e.xy.XY(i) }
func (e errPoints) YError(i int) (float64, float64) { return e.err.YError(i) }

// Fingerprints draws each GPU's thermal resistance, core and memory side
// by side, with its interval where it has one; a lower bound is drawn
// hollow.
func Fingerprints(vs []analysis.Verdict) (*gplot.Plot, error) {
	var names []string
	pos := map[string]int{}
	vals := map[string]map[int]analysis.Verdict{"core": {}, "memory": {}}
	for _, v := range vs {
		if v.Metric != "thermal_resistance_c_per_w" {
			continue
		}
		name := "GPU " + v.GPU
		if v.Host != "" {
			name = v.Host + " " + name
		}
		if v.Run != "" {
			name = v.Run + " " + name
		}
		if _, ok := pos[name]; !ok {
			pos[name] = len(names)
			names = append(names, name)
		}
		kind := "core"
		if kindOf(v.Component) == analysis.KindGPUMem {
			kind = "memory"
		}
		vals[kind][pos[name]] = v
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("fingerprints: %w", ErrNothingToPlot)
	}
	p := gplot.New()
	p.Title.Text = "Thermal resistance per GPU"
	p.Y.Label.Text = "°C per W above idle"
	w := vg.Points(14)
	for k, kind := range []string{"core", "memory"} {
		bars := make(plotter.Values, len(names))
		var ep errPoints
		shift := 0.11 * float64(2*k-1) // core left of the GPU's tick, memory right
		for i := range names {
			v, ok := vals[kind][i]
			if !ok {
				continue
			}
			bars[i] = v.Value
			if v.Lo != nil && v.Hi != nil {
				ep.xy = append(ep.xy, plotter.XY{X: float64(i) + shift, Y: v.Value})
				ep.err = append(ep.err, struct{ Low, High float64 }{v.Value - *v.Lo, *v.Hi - v.Value})
			}
		}
		b, err := plotter.NewBarChart(bars, w)
		if err != nil {
			return nil, fmt.Errorf("fingerprints: %w", err)
		}
		b.Color = colour(k)
		b.XMin = shift
		p.Add(b)
		p.Legend.Add(kind, b)
		if len(ep.xy) > 0 {
			eb, err := plotter.NewYErrorBars(ep)
			if err != nil {
				return nil, fmt.Errorf("fingerprints: %w", err)
			}
			p.Add(eb)
		}
	}
	p.Add(plotter.NewGrid())
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	return p, nil
}

func kindOf(id string) string {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == '/' {
			id = id[i+1:]
			break
		}
	}
	for i := range id {
		if id[i] == ':' {
			return id[:i]
		}
	}
	return id
}

// matrixCells draws a square matrix of values as coloured cells with their
// numbers: white for 0 to deep red for the largest, grey where not
// measured.
type matrixCells struct {
	n     int
	vals  map[[2]int]*float64
	max   float64
	label text.Style
}

func (m matrixCells) Plot(c draw.Canvas, plt *gplot.Plot) {
	trX, trY := plt.Transforms(&c)
	for i := range m.n {
		for j := range m.n {
			x0, x1 := trX(float64(j)-0.5), trX(float64(j)+0.5)
			y0, y1 := trY(float64(i)-0.5), trY(float64(i)+0.5)
			pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			v, ok := m.vals[[2]int{i, j}]
			fill, label := color.Color(color.NRGBA{R: 220, G: 220, B: 220, A: 255}), "not measured"
			switch {
			case i == j:
				fill, label = color.White, "—"
			case ok && v != nil:
				f := math.Max(0, math.Min(1, *v/m.max))
				fill = color.NRGBA{R: 255, G: uint8(255 - 200*f), B: uint8(255 - 215*f), A: 255}
				label = strconv.FormatFloat(*v, 'f', 4, 64)
			}
			c.FillPolygon(fill, c.ClipPolygonXY(pts))
			c.FillText(m.label, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, label)
		}
	}
}

// CouplingMatrix draws the coupling of one kind ("core" or "memory") as a
// heatmap, source GPU by row, neighbour by column, each cell with its
// number. A comparison's several runs or hosts each get their own rows
// and columns.
func CouplingMatrix(cs []analysis.Coupling, kind string) (*gplot.Plot, error) {
	var gpus []string
	idx := map[string]int{}
	name := func(c analysis.Coupling, g string) string {
		s := "GPU " + g
		if c.Host != "" {
			s = c.Host + " " + s
		}
		if c.Run != "" {
			s = c.Run + " " + s
		}
		return s
	}
	vals := map[[2]int]*float64{}
	mx := 0.0
	for _, c := range cs {
		if c.Kind != kind {
			continue
		}
		for _, g := range []string{c.Source, c.Neighbour} {
			if _, ok := idx[name(c, g)]; !ok {
				idx[name(c, g)] = len(gpus)
				gpus = append(gpus, name(c, g))
			}
		}
		vals[[2]int{idx[name(c, c.Source)], idx[name(c, c.Neighbour)]}] = c.CPerW
		if c.CPerW != nil {
			mx = math.Max(mx, *c.CPerW)
		}
	}
	if len(gpus) < 2 {
		return nil, fmt.Errorf("coupling: %w", ErrNothingToPlot)
	}
	if mx <= 0 {
		mx = 1
	}
	p := gplot.New()
	p.Title.Text = "Neighbour heating, GPU " + kind + " (°C/W)"
	p.X.Label.Text = "neighbour (heated)"
	p.Y.Label.Text = "source (loaded)"
	n := len(gpus)
	st := text.Style{Color: color.Black, Font: p.X.Tick.Label.Font, XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: p.X.Tick.Label.Handler}
	if n > 6 {
		st.Font.Size = vg.Points(6)
	}
	p.Add(matrixCells{n: n, vals: vals, max: mx, label: st})
	ticks := make([]gplot.Tick, n)
	for i, g := range gpus {
		ticks[i] = gplot.Tick{Value: float64(i), Label: g}
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5, -0.5, float64(n)-0.5
	p.X.Tick.Marker, p.Y.Tick.Marker = gplot.ConstantTicks(ticks), gplot.ConstantTicks(ticks)
	return p, nil
}

// comparedGPUFigures are the fingerprints of every run's GPUs side by side
// and the runs' coupling matrices.
func comparedGPUFigures(cmp *analysis.Comparison) []figure {
	return []figure{
		{name: "gpu-fingerprints-compared", title: "Thermal resistance per GPU of every run (°C per watt above idle), with intervals", draw: plain(func() (*gplot.Plot, error) { return Fingerprints(cmp.Verdicts) })},
		{name: "gpu-coupling-compared", title: "Neighbour heating in every run (°C/W)", draw: plain(func() (*gplot.Plot, error) { return CouplingMatrix(cmp.Coupling, "core") })},
	}
}
