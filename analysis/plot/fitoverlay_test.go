package plot

import (
	"math"
	"testing"

	gplot "gonum.org/v1/plot"

	"github.com/heatsink-hpc/heatsink/analysis"
)

func TestOverlayFitsDrawsTheFittedCurvesOnly(t *testing.T) {
	rep := immersedRun(t)
	drawn := 0
	for _, c := range rep.Components {
		p := gplot.New()
		l, err := overlayFits(p, c, 1)
		if err != nil {
			t.Fatal(err)
		}
		if (l != nil) != (c.LoadFit != nil || c.CooldownFit != nil) {
			t.Errorf("%s: line %v, fits %v/%v", c.ID, l != nil, c.LoadFit != nil, c.CooldownFit != nil)
		}
		if l == nil {
			continue
		}
		drawn++
		// The last line drawn is the cooldown's when there is one: its
		// points are the model's.
		f := c.CooldownFit
		if f == nil {
			continue
		}
		for _, pt := range l.XYs {
			if math.Abs(pt.Y-f.At(pt.X)) > 1e-9 || pt.X < f.FromS-1e-9 || pt.X > f.ToS+1e-9 {
				t.Fatalf("%s: point (%g, %g) is not on the fitted cooldown over [%g, %g]", c.ID, pt.X, pt.Y, f.FromS, f.ToS)
			}
		}
	}
	if drawn == 0 {
		t.Fatal("no component of the synthetic immersed run got a fitted curve")
	}
	empty := analysis.ComponentResult{ID: "nofit"}
	if l, err := overlayFits(gplot.New(), empty, 1); l != nil || err != nil {
		t.Errorf("a component without fits drew %v (%v)", l, err)
	}
}
