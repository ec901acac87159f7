package analysis

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/heatsink-hpc/heatsink/internal/gpusim"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// simSurvey records heatsink survey's protocol on the simulated GPUs of
// internal/gpusim in simulated time, sampled every 100 ms as the fleet
// test's collector does: a 6 s baseline, each GPU alone for 6 s with a
// return of returnS, all together for 6 s, a 10 s cooldown (the fleet
// test's plan). It returns the run and the analysis options the survey
// judges it with (the episode rule scaled to its 6 s loads).
func simSurvey(t *testing.T, plant gpusim.Plant, returnS float64) (*Run, Options) {
	t.Helper()
	plant.LoadDir = t.TempDir()
	src := gpusim.New(plant)
	b := newRun(t)
	n := len(plant.GPUs)
	type step struct {
		name   string
		from   float64
		loaded []int
	}
	var steps []step
	at := 0.0
	add := func(name string, d float64, loaded ...int) {
		steps = append(steps, step{name, at, loaded})
		end := b.at(at + d)
		b.meta.Phases = append(b.meta.Phases, rundir.Phase{Name: name, Start: b.at(at), End: &end})
		at += d
	}
	add("survey_baseline", 6)
	all := []int{}
	for g := range n {
		add("alone:"+strconv.Itoa(g), 6, g)
		add("return:"+strconv.Itoa(g), returnS)
		all = append(all, g)
	}
	add("together", 6, all...)
	add("survey_cooldown", 10)
	b.meta.IntervalS = 0.1
	k := 0
	for i := 0; float64(i)*0.1 < at; i++ {
		ts := float64(i) * 0.1
		for k+1 < len(steps) && steps[k+1].from <= ts+1e-9 {
			k++
		}
		for g := range n {
			m := filepath.Join(plant.LoadDir, "gpu"+strconv.Itoa(g))
			on := false
			for _, l := range steps[k].loaded {
				on = on || l == g
			}
			if on {
				if err := os.WriteFile(m, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Remove(m); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		ps, err := src.Sample(context.Background(), b.at(ts), nil)
		if err != nil {
			t.Fatal(err)
		}
		for j := range ps {
			ps[j].AddTag(schema.TagHost, "node1")
		}
		b.write(ps...)
	}
	return b.done(), DefaultOptions().Scaled(6.0 / 40)
}

// n2 of the simulated fleet (docs/survey.md): two GPUs of 0.040 °C/W
// core, GPU 0 heating GPU 1 by 0.025 °C/W (15.8 °C at its 630 W above
// idle), τ 1-1.2 s, ±0.3 °C and ±5 W of noise, whole degrees.
func n2Plant(coupling float64) gpusim.Plant {
	return gpusim.Plant{NoiseC: 0.3, PowerNoiseW: 5, Seed: 2,
		GPUs: []gpusim.GPU{
			{UUID: "GPU-n2-0", Model: "SIM-H100", IdleW: 70, LoadW: 700, IdleC: 33, MemIdleC: 38, CoreCPerW: 0.040, MemCPerW: 0.031, TauS: 1.0},
			{UUID: "GPU-n2-1", Model: "SIM-H100", IdleW: 70, LoadW: 700, IdleC: 34, MemIdleC: 38, CoreCPerW: 0.040, MemCPerW: 0.029, TauS: 1.2},
		},
		Coupling: [][]float64{{0, coupling}, {0, 0}}}
}

// A GPU whose baseline follows its neighbour's load measures its own
// °C/W, not less: the neighbour's heat still leaving it at the start of
// its baseline is added back (neighbour_decay_c). Before, n2's GPU 1 read
// 0.0364 against its planted 0.040. Without coupling nothing is added.
func TestNeighbourHeatedGPUReadsItsOwnThermalResistance(t *testing.T) {
	for _, tc := range []struct {
		name     string
		coupling float64
		returnS  float64
	}{{"heated, 8 s returns", 0.025, 8}, {"heated, 12 s returns", 0.025, 12}, {"not heated", 0, 8}} {
		t.Run(tc.name, func(t *testing.T) {
			r, o := simSurvey(t, n2Plant(tc.coupling), tc.returnS)
			s := JudgeSurveyRun(r, Analyze(r, o), nil, DefaultSurveyRule())
			if len(s.GPUs) != 2 {
				t.Fatalf("%d GPUs judged: %v", len(s.GPUs), s.NotComputed)
			}
			for i, g := range s.GPUs {
				for _, c := range []struct {
					what string
					fp   *Fingerprint
					want float64
				}{{"core", g.AloneCore, 0.040}, {"memory", g.AloneMem, n2Plant(0).GPUs[i].MemCPerW}} {
					if c.fp == nil || c.fp.ThermalResistanceCPerW == nil {
						t.Fatalf("GPU %s %s: no °C/W", g.Index, c.what)
					}
					got := *c.fp.ThermalResistanceCPerW
					t.Logf("GPU %s %s: %.4f °C/W (%s), neighbour decay %v °C from GPU %q", g.Index, c.what, got, c.fp.ThermalResistanceFrom, deref(c.fp.NeighbourDecayC), c.fp.NeighbourDecayFrom)
					if d := (got - c.want) / c.want; d < -0.05 || d > 0.05 {
						t.Errorf("GPU %s %s: %.4f °C/W, planted %.3f (%+.1f %%)", g.Index, c.what, got, c.want, 100*d)
					}
					heated := tc.coupling > 0 && g.Index == "1"
					if heated != (c.fp.NeighbourDecayC != nil) {
						t.Errorf("GPU %s %s: neighbour decay %v, want one only on the heated GPU", g.Index, c.what, deref(c.fp.NeighbourDecayC))
					}
				}
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// On the real 4×H100 node (testdata/h100x4-episodes) GPU 3 sits downstream
// of GPU 2 (the node's one coupling of note, 0.0104 °C/W) and its alone
// baseline began as GPU 2's load ended: it read 14 % (core) and 19 %
// (memory) under the node's median, the "healthy spread" the survey rule
// was first set against. With GPU 2's heat added back (about 2.2 °C) every
// GPU's alone °C/W lies within 8 % of the median.
func TestTheRealNodesDownstreamGPUGetsItsNeighboursHeatBack(t *testing.T) {
	rep, _, _ := h100x4(t)
	s := JudgeSurvey(rep, nil, DefaultSurveyRule())
	if len(s.GPUs) != 4 {
		t.Fatalf("%d GPUs", len(s.GPUs))
	}
	for _, kind := range []string{KindGPUCore, KindGPUMem} {
		var vs []float64
		for _, g := range s.GPUs {
			fp := g.aloneOf(kind)
			if fp == nil || fp.ThermalResistanceCPerW == nil {
				t.Fatalf("GPU %s %s: no °C/W alone", g.Index, kind)
			}
			vs = append(vs, *fp.ThermalResistanceCPerW)
			heated := g.Index == "3"
			if heated != (fp.NeighbourDecayC != nil) || heated && (fp.NeighbourDecayFrom != "2" || *fp.NeighbourDecayC < 1.5 || *fp.NeighbourDecayC > 3) {
				t.Errorf("GPU %s %s: neighbour decay %v °C from %q, want about 2 °C from GPU 2 on GPU 3 only", g.Index, kind, deref(fp.NeighbourDecayC), fp.NeighbourDecayFrom)
			}
		}
		m := median(vs)
		for i, v := range vs {
			if d := (v - m) / m; d < -0.08 || d > 0.08 {
				t.Errorf("GPU %s %s: %.4f °C/W, %+.1f %% from the median %.4f", s.GPUs[i].Index, kind, v, 100*d, m)
			}
		}
		t.Logf("%s: %.4f (median %.4f)", kind, vs, m)
	}
}
