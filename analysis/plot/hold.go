package plot

import (
	"fmt"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// holdFigure is heatsink run --hold's picture: the held component against
// its set point, and on a second axis the duty the hold gave the job.
func holdFigure(rep *analysis.Report) (drawable, error) {
	h := rep.Hold
	if h == nil || len(h.AtS) < minPoints {
		return nil, fmt.Errorf("hold: %w", ErrNothingToPlot)
	}
	from := h.AtS[0]
	p := gplot.New()
	p.Title.Text = fmt.Sprintf("Hold %s: the component and the job's duty: run %s", h.Target, rep.Run.ID)
	p.X.Label.Text = "time since the hold started (s)"
	p.Y.Label.Text = "temperature (°C)"
	temp := make(plotter.XYs, len(h.AtS))
	set := make(plotter.XYs, len(h.AtS))
	for i, t := range h.AtS {
		temp[i] = plotter.XY{X: t - from, Y: h.ReadingC[i]}
		set[i] = plotter.XY{X: t - from, Y: h.SetAtC[i]}
	}
	tl, err := plotter.NewLine(temp)
	if err != nil {
		return nil, fmt.Errorf("hold: %w", err)
	}
	sl, err := plotter.NewLine(set)
	if err != nil {
		return nil, fmt.Errorf("hold: %w", err)
	}
	tl.Color, sl.Color = colour(0), colour(1)
	sl.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(plotter.NewGrid(), tl, sl)
	p.Legend.Add("reading", tl)
	p.Legend.Add("set point", sl)
	atLeast(&p.Y, 4)
	f := framed{p: p, right: &rightAxis{label: "duty (share of time the job runs)", min: 0, max: 1}}
	duty := make(plotter.XYs, len(h.AtS))
	for i, t := range h.AtS {
		duty[i] = plotter.XY{X: t - from, Y: f.right.toLeft(p, h.DutyAt[i])}
	}
	dl, err := plotter.NewLine(duty)
	if err != nil {
		return nil, fmt.Errorf("hold: %w", err)
	}
	dl.Color = colour(3)
	p.Add(dl)
	p.Legend.Add("duty (right axis)", dl)
	return f, nil
}
