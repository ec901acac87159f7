// Command genrun writes a synthetic run directory shaped like a day on an
// immersed 8-GPU node, for measuring `heatsink report` at scale: a 30 min
// baseline, a 7.5 h load and a cooldown to the end (the reference study's
// protocol), sampled at 1 Hz, about 200 series in 27 points per tick (GPU
// and tank points carry many fields each, as their sources write them).
//
//	go run ./bench/genrun -hours 24 -out /tmp/run
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

func main() {
	hours := flag.Float64("hours", 24, "length of the run")
	out := flag.String("out", "", "run directory to create (required)")
	flag.Parse()
	if *out == "" {
		log.Fatal("genrun: -out DIR is required")
	}
	if err := generate(*out, *hours); err != nil {
		log.Fatal(err)
	}
}

// rise is a first-order response to a load from loadAt to loadEnd (seconds).
func rise(t, t0, dT, tau, loadAt, loadEnd float64) float64 {
	switch {
	case t < loadAt:
		return t0
	case t < loadEnd:
		return t0 + dT*(1-math.Exp(-(t-loadAt)/tau))
	}
	peak := dT * (1 - math.Exp(-(loadEnd-loadAt)/tau))
	return t0 + peak*math.Exp(-(t-loadEnd)/tau)
}

func generate(dir string, hours float64) error {
	total := int(hours * 3600)
	base := math.Min(1800, float64(total)/10)
	loadEnd := base + math.Min(7.5*3600, float64(total)*0.4)
	start := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	w, err := rundir.Create(dir)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(a float64) float64 { return a * (2*rng.Float64() - 1) }
	// Readings carry the resolution their sources have: NVML power and
	// energy in mW and mJ, hwmon in millidegrees, the tank in tenths.
	milli := func(x float64) float64 { return math.Round(x*1000) / 1000 }
	tenth := func(x float64) float64 { return math.Round(x*10) / 10 }
	pts := make([]point.Point, 0, 32)
	var gpuEnergy [8]float64
	var raplEnergy [2]float64
	pduEnergy := 0.0
	series := 0
	for s := 0; s <= total; s++ {
		t := float64(s)
		ts := at(t)
		loaded := t >= base && t < loadEnd
		pts = pts[:0]
		for g := 0; g < 8; g++ {
			p := point.New(schema.GPU, ts)
			id := strconv.Itoa(g)
			p.AddTag("host", "node1").AddTag("gpu", id).AddTag("uuid", "GPU-5c1f0e2a-7d3b-4e6f-9a18-00000000000"+id).AddTag("model", "NVIDIA H100 80GB HBM3")
			core := math.Round(rise(t, 33+float64(g), 38, 90+10*float64(g), base, loadEnd) + noise(0.6))
			power := milli(70 + 620*b2f(loaded) + noise(15))
			gpuEnergy[g] += power
			p.AddFloat("temp_c", core).AddFloat("mem_temp_c", math.Round(rise(t, 38, 30, 200, base, loadEnd)+noise(0.6)))
			p.AddFloat("power_w", power).AddFloat("energy_j", milli(gpuEnergy[g])).AddFloat("power_limit_w", 700)
			p.AddFloat("util_pct", 100*b2f(loaded)).AddFloat("mem_util_pct", 60*b2f(loaded))
			p.AddInt("mem_used_bytes", 1<<30+int64(b2f(loaded))*(60<<30)).AddInt("mem_total_bytes", 80<<30).AddInt("pstate", 0)
			p.AddFloat("sm_clock_mhz", 1980-200*b2f(loaded)).AddFloat("mem_clock_mhz", 2619)
			p.AddInt("clock_event_reasons", 0).AddBool("throttle_thermal", false).AddBool("throttle_power", loaded)
			p.AddFloat("slowdown_c", 89)
			pts = append(pts, p)
		}
		for chip := 0; chip < 2; chip++ {
			cpu := rise(t, 38+2*float64(chip), 35, 45, base, loadEnd)
			for sensor := 0; sensor < 5; sensor++ {
				p := point.New(schema.Hwmon, ts)
				class, label := "cpu_core", "Core "+strconv.Itoa(sensor-1)
				if sensor == 0 {
					class, label = "cpu_package", "Package id "+strconv.Itoa(chip)
				}
				p.AddTag("host", "node1").AddTag("chip", "platform_coretemp_"+strconv.Itoa(chip)).AddTag("chip_name", "coretemp")
				p.AddTag("sensor", "temp"+strconv.Itoa(sensor+1)).AddTag("label", label).AddTag("class", class)
				p.AddFloat("temp_c", math.Round(cpu+float64(sensor)+noise(1))).AddFloat("max_c", 90).AddFloat("crit_c", 100)
				pts = append(pts, p)
			}
			rp := point.New(schema.RAPL, ts)
			power := milli(60 + 180*b2f(loaded) + noise(5))
			raplEnergy[chip] += power
			rp.AddTag("host", "node1").AddTag("zone", "package-"+strconv.Itoa(chip)).AddTag("zone_id", "intel-rapl:"+strconv.Itoa(chip))
			rp.AddFloat("energy_j", milli(raplEnergy[chip])).AddFloat("power_w", power)
			pts = append(pts, rp)
			nv := point.New(schema.NVMe, ts)
			nv.AddTag("host", "node1").AddTag("device", "nvme"+strconv.Itoa(chip)).AddTag("model", "SAMSUNG MZQL23T8HCLS").AddTag("serial", "S64H0000"+strconv.Itoa(chip)).AddTag("sensor", "Composite")
			nv.AddFloat("temp_c", math.Round(rise(t, 31, 8, 600, base, loadEnd)+noise(0.6))).AddFloat("warn_c", 80).AddFloat("crit_c", 85)
			pts = append(pts, nv)
		}
		node := tenth(400 + 8*70 + 2*60 + (8*620+2*180+300)*b2f(loaded) + noise(20))
		pduEnergy += node
		pdu := point.New(schema.PDU, ts)
		pdu.AddTag("host", "node1").AddTag("pdu", "rack1-a")
		pdu.AddFloat("current_a", tenth(node/208)).AddFloat("power_w", node).AddFloat("energy_j", math.Round(pduEnergy))
		pts = append(pts, pdu)

		coolant := tenth(rise(t, 30, 8, 2400, base+60, loadEnd+60) + noise(0.05))
		pump := math.Mod(t, 1800) < 300 // the vendor's minimum circulation
		tk := point.New(schema.Tank, ts)
		tk.AddTag("host", "node1").AddTag("tank", "smartpod1").AddTag("vendor", "submer")
		tk.AddFloat("coolant_temp_c", coolant).AddFloat("setpoint_c", 45)
		tk.AddFloat("consumption_w", math.Round(50+320*b2f(pump)+noise(2))).AddFloat("dissipation_kw", 3.5*b2f(pump)).AddFloat("dissipation_c", 2*b2f(pump)).AddFloat("dissipation_w", 3500*b2f(pump))
		tk.AddFloat("mpue", 1.03).AddBool("pump1_on", pump).AddBool("pump2_on", false).AddFloat("pump1_rpm", 1450*b2f(pump)).AddFloat("pump2_rpm", 0)
		tk.AddFloat("coolant_in_c", tenth(coolant+1)).AddFloat("coolant_out_c", tenth(coolant-1)).AddFloat("coolant_flow_lpm", 40*b2f(pump))
		tk.AddFloat("water_in_c", 11).AddFloat("water_out_c", 11+3*b2f(pump)).AddFloat("water_flow_lpm", 17*b2f(pump))
		tk.AddFloat("alarm_c", 55).AddFloat("controller_cpu0_c", 59).AddFloat("controller_cpu1_c", 58).AddString("mode", "normal")
		pts = append(pts, tk)

		host := point.New(schema.CPU, ts)
		host.AddTag("host", "node1").AddTag("cpu", "total")
		u := tenth(2 + 95*b2f(loaded) + noise(1))
		host.AddFloat("usage_pct", u).AddFloat("user_pct", tenth(u*0.9)).AddFloat("system_pct", tenth(u*0.1)).AddFloat("iowait_pct", 0).AddFloat("idle_pct", tenth(100-u))
		mem := point.New(schema.Mem, ts)
		mem.AddTag("host", "node1")
		mem.AddInt("total_bytes", 512<<30).AddInt("available_bytes", 480<<30).AddInt("used_bytes", 32<<30).AddInt("swap_used_bytes", 0)
		tick := point.New(schema.CollectorTick, ts)
		tick.AddTag("host", "node1")
		tick.AddFloat("lag_s", math.Round((0.0004+noise(0.0002))*1e6)/1e6).AddInt("missed_ticks_total", 0).AddInt("points", 27)
		pts = append(pts, host, mem, tick)
		if s == 0 {
			for i := range pts {
				for _, f := range pts[i].Fields {
					if _, ok := point.Float(f.Value); ok {
						series++
					}
				}
			}
		}
		if err := w.Write(pts); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	end := at(float64(total))
	bEnd, lEnd := at(base), at(loadEnd)
	m := &rundir.Meta{ID: "bench-" + strconv.Itoa(total), Host: "node1", Start: start, End: &end, IntervalS: 1, Status: "complete",
		Labels:   map[string]string{"cooling": "immersion"},
		Phases:   []rundir.Phase{{Name: "baseline", Start: start, End: &bEnd}, {Name: "load", Start: bEnd, End: &lEnd}, {Name: "cooldown", Start: lEnd, End: &end}},
		Workload: &rundir.Workload{Name: "dgemm"}}
	for i, t := 0, base; t+100 <= loadEnd; i, t = i+1, t+100 {
		m.Workload.Iterations = append(m.Workload.Iterations, rundir.Iteration{N: i, Start: at(t), End: at(t + 100), RuntimeS: 100 + noise(0.5)})
	}
	if err := rundir.WriteMeta(dir, m); err != nil {
		return err
	}
	fmt.Printf("series\t%d\nsamples\t%d\npoints\t%d\nlines\t%d\n", series, total+1, series*(total+1), len(pts)*(total+1))
	return nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
