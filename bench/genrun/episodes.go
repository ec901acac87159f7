package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// fleetNode is the planted truth of a continuously recorded shared GPU
// node: each GPU's thermal resistance (°C/W above idle), its time
// constant, and how much each GPU heats the next one in the airflow.
type fleetNode struct {
	gpus     int
	idleW    float64
	rCore    []float64
	rMem     []float64
	tauS     []float64
	coupling float64 // GPU g heats GPU g+1 by this many °C/W
	// jobs[g] are GPU g's loads: start, end (s) and power (W).
	jobs [][][3]float64
}

// plantFleet schedules at least episodes loads over total seconds on gpus
// GPUs: each GPU runs its share of jobs, each lasting 10-50 % of its cycle
// at 580-690 W (jobs of similar power, so all eight are compared), the rest
// of the cycle idle. GPU 5 (of 8) is the badly
// cooled one: 25 % more °C/W than the others.
func plantFleet(gpus, episodes, total int, rng *rand.Rand) fleetNode {
	n := fleetNode{gpus: gpus, idleW: 70, coupling: 0.006}
	per := (episodes + gpus - 1) / gpus
	cycle := float64(total) / float64(per+1)
	for g := range gpus {
		r := 0.045
		if g == 5 {
			r = 0.056
		}
		n.rCore = append(n.rCore, r)
		n.rMem = append(n.rMem, 0.032)
		n.tauS = append(n.tauS, 60+5*float64(g))
		var js [][3]float64
		for k := range per {
			// Each job somewhere in its slot, so the GPUs' jobs overlap
			// at random and some run alone.
			dur := cycle * (0.1 + 0.4*rng.Float64())
			at := cycle * (float64(k) + (1-dur/cycle)*rng.Float64())
			js = append(js, [3]float64{math.Round(at), math.Round(at + dur), 580 + 110*rng.Float64()})
		}
		n.jobs = append(n.jobs, js)
	}
	return n
}

func (n fleetNode) power(g int, t float64) float64 {
	for _, j := range n.jobs[g] {
		if t >= j[0] && t < j[1] {
			return j[2]
		}
	}
	return n.idleW
}

// generateEpisodes writes a run directory of `heatsink collect` on an
// 8-GPU node for days at 1 Hz with no phases: GPU points carrying every
// field the NVML source writes, whole-degree temperatures and ±15 W of
// power noise, and the host's CPU utilisation.
func generateEpisodes(dir string, days float64, gpus, episodes int) error {
	total := int(days * 86400)
	start := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	w, err := rundir.Create(dir)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(3, 30))
	noise := func(a float64) float64 { return a * (2*rng.Float64() - 1) }
	n := plantFleet(gpus, episodes, total, rng)
	core, mem, energy := make([]float64, gpus), make([]float64, gpus), make([]float64, gpus)
	pts := make([]point.Point, 0, gpus+2)
	watts := make([]float64, gpus)
	for s := 0; s <= total; s++ {
		t := float64(s)
		ts := start.Add(time.Duration(s) * time.Second)
		pts = pts[:0]
		for g := range gpus {
			watts[g] = n.power(g, t)
		}
		for g := range gpus {
			dp := watts[g] - n.idleW
			tc, tm := 32+float64(g)/2+n.rCore[g]*dp, 38+n.rMem[g]*dp
			if g > 0 {
				up := n.coupling * (watts[g-1] - n.idleW)
				tc, tm = tc+up, tm+up
			}
			if s == 0 {
				core[g], mem[g] = tc, tm
			}
			a := 1 - math.Exp(-1/n.tauS[g])
			core[g] += (tc - core[g]) * a
			mem[g] += (tm - mem[g]) * a
			loaded := watts[g] > n.idleW
			pw := math.Round((watts[g]+noise(15))*1000) / 1000
			energy[g] += pw
			id := strconv.Itoa(g)
			p := point.New(schema.GPU, ts)
			p.AddTag(schema.TagHost, "node1").AddTag(schema.TagGPU, id).AddTag(schema.TagUUID, "GPU-5c1f0e2a-7d3b-4e6f-9a18-00000000000"+id).AddTag(schema.TagModel, "NVIDIA H100 80GB HBM3")
			p.AddFloat(schema.FieldTempC, math.Round(core[g]+noise(0.6))).AddFloat(schema.FieldMemTempC, math.Round(mem[g]+noise(0.6)))
			p.AddFloat(schema.FieldPowerW, pw).AddFloat(schema.FieldEnergyJ, math.Round(energy[g]*1000)/1000).AddFloat(schema.FieldPowerLimitW, 700)
			p.AddFloat(schema.FieldUtilPct, 100*b2f(loaded)).AddFloat(schema.FieldMemUtilPct, 60*b2f(loaded))
			p.AddInt(schema.FieldMemUsedBytes, 1<<30+int64(b2f(loaded))*(60<<30)).AddInt(schema.FieldMemTotalBytes, 80<<30).AddInt(schema.FieldPState, 0)
			p.AddFloat(schema.FieldSMClockMHz, 1980-200*b2f(loaded)).AddFloat(schema.FieldMemClockMHz, 2619)
			reasons := uint64(0)
			if watts[g] > 680 {
				reasons = schema.ClockEventSwPowerCap
			}
			th, pc := schema.DecodeClockEvents(reasons)
			p.AddInt(schema.FieldClockEventReasons, int64(reasons)).AddBool(schema.FieldThrottleThermal, th).AddBool(schema.FieldThrottlePower, pc)
			p.AddFloat(schema.FieldSlowdownC, 89)
			pts = append(pts, p)
		}
		host := point.New(schema.CPU, ts)
		host.AddTag(schema.TagHost, "node1").AddTag(schema.TagCPU, "total")
		host.AddFloat(schema.FieldUsagePct, math.Round((3+noise(1))*10)/10)
		tick := point.New(schema.CollectorTick, ts)
		tick.AddTag(schema.TagHost, "node1")
		tick.AddFloat(schema.FieldLagS, 0.0004).AddInt(schema.FieldMissedTicksTotal, 0).AddInt(schema.FieldPoints, int64(gpus+2))
		pts = append(pts, host, tick)
		if err := w.Write(pts); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	end := start.Add(time.Duration(total) * time.Second)
	m := &rundir.Meta{ID: "fleet-" + strconv.Itoa(total), Host: "node1", Start: start, End: &end, IntervalS: 1, Status: "complete",
		Labels: map[string]string{"cooling": "air"}}
	if err := rundir.WriteMeta(dir, m); err != nil {
		return err
	}
	jobs := 0
	for _, js := range n.jobs {
		jobs += len(js)
	}
	fmt.Printf("gpus\t%d\nepisodes\t%d\nsamples\t%d\nplanted\tGPU 5 %.3f °C/W, the others %.3f; GPU g heats GPU g+1 by %.3f °C/W\n", gpus, jobs, total+1, n.rCore[5%gpus], n.rCore[0], n.coupling)
	return nil
}
