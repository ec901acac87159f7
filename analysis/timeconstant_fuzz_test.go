package analysis

import (
	"encoding/json"
	"math"
	"testing"
)

// fuzzSeries decodes b as (step, reading) byte pairs: a step of 0.5–4 s
// (a step byte of 250 or more is a 40 s gap) and a reading of 20–147.5 °C
// in half degrees. Series stop at 150 readings: longer ones only slow the
// fuzzing (a fit works on at most maxFitPoints group means anyway).
func fuzzSeries(b []byte) (t, v []float64) {
	b = b[:min(len(b), 300)]
	x := 0.0
	for i := 0; i+1 < len(b); i += 2 {
		step := 0.5 + float64(b[i]%8)/2
		if b[i] >= 250 {
			step = 40
		}
		x += step
		t = append(t, x)
		v = append(v, 20+float64(b[i+1])/2)
	}
	return t, v
}

// FuzzFits feeds arbitrary series to the load and cooldown fits and the
// heat-interval band: no panic, and whatever they return is finite, with
// each value inside its own interval and shares between 0 and 1.
func FuzzFits(f *testing.F) {
	series := func(n int, step byte, val func(k int) byte) []byte {
		var b []byte
		for k := range n {
			b = append(b, step, val(k))
		}
		return b
	}
	f.Add(series(60, 2, func(int) byte { return 40 }))                     // flat
	f.Add(series(60, 2, func(k int) byte { return byte(40 + 20*(k/30)) })) // stepped
	f.Add(series(60, 2, func(k int) byte { return byte(120 - k) }))        // decreasing
	f.Add(series(60, 2, func(k int) byte {                                 // gapped first-order rise
		return byte(40 + 40*(1-math.Exp(-float64(k)/8)))
	}))
	f.Add(append(series(30, 2, func(k int) byte { return byte(40 + k) }), series(30, 255, func(k int) byte { return 70 })...))
	f.Add(series(120, 0, func(k int) byte { return byte(60 + 30*(1-math.Exp(-float64(k)/10))) })) // rise at 0.5 s steps
	f.Fuzz(func(t *testing.T, b []byte) {
		tt, vv := fuzzSeries(b)
		if len(tt) == 0 {
			return
		}
		end := tt[len(tt)-1]
		load := Span{Start: tt[0], End: end}
		check := func(what string, v any, pairs ...float64) {
			for i := 0; i < len(pairs); i += 3 {
				lo, x, hi := pairs[i], pairs[i+1], pairs[i+2]
				if !finiteAll(lo, x, hi) || lo > x+1e-9 || x > hi+1e-9 {
					t.Fatalf("%s: %v not finite or outside [%v, %v]: %+v", what, x, lo, hi, v)
				}
			}
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		if lf, err := FitLoad(tt, vv, load, vv[0], 1, 10, 0.95); err == nil {
			check("load fit", lf, lf.TauLoS, lf.TauS, lf.TauHiS, lf.RiseLoC, lf.RiseC, lf.RiseHiC, -1e9, lf.At(end/2), 1e9, 0, lf.ModelWeight, 1)
			if lf.FastShare != nil {
				check("load fit", lf, 0, *lf.FastShare, 1)
			}
		} else if err.Error() == "" {
			t.Fatal("an empty error")
		}
		if cf, err := FitCooldown(tt, vv, tt[0], end, 10, 0.95); err == nil {
			check("cooldown fit", cf, cf.CoolTauLoS, cf.CoolTauS, cf.CoolTauHiS, -1e9, cf.At(end/2), 1e9, -1e9, cf.AsymptoteC, 1e9, 0, cf.ModelWeight, 1)
			if cf.FastShare != nil {
				check("cooldown fit", cf, 0, *cf.FastShare, 1)
			}
		}
		if hb, err := HeatIntervalSpread(tt, vv, load, vv[0], 1); err == nil {
			check("heat interval band", hb, hb.LoSPerC, hb.WithinResolutionSPerC, hb.HiSPerC, 0, hb.ResolutionC, 1e9)
		}
	})
}
