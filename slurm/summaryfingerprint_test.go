package slurm

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// writeTwoJobsOneLoaded records a node of two GPUs shared from 120 s to
// 420 s by job 201 (GPU 0) and job 202 (GPU 1). Job 201 loads its GPU
// from 150 s to 390 s: 60 W idle, 400 W loaded, the temperature rising
// from 35 °C by 0.1 °C/W × 340 W = 34 °C with τ 20 s and falling back the
// same way. Job 202 leaves its GPU idle. Both read with ±0.3 °C and ±2 W
// of deterministic ripple, as sensors do.
func writeTwoJobsOneLoaded(t *testing.T) (dir string, start, end time.Time) {
	t.Helper()
	dir = t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	start, end = t0.Add(120*time.Second), t0.Add(420*time.Second)
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	const tau, rCPerW, idleW, loadW, idleC = 20.0, 0.1, 60.0, 400.0, 35.0
	temp := idleC
	for s := 0; s <= 540; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		var pts []point.Point
		for i := range 2 {
			ripple := math.Sin(float64(s)*1.7 + float64(i))
			power, target := idleW, idleC
			if i == 0 && s >= 150 && s < 390 {
				power, target = loadW, idleC+rCPerW*(loadW-idleW)
			}
			c := idleC
			if i == 0 {
				temp += (target - temp) * (1 - math.Exp(-1/tau))
				c = temp
			}
			p := point.New("gpu", at)
			p.AddTag("gpu", string(rune('0'+i))).AddTag("uuid", "GPU-"+string(rune('a'+i))).AddTag("host", "n1").AddTag("model", "NVIDIA H100 80GB HBM3")
			p.AddFloat("temp_c", c+0.3*ripple).AddFloat("power_w", power+2*ripple).AddFloat("sm_clock_mhz", 1980)
			pts = append(pts, p)
		}
		if err := w.Write(pts); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s0, e0 := start, end
	if err := rundir.WriteMeta(dir, &rundir.Meta{ID: "n1", Start: t0, IntervalS: 1, Phases: []rundir.Phase{
		{Name: "baseline", Start: t0, End: &s0}, {Name: "load", Start: start, End: &e0}}}); err != nil {
		t.Fatal(err)
	}
	return dir, start, end
}

// The GPU job 201 loaded gets its fingerprint over the job (°C/W and τ
// as recorded); the GPU job 202 left idle gets none, with the reason; the
// AdminComment carries the °C/W of the first alone.
func TestSummaryFingerprintsTheGPUsTheJobLoaded(t *testing.T) {
	dir, start, end := writeTwoJobsOneLoaded(t)
	run, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		job, gpu string
		loaded   bool
	}{{"201", "0", true}, {"202", "1", false}} {
		held := map[string]Holding{"n1": {GPUs: []string{c.gpu}, SharedWith: []string{map[string]string{"201": "202", "202": "201"}[c.job]}}}
		s := Summarize(run, analysis.DefaultOptions(), Span{Job: c.job, Nodes: []string{"n1"}, Start: start, End: end, Held: held})
		if len(s.GPUs) != 1 || s.GPUs[0].GPU != c.gpu {
			t.Fatalf("job %s: GPUs %+v, want GPU %s alone", c.job, s.GPUs, c.gpu)
		}
		g := s.GPUs[0]
		admin, err := s.Admin("/w/job.json").Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !c.loaded {
			if g.Fingerprint != nil || !strings.Contains(g.FingerprintNotComputed, "no load episode") {
				t.Errorf("job %s, idle GPU: fingerprint %+v, reason %q; want none with the reason", c.job, g.Fingerprint, g.FingerprintNotComputed)
			}
			if strings.Contains(admin, "c_per_w") {
				t.Errorf("job %s, idle GPU: AdminComment %s has a c_per_w", c.job, admin)
			}
			continue
		}
		fp := g.Fingerprint
		if fp == nil || fp.Fingerprint == nil {
			t.Fatalf("job %s, loaded GPU: no fingerprint (%s)", c.job, g.FingerprintNotComputed)
		}
		b, _ := json.Marshal(fp)
		t.Logf("job %s GPU %s: %s", c.job, c.gpu, b)
		if fp.ThermalResistanceCPerW == nil || math.Abs(*fp.ThermalResistanceCPerW-0.1) > 0.01 {
			t.Errorf("thermal resistance %v °C/W, want 0.1 ± 0.01 (%v)", deref(fp.ThermalResistanceCPerW), fp.NotComputed)
		}
		if fp.TauS == nil || math.Abs(*fp.TauS-20) > 3 {
			t.Errorf("τ %v s, want 20 ± 3 (%v)", deref(fp.TauS), fp.NotComputed)
		}
		if math.Abs(fp.LoadStartS-30) > 3 || math.Abs(fp.LoadEndS-270) > 3 {
			t.Errorf("load %.0f-%.0f s into the job, want 30-270", fp.LoadStartS, fp.LoadEndS)
		}
		var a AdminSummary
		if err := json.Unmarshal([]byte(admin), &a); err != nil || len(a.GPUs) != 1 || a.GPUs[0].CPerW == nil || *a.GPUs[0].CPerW != *fp.ThermalResistanceCPerW {
			t.Errorf("AdminComment %s: want GPU 0's c_per_w %v", admin, deref(fp.ThermalResistanceCPerW))
		}
	}
}
