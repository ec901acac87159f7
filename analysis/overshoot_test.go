package analysis

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// loadOvershoot speaks only of a temperature that fell back from its peak
// under the load: never of a first-order or two-time-constant rise, nor of
// one still creeping up, however the readings are rounded and whatever
// their noise.
func TestLoadOvershoot(t *testing.T) {
	const idle, loadS = 40.0, 300.0
	for _, tc := range []struct {
		name  string
		curve func(x float64) float64
		want  bool
	}{
		{"first order", func(x float64) float64 { return idle + 30*(1-math.Exp(-x/20)) }, false},
		{"two time constants", func(x float64) float64 {
			return idle + 12*(1-math.Exp(-x/1.5)) + 18*(1-math.Exp(-x/40))
		}, false},
		{"creeping up", func(x float64) float64 { return idle + 28*(1-math.Exp(-x/18)) + 0.02*x }, false},
		{"a 1.5 °C dip", func(x float64) float64 { return idle + 30*(1-math.Exp(-x/10)) - 1.5*(1-math.Exp(-x/100)) }, false},
		{"cooling catches up", func(x float64) float64 {
			return idle + 30*(1-math.Exp(-x/10)) - 10*(1-math.Exp(-x/150))
		}, true},
		{"a short overshoot", func(x float64) float64 { return idle + 30*(1-math.Exp(-x/5)) - 8*(1-math.Exp(-x/30)) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(20) {
				rng := rand.New(rand.NewPCG(seed, 18))
				phase := rng.Float64()
				var tt, v []float64
				for k := 0; k < int(loadS)+60; k++ {
					x := float64(k) + phase - 30 // 30 s of idle first
					y := idle
					if x > 0 && x < loadS {
						y = tc.curve(x)
					}
					tt, v = append(tt, x+30), append(v, math.Round(y+0.3*rng.NormFloat64()))
				}
				err := loadOvershoot(tt, v, Span{Start: 30, End: 30 + loadS}, idle)
				if (err != nil) != tc.want {
					t.Fatalf("seed %d: %v, want an overshoot: %v", seed, err, tc.want)
				}
				if err != nil && !strings.Contains(err.Error(), "the cooling changed") {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
		})
	}
}
