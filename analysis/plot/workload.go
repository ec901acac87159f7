package plot

import (
	"fmt"
	"math"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// throughputFigure is the thermal-slowdown picture: the workload's rate per
// iteration over the load, and on a second axis the hottest GPU, CPU or
// NVMe temperature at each moment.
func throughputFigure(rep *analysis.Report) (drawable, error) {
	w := rep.Workload
	if len(w.Timeline) < minPoints {
		return nil, fmt.Errorf("throughput: %d iterations: %w", len(w.Timeline), ErrNothingToPlot)
	}
	from := w.Timeline[0].AtS
	to := w.Timeline[len(w.Timeline)-1].AtS
	if ld := rep.Phases.Load; ld != nil {
		from, to = ld.Start, max(ld.End, to)
	}
	scale, prefix, unit := rateScale(w.Throughput, w.Timeline)
	p := gplot.New()
	p.Title.Text = capitalise(quantity(w.Throughput)) + " during the load: run " + rep.Run.ID
	p.X.Label.Text = "time since load start (s)"
	p.Y.Label.Text = fmt.Sprintf("%s (%s%s)", quantity(w.Throughput), prefix, unit)
	xy := make(plotter.XYs, len(w.Timeline))
	for i, it := range w.Timeline {
		xy[i] = plotter.XY{X: it.AtS - from, Y: it.Value / scale}
	}
	line, points, err := plotter.NewLinePoints(xy)
	if err != nil {
		return nil, fmt.Errorf("throughput: %w", err)
	}
	line.Color, points.Color = colour(0), colour(0)
	points.Shape, points.Radius = draw.CircleGlyph{}, vg.Points(1.5)
	p.Add(plotter.NewGrid(), line, points)
	p.Legend.Add(quantity(w.Throughput)+" per iteration", line, points)
	p.X.Min, p.X.Max = 0, to-from
	// A steady rate would zoom into noise: show at least ±5 % around it.
	// A rate or a runtime is never negative.
	atLeast(&p.Y, 0.1*math.Abs((p.Y.Min+p.Y.Max)/2))
	floor(&p.Y, 0)
	f := framed{p: p}
	if t, v, which := hottest(rep, from, to); len(t) > 0 {
		lo, hi := v[0], v[0]
		for _, x := range v {
			lo, hi = min(lo, x), max(hi, x)
		}
		pad := max(1, 0.05*(hi-lo))
		f.right = &rightAxis{label: "hottest " + which + " temperature (°C)", min: math.Floor(lo - pad), max: math.Ceil(hi + pad)}
		txy := make(plotter.XYs, len(t))
		for i := range t {
			txy[i] = plotter.XY{X: t[i] - from, Y: f.right.toLeft(p, v[i])}
		}
		tl, err := plotter.NewLine(txy)
		if err != nil {
			return nil, fmt.Errorf("throughput temperature: %w", err)
		}
		tl.Color = colour(3)
		tl.Width = vg.Points(1.5)
		tl.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(tl)
		p.Legend.Add("hottest "+which+" (right axis)", tl)
		p.Title.Text = capitalise(quantity(w.Throughput)) + " and hottest " + which + " temperature during the load: run " + rep.Run.ID
	}
	return f, nil
}

// hottest is, in buckets of at least a second over [from, to], the highest
// reading of any GPU, CPU or NVMe temperature, and which kinds they were.
func hottest(rep *analysis.Report, from, to float64) ([]float64, []float64, string) {
	width := max(1, (to-from)/1000)
	n := int((to-from)/width) + 1
	best := make([]float64, n)
	for i := range best {
		best[i] = math.Inf(-1)
	}
	kinds := map[string]bool{}
	for _, c := range rep.Components {
		s := c.Series
		if s == nil || (c.Kind != analysis.KindGPUCore && c.Kind != analysis.KindGPUMem && c.Kind != analysis.KindCPU && c.Kind != analysis.KindNVMe) {
			continue
		}
		vals := s.V
		if s.Max != nil {
			vals = s.Max // a CPU chip's hottest core
		}
		for i, t := range s.T {
			if t < from || t > to || math.IsNaN(vals[i]) {
				continue
			}
			b := int((t - from) / width)
			if vals[i] > best[b] {
				best[b] = vals[i]
			}
			kinds[strings.SplitN(c.Kind, "_", 2)[0]] = true
		}
	}
	var ts, vs []float64
	for i, v := range best {
		if !math.IsInf(v, -1) {
			ts = append(ts, from+(float64(i)+0.5)*width)
			vs = append(vs, v)
		}
	}
	var which []string
	for _, k := range []string{"gpu", "cpu", "nvme"} {
		if kinds[k] {
			which = append(which, strings.ToUpper(k))
		}
	}
	return ts, vs, strings.Join(which, "/")
}

// throughputTitle is the caption of the throughput figure: it names the
// temperature only when one was recorded over the load.
func throughputTitle(rep *analysis.Report) string {
	w := rep.Workload
	title := fmt.Sprintf("The workload's %s per iteration over the load", quantity(w.Throughput))
	if len(w.Timeline) == 0 {
		return title
	}
	from, to := w.Timeline[0].AtS, w.Timeline[len(w.Timeline)-1].AtS
	if ld := rep.Phases.Load; ld != nil {
		from, to = ld.Start, max(ld.End, to)
	}
	if _, _, which := hottest(rep, from, to); which != "" {
		title += ", with the hottest " + which + " temperature on the right axis"
	}
	return title
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// quantity names a metric for an axis: flop_per_s is "throughput",
// triad_bytes_per_s "triad bandwidth", runtime_s "iteration runtime".
func quantity(metric string) string {
	switch {
	case metric == "runtime_s":
		return "iteration runtime"
	case metric == "flop_per_s":
		return "throughput"
	case strings.HasSuffix(metric, "_bytes_per_s"):
		return strings.ReplaceAll(strings.TrimSuffix(metric, "_bytes_per_s"), "_", " ") + " bandwidth"
	}
	return strings.ReplaceAll(strings.TrimSuffix(metric, "_per_s"), "_", " ") + " rate"
}

// rateScale picks an SI prefix for a metric's values and names its unit.
func rateScale(metric string, tl []analysis.IterationValue) (float64, string, string) {
	unit := "/s"
	switch {
	case metric == "runtime_s":
		return 1, "", "s"
	case metric == "flop_per_s":
		unit = "FLOP/s"
	case strings.HasSuffix(metric, "_bytes_per_s"):
		unit = "B/s"
	}
	top := 0.0
	for _, it := range tl {
		top = max(top, math.Abs(it.Value))
	}
	for _, p := range []struct {
		scale  float64
		prefix string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if top >= p.scale {
			return p.scale, p.prefix, unit
		}
	}
	return 1, "", unit
}

// hostFigure draws what the host source recorded of the machine as a
// whole, one panel each on the run's time axis: a VM without a temperature
// still gets a report with figures of its run. The phases are shaded in
// every panel and named once, beside the first.
func hostFigure(rep *analysis.Report) (drawable, error) {
	scale, unit := timeScale(rep.Run.EndS)
	var st stack
	for _, s := range rep.Recorded {
		if len(s.T) < minPoints {
			continue
		}
		p := gplot.New()
		div := 1.0
		switch s.Measurement + "." + s.Field {
		case "cpu.usage_pct":
			p.Y.Label.Text = "CPU utilisation (%)"
		case "mem.used_bytes":
			p.Y.Label.Text, div = "memory used (GiB)", 1<<30
		case "load.load1":
			p.Y.Label.Text = "load average, 1 min"
		default:
			p.Y.Label.Text = s.Field
		}
		if len(st) == 0 {
			p.Title.Text = "Host: run " + rep.Run.ID
		}
		shadePhases(p, rep.Phases, scale)
		if len(st) > 0 {
			p.Legend = gplot.NewLegend()
		}
		v := make([]float64, len(s.V))
		for k, x := range s.V {
			v[k] = x / div
		}
		l, err := plotter.NewLine(thin(s.T, v, scale))
		if err != nil {
			return nil, fmt.Errorf("host %s: %w", s.Key(), err)
		}
		l.Color = colour(len(st))
		p.Add(plotter.NewGrid(), l)
		if s.Measurement == "cpu" {
			p.Y.Min, p.Y.Max = 0, 100
		} else {
			// Memory and load are never negative.
			p.Y.Min = 0
			atLeast(&p.Y, 1)
			floor(&p.Y, 0)
		}
		p.X.Min, p.X.Max = 0, rep.Run.EndS*scale
		st = append(st, p)
	}
	if len(st) == 0 {
		return nil, fmt.Errorf("host: %w", ErrNothingToPlot)
	}
	st[len(st)-1].X.Label.Text = "time since start (" + unit + ")"
	return st, nil
}
