package slurm

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// writeJobRun records a two-node job: 60 s idle, 120 s of load, 30 s after.
// GPU temperatures ramp from 40 °C to 80 °C over the first 100 s of the load
// and stay there; GPUs draw 50 W idle and 300 W loaded. n1 has two GPUs
// with energy counters and RAPL zones; n2's GPU reports power only.
func writeJobRun(t *testing.T) (dir string, job Span) {
	t.Helper()
	dir = t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	start, end := t0.Add(60*time.Second), t0.Add(180*time.Second)
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	energy := map[string]float64{}
	for s := 0; s <= 210; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		temp, power := 40.0, 50.0
		if s > 60 && s <= 180 {
			temp = math.Min(80, 40+0.4*float64(s-60))
		}
		if s >= 60 && s < 180 {
			power = 300 // the reading at s is the power of [s, s+1)
		}
		var pts []point.Point
		for _, g := range []struct{ host, gpu string }{{"n1", "0"}, {"n1", "1"}, {"n2", "0"}} {
			p := point.New("gpu", at)
			p.AddTag("gpu", g.gpu).AddTag("uuid", "GPU-"+g.host+g.gpu).AddTag("host", g.host).AddTag("model", "H100")
			p.AddFloat("temp_c", temp).AddFloat("power_w", power)
			if g.host == "n1" {
				p.AddFloat("energy_j", energy[g.host+g.gpu])
				energy[g.host+g.gpu] += power // the counter at s+1 holds the energy of [s, s+1]
			}
			pts = append(pts, p)
		}
		for _, z := range []struct{ zone, id string }{{"package-0", "intel-rapl:0"}, {"core", "intel-rapl:0:0"}, {"psys", "intel-rapl:1"}} {
			p := point.New("rapl", at)
			p.AddTag("zone", z.zone).AddTag("zone_id", z.id).AddTag("host", "n1")
			p.AddFloat("energy_j", 100*float64(s)) // 100 W
			pts = append(pts, p)
		}
		if err := w.Write(pts); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	startCopy, endCopy := start, end
	meta := &rundir.Meta{ID: "r1", Start: t0, IntervalS: 1, Phases: []rundir.Phase{
		{Name: "baseline", Start: t0, End: &startCopy}, {Name: "load", Start: start, End: &endCopy}}}
	if err := rundir.WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	return dir, Span{Job: "42", Run: "r1", Nodes: []string{"n1", "n2"}, Start: start, End: end}
}

func TestSummaryOfATwoNodeJobMatchesHandComputation(t *testing.T) {
	dir, job := writeJobRun(t)
	run, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(run, analysis.DefaultOptions(), job)
	if s.RuntimeS != 120 || s.BaselineS != 60 || len(s.Nodes) != 2 {
		t.Errorf("runtime %v baseline %v nodes %v", s.RuntimeS, s.BaselineS, s.Nodes)
	}
	var cores int
	for _, c := range s.Components {
		if c.Kind != analysis.KindGPUCore {
			continue
		}
		cores++
		// Peak 80 °C first reached 100 s into the load; idle mean 40 °C.
		if c.PeakC == nil || *c.PeakC != 80 || c.IdleMeanC == nil || *c.IdleMeanC != 40 || c.PeakAtS == nil || *c.PeakAtS != 100 {
			t.Errorf("%s %s: peak %v at %v, idle %v (%v)", c.Host, c.ID, deref(c.PeakC), deref(c.PeakAtS), deref(c.IdleMeanC), c.NotComputed)
		}
		if c.HeatIntervalSPerC == nil || math.Abs(*c.HeatIntervalSPerC-2.5) > 1e-9 {
			t.Errorf("%s %s: heat interval %v, want 100 s / 40 °C = 2.5", c.Host, c.ID, deref(c.HeatIntervalSPerC))
		}
		if c.ID != "gpu_core:0" && c.ID != "gpu_core:1" {
			t.Errorf("component id %q still carries its host", c.ID)
		}
	}
	if cores != 3 {
		t.Errorf("%d GPU cores, want 3", cores)
	}
	// 120 s at 300 W = 36 kJ per GPU by n1's counters. n2 reports power
	// only: the trapezoid through 119 s at 300 W and the last second from
	// 300 W down to 50 W gives 35700 + 175 J.
	want := map[string]struct {
		method string
		j      float64
	}{"n1/0": {"energy counter difference", 36000}, "n1/1": {"energy counter difference", 36000}, "n2/0": {"power integral (trapezoid)", 35875}}
	for _, g := range s.GPUs {
		w, ok := want[g.Host+"/"+g.GPU]
		if !ok || g.EnergyJ == nil || g.Method != w.method || math.Abs(*g.EnergyJ-w.j) > 1e-6 {
			t.Errorf("GPU %s/%s: %v J by %q (%s), want %v J by %q", g.Host, g.GPU, deref(g.EnergyJ), g.Method, g.NotComputed, w.j, w.method)
		}
	}
	for _, n := range s.NodeEnergy {
		switch n.Host {
		case "n1":
			// Two GPUs and package-0 (12 kJ at 100 W); core and psys not counted again.
			if n.CPUEnergyJ == nil || *n.CPUEnergyJ != 12000 || n.GPUEnergyJ == nil || math.Abs(*n.GPUEnergyJ-72000) > 1 ||
				n.EnergyJ == nil || math.Abs(*n.EnergyJ-84000) > 1 || len(n.Parts) != 3 {
				t.Errorf("n1: %+v parts %v", n, n.Parts)
			}
		case "n2":
			if n.CPUEnergyJ != nil || n.EnergyJ == nil || math.Abs(*n.EnergyJ-35875) > 1e-6 {
				t.Errorf("n2: %+v", n)
			}
		default:
			t.Errorf("node %s", n.Host)
		}
	}

	path, err := s.WriteFile(dir, nil)
	if err != nil || filepath.Base(path) != "job-42-thermal.json" {
		t.Fatalf("%s %v", path, err)
	}
	var back Summary
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &back); err != nil || back.Job != "42" || len(back.Components) != len(s.Components) {
		t.Errorf("JSON round trip: %v", err)
	}
	pts := s.Points()
	var nodePts, energyOnCore int
	for _, p := range pts {
		if p.Measurement != "job_summary" || p.Tag("job") != "42" || p.Tag("run") != "r1" || !p.Time.Equal(job.End) {
			t.Errorf("point %v", p)
		}
		if p.Tag("component") == "node" {
			nodePts++
		}
		if _, ok := p.Float("energy_j"); ok && p.Tag("kind") == analysis.KindGPUCore {
			energyOnCore++
		}
	}
	if nodePts != 2 || energyOnCore != 3 {
		t.Errorf("%d node points, %d GPU cores with energy", nodePts, energyOnCore)
	}
}

func TestSummaryWithoutReadingsSaysWhy(t *testing.T) {
	dir, job := writeJobRun(t)
	run, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	job.Nodes = []string{"n3"} // allocated, but its agent recorded nothing
	s := Summarize(run, analysis.DefaultOptions(), job)
	if len(s.Components) != 0 || len(s.GPUs) != 0 {
		t.Errorf("readings of other nodes in the summary: %+v", s.Components)
	}
	if len(s.NodeEnergy) != 1 || s.NodeEnergy[0].EnergyJ != nil || s.NodeEnergy[0].NotComputed == "" {
		t.Errorf("node without readings: %+v", s.NodeEnergy)
	}
}

func TestValueAtInterpolatesWithinTheGap(t *testing.T) {
	ts, vs := []float64{0, 1, 2, 10}, []float64{0, 10, 20, 100}
	for _, c := range []struct {
		x    float64
		want float64
		ok   bool
	}{{0.5, 5, true}, {2, 20, true}, {-1, 0, true}, {-9, 0, false}, {5, 0, false}, {12, 100, true}, {20, 0, false}} {
		got, err := valueAt(ts, vs, c.x, 5)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("valueAt(%v) = %v, %v", c.x, got, err)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
