package analysis

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/heatsink-hpc/heatsink/point"
)

// plantedNode is a node of GPUs whose temperatures follow first-order
// responses to their own power and to their neighbours' (coupling), as the
// planted truth of a synthetic recording without phases.
type plantedNode struct {
	idleW, loadW float64
	// rCore and rMem are each GPU's steady rise per watt above idle (°C/W),
	// tau its time constant (s).
	rCore, rMem, tau []float64
	// couple[s][n] is GPU n's core rise per watt GPU s draws above idle;
	// memory gets the same.
	couple [][]float64
	// loads are [gpu, start, end) in seconds; dips are 10 s drops to idle
	// inside a load that must not split it.
	loads [][3]float64
	dips  [][2]float64
	// extra are [gpu, start, end, watts): loads of another process, at a
	// power of their own.
	extra [][4]float64
	endS  int
}

func (n plantedNode) power(g int, t float64) float64 {
	for _, d := range n.dips {
		if int(d[0]) == g && t >= d[1] && t < d[1]+10 {
			return n.idleW
		}
	}
	for _, l := range n.loads {
		if int(l[0]) == g && t >= l[1] && t < l[2] {
			return n.loadW
		}
	}
	for _, l := range n.extra {
		if int(l[0]) == g && t >= l[1] && t < l[2] {
			return l[3]
		}
	}
	return n.idleW
}

// write records the node at 1 Hz with ±15 W power noise and ±0.6 °C
// temperature noise, temperatures rounded to whole degrees as NVML gives
// them.
func (n plantedNode) write(b *runBuilder) {
	rng := rand.New(rand.NewPCG(7, 30))
	gpus := len(n.rCore)
	core, mem := make([]float64, gpus), make([]float64, gpus)
	for s := 0; s <= n.endS; s++ {
		t := float64(s)
		var ps []point.Point
		for g := range gpus {
			tc, tm := 35.0+float64(g), 40.0
			for src := range gpus {
				dp := n.power(src, t) - n.idleW
				if src == g {
					tc += n.rCore[g] * dp
					tm += n.rMem[g] * dp
				} else {
					tc += n.couple[src][g] * dp
					tm += n.couple[src][g] * dp
				}
			}
			if s == 0 {
				core[g], mem[g] = tc, tm
			}
			a := 1 - math.Exp(-1/n.tau[g])
			core[g] += (tc - core[g]) * a
			mem[g] += (tm - mem[g]) * a
			p := n.power(g, t) + 15*(2*rng.Float64()-1)
			ps = append(ps, gpuPoint(b.at(t), strconv.Itoa(g), math.Round(core[g]+0.6*(2*rng.Float64()-1)), math.Round(mem[g]+0.6*(2*rng.Float64()-1)), p))
		}
		b.write(ps...)
	}
}

// fourGPUs plants: each GPU alone for 900 s, GPU 1 25 % worse cooled than
// the others, GPU 0 heating GPU 1 by 0.008 °C/W and nothing else coupled;
// then GPUs 2 and 3 overlapping, then all together, and a recording that
// goes on for 1500 s after the last job ended.
func fourGPUs() plantedNode {
	n := plantedNode{idleW: 70, loadW: 690, endS: 9900,
		rCore: []float64{0.040, 0.050, 0.040, 0.040}, rMem: []float64{0.030, 0.030, 0.030, 0.030},
		tau:    []float64{70, 80, 70, 75},
		couple: [][]float64{{0, 0.008, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}},
		dips:   [][2]float64{{0, 1000}},
	}
	at := 600.0
	for g := range 4 {
		n.loads = append(n.loads, [3]float64{float64(g), at, at + 900})
		at += 900 + 900
	}
	// GPU 2 from 7800 to 8400, GPU 3 from 8100 to 8700: overlapping.
	n.loads = append(n.loads, [3]float64{2, 7800, 8400}, [3]float64{3, 8100, 8700})
	return n
}

func TestEpisodesFoundInARecordingWithoutPhases(t *testing.T) {
	b := newRun(t)
	n := fourGPUs()
	n.write(b)
	rep := Analyze(b.done(), DefaultOptions())
	if len(rep.Episodes) != len(n.loads) {
		for _, e := range rep.Episodes {
			t.Logf("episode %d: gpu %s %.0f–%.0f", e.Index, e.GPU, e.StartS, e.EndS)
		}
		t.Fatalf("%d episodes, want %d", len(rep.Episodes), len(n.loads))
	}
	for _, l := range n.loads {
		found := false
		for _, e := range rep.Episodes {
			if e.GPU == strconv.Itoa(int(l[0])) && math.Abs(e.StartS-l[1]) <= 2 && math.Abs(e.EndS-l[2]) <= 2 {
				found = true
				if e.Open || e.Cooldown == nil || e.Baseline == nil {
					t.Errorf("episode %d: open %v, baseline %v, cooldown %v", e.Index, e.Open, e.Baseline, e.Cooldown)
				}
				near(t, "power_w", *e.PowerW, n.loadW, 3)
				near(t, "idle_power_w", *e.IdlePowerW, n.idleW, 3)
			}
		}
		if !found {
			t.Errorf("no episode of GPU %.0f from %.0f s to %.0f s", l[0], l[1], l[2])
		}
	}
	last := rep.Episodes[len(rep.Episodes)-1]
	if last.Cooldown == nil || last.Cooldown.End != float64(n.endS) {
		t.Errorf("the last job ended before the recording: cooldown %v, want it to the end %d s", last.Cooldown, n.endS)
	}
	if rep.NotComputed["episodes"] != "" {
		t.Errorf("episodes not computed: %s", rep.NotComputed["episodes"])
	}
}

func TestFingerprintRecoversPlantedThermalResistance(t *testing.T) {
	b := newRun(t)
	n := fourGPUs()
	n.write(b)
	rep := Analyze(b.done(), DefaultOptions())
	checked := 0
	for _, c := range rep.Components {
		for _, e := range c.Episodes {
			ep := rep.Episodes[e.Episode]
			g, _ := strconv.Atoi(ep.GPU)
			if ep.EndS-ep.StartS < 800 { // the overlapping ones carry the neighbour's heat
				continue
			}
			want := n.rCore[g]
			if c.Kind == KindGPUMem {
				want = n.rMem[g]
			}
			if e.ThermalResistanceFrom != "load_fit" {
				t.Errorf("%s episode %d: %s", c.ID, e.Episode, e.ThermalResistanceFrom)
				continue
			}
			lo, hi := *e.ThermalResistanceLoCPerW, *e.ThermalResistanceHiCPerW
			// The interval takes the power as exact; the power's own
			// median moves with its noise by well under 1 %.
			if want < lo*0.99 || want > hi*1.01 {
				t.Errorf("%s episode %d: %.4f °C/W [%.4f, %.4f], planted %.4f", c.ID, e.Episode, *e.ThermalResistanceCPerW, lo, hi, want)
			}
			if e.ThrottleThermalShare != nil {
				t.Errorf("%s: a throttle share from a run that records no clock events", c.ID)
			}
			checked++
		}
	}
	if checked != 8 {
		t.Errorf("checked %d single-GPU episodes (core and memory), want 8", checked)
	}
}

func TestCouplingMatrixRecoversPlantedNeighbourHeating(t *testing.T) {
	b := newRun(t)
	n := fourGPUs()
	n.write(b)
	rep := Analyze(b.done(), DefaultOptions())
	if len(rep.Coupling) != 4*3*2 {
		t.Fatalf("%d coupling entries, want 24", len(rep.Coupling))
	}
	for _, c := range rep.Coupling {
		s, _ := strconv.Atoi(c.Source)
		nb, _ := strconv.Atoi(c.Neighbour)
		want := n.couple[s][nb]
		if c.CPerW == nil {
			t.Errorf("%s→%s %s: %s", c.Source, c.Neighbour, c.Kind, c.NotComputed)
			continue
		}
		if want < *c.LoCPerW || want > *c.HiCPerW {
			t.Errorf("%s→%s %s: %.4f [%.4f, %.4f] °C/W from %d episodes, planted %.4f", c.Source, c.Neighbour, c.Kind, *c.CPerW, *c.LoCPerW, *c.HiCPerW, len(c.Episodes), want)
		}
		if *c.HiCPerW-*c.LoCPerW > 0.006 {
			t.Errorf("%s→%s %s: interval [%.4f, %.4f] too wide to tell 0.008 from 0", c.Source, c.Neighbour, c.Kind, *c.LoCPerW, *c.HiCPerW)
		}
	}
}

func TestVerdictsNameTheWorseCooledGPU(t *testing.T) {
	b := newRun(t)
	n := fourGPUs()
	n.write(b)
	rep := Analyze(b.done(), DefaultOptions())
	found := false
	for _, v := range rep.Verdicts {
		if v.Metric != "thermal_resistance_c_per_w" || v.Component != "gpu_core:"+v.GPU {
			continue
		}
		switch v.GPU {
		case "1":
			found = true
			if v.Status != "outlier" && v.Status != "differs" {
				t.Errorf("GPU 1: %s", v.Reason)
			}
		default:
			if v.Status != "typical" {
				t.Errorf("GPU %s: %s", v.GPU, v.Reason)
			}
		}
	}
	if !found {
		t.Errorf("no verdict on GPU 1's thermal resistance: %+v", rep.Verdicts)
	}
}

func TestRecordingsWithPhasesKeepThem(t *testing.T) {
	b := newRun(t)
	b.phases(600, 900, 600)
	n := fourGPUs()
	n.endS = 2100
	n.write(b)
	rep := Analyze(b.done(), DefaultOptions())
	if rep.Episodes != nil || rep.Coupling != nil {
		t.Errorf("a run with phases got %d episodes", len(rep.Episodes))
	}
}

func TestDetectEpisodesRejects(t *testing.T) {
	rule := DefaultEpisodeRule()
	flat := make([]float64, 600)
	ts := make([]float64, 600)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range flat {
		ts[i] = float64(i)
		flat[i] = 70 + 15*(2*rng.Float64()-1)
	}
	if spans, _, err := DetectEpisodes(ts, flat, rule); err == nil {
		t.Errorf("an idle GPU's noise gave %d episodes", len(spans))
	}
	short := append([]float64(nil), flat...)
	for i := 100; i < 120; i++ {
		short[i] = 600
	}
	if spans, _, err := DetectEpisodes(ts, short, rule); err != nil || len(spans) != 0 {
		t.Errorf("a 20 s burst: %v, %v; want no episode (under %.0f s)", spans, err, rule.MinLoadS)
	}
}

// A CPU package's episodes come from its RAPL power; the chip's
// temperature is analysed per episode, without a GPU fingerprint.
func TestCPUEpisodesFromRAPL(t *testing.T) {
	b := newRun(t)
	temp := 40.0
	for s := 0; s <= 3000; s++ {
		ts := b.at(float64(s))
		loaded := s >= 900 && s < 2100
		w, target := 60.0, 40.0
		if loaded {
			w, target = 240, 75
		}
		temp += (target - temp) * (1 - math.Exp(-1.0/45))
		rp := point.New("rapl", ts)
		rp.AddTag("host", "node1").AddTag("zone", "package-0").AddTag("zone_id", "intel-rapl:0")
		rp.AddFloat("power_w", w+3*math.Sin(float64(s)))
		b.write(rp, hwmonPoint(ts, "platform_coretemp_0", "temp2", "Core 0", "cpu_core", math.Round(temp)))
	}
	rep := Analyze(b.done(), DefaultOptions())
	if len(rep.Episodes) != 1 {
		t.Fatalf("%d episodes, want 1", len(rep.Episodes))
	}
	e := rep.Episodes[0]
	if e.Device != "cpu:platform_coretemp_0" || e.Signal != "rapl power_w" || math.Abs(e.StartS-900) > 2 || math.Abs(e.EndS-2100) > 2 {
		t.Errorf("episode %+v", e)
	}
	c := rep.Components[0]
	if len(c.Episodes) != 1 || c.Episodes[0].Fingerprint != nil {
		t.Fatalf("cpu component episodes: %+v", c.Episodes)
	}
	if f := c.Episodes[0].LoadFit; f == nil {
		t.Errorf("no load fit over the CPU's episode: %v", c.Episodes[0].NotComputed)
	} else {
		near(t, "rise_c", f.RiseC, 35, 1)
		near(t, "tau_s", f.TauS, 45, 5)
	}
}

// compare sets the GPUs of several runs against each other: every GPU of
// both runs is one peer group, each verdict names its run, and each run's
// coupling comes along labelled.
func TestCompareJudgesGPUsAcrossRuns(t *testing.T) {
	var reps []*Report
	for range 2 {
		b := newRun(t)
		fourGPUs().write(b)
		reps = append(reps, Analyze(b.done(), DefaultOptions()))
	}
	cmp := Compare(reps)
	n := 0
	for _, v := range cmp.Verdicts {
		if v.Metric != "thermal_resistance_c_per_w" || kindOf(v.Component) != KindGPUCore {
			continue
		}
		n++
		if v.Peers != 8 || (v.Run != "A" && v.Run != "B") {
			t.Errorf("verdict %s %s: %d peers, run %q; want 8 peers in run A or B", v.Run, v.Component, v.Peers, v.Run)
		}
		if v.GPU == "1" && v.Status != "outlier" {
			t.Errorf("run %s GPU 1: %s", v.Run, v.Reason)
		}
	}
	if n != 8 {
		t.Errorf("%d core thermal-resistance verdicts, want 8", n)
	}
	if len(cmp.Coupling) != 48 || cmp.Coupling[0].Run != "A" || cmp.Coupling[47].Run != "B" {
		t.Errorf("%d coupling entries, want 24 per run labelled A and B", len(cmp.Coupling))
	}
}

// A load still running when the recording stops is an open episode with
// no cooldown, and a dip shorter than the bridge does not split a load.
func TestDetectEpisodesOpenAndBridged(t *testing.T) {
	var ts, p []float64
	for i := range 1200 {
		w := 70.0
		if i >= 300 && i < 600 && (i < 400 || i >= 415) || i >= 900 {
			w = 650
		}
		ts, p = append(ts, float64(i)), append(p, w+5*math.Sin(float64(i)))
	}
	spans, lv, err := DetectEpisodes(ts, p, DefaultEpisodeRule())
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 2 || spans[0].Start != 300 || spans[0].End != 600 || spans[0].Open || spans[1].Start != 900 || !spans[1].Open {
		t.Errorf("spans %+v (levels %+v), want [300, 600) bridged over the 15 s dip and [900, end) open", spans, lv)
	}
}
