// Command genrun writes a synthetic run directory shaped like a day on an
// immersed 8-GPU node, for measuring `heatsink report` at scale: a 30 min
// baseline, a 7.5 h load and a cooldown to the end (the reference study's
// protocol), sampled at 1 Hz, about 200 series in 27 points per tick (GPU
// and tank points carry many fields each, as their sources write them).
//
//	go run ./bench/genrun -hours 24 -out /tmp/run
//
// With -episodes N it writes instead a recording of `heatsink collect` on a
// shared 8-GPU node with no phases and at least N load episodes planted
// (episodes.go), for measuring episode detection at scale:
//
//	go run ./bench/genrun -episodes 200 -hours 168 -out /tmp/week
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
	episodes := flag.Int("episodes", 0, "write a recording without phases of an 8-GPU node with at least this many load episodes")
	flag.Parse()
	if *out == "" {
		log.Fatal("genrun: -out DIR is required")
	}
	if *episodes > 0 {
		if err := generateEpisodes(*out, *hours/24, 8, *episodes); err != nil {
			log.Fatal(err)
		}
		return
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
			p.AddTag(schema.TagHost, "node1").AddTag(schema.TagGPU, id).AddTag(schema.TagUUID, "GPU-5c1f0e2a-7d3b-4e6f-9a18-00000000000"+id).AddTag(schema.TagModel, "NVIDIA H100 80GB HBM3")
			core := math.Round(rise(t, 33+float64(g), 38, 90+10*float64(g), base, loadEnd) + noise(0.6))
			power := milli(70 + 620*b2f(loaded) + noise(15))
			gpuEnergy[g] += power
			p.AddFloat(schema.FieldTempC, core).AddFloat(schema.FieldMemTempC, math.Round(rise(t, 38, 30, 200, base, loadEnd)+noise(0.6)))
			p.AddFloat(schema.FieldPowerW, power).AddFloat(schema.FieldEnergyJ, milli(gpuEnergy[g])).AddFloat(schema.FieldPowerLimitW, 700)
			p.AddFloat(schema.FieldUtilPct, 100*b2f(loaded)).AddFloat(schema.FieldMemUtilPct, 60*b2f(loaded))
			p.AddInt(schema.FieldMemUsedBytes, 1<<30+int64(b2f(loaded))*(60<<30)).AddInt(schema.FieldMemTotalBytes, 80<<30).AddInt(schema.FieldPState, 0)
			p.AddFloat(schema.FieldSMClockMHz, 1980-200*b2f(loaded)).AddFloat(schema.FieldMemClockMHz, 2619)
			p.AddInt(schema.FieldClockEventReasons, 0).AddBool(schema.FieldThrottleThermal, false).AddBool(schema.FieldThrottlePower, loaded)
			p.AddFloat(schema.FieldSlowdownC, 89)
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
				p.AddTag(schema.TagHost, "node1").AddTag(schema.TagChip, "platform_coretemp_"+strconv.Itoa(chip)).AddTag(schema.TagChipName, "coretemp")
				p.AddTag(schema.TagSensor, "temp"+strconv.Itoa(sensor+1)).AddTag(schema.TagLabel, label).AddTag(schema.TagClass, class)
				p.AddFloat(schema.FieldTempC, math.Round(cpu+float64(sensor)+noise(1))).AddFloat(schema.FieldMaxC, 90).AddFloat(schema.FieldCritC, 100)
				pts = append(pts, p)
			}
			rp := point.New(schema.RAPL, ts)
			power := milli(60 + 180*b2f(loaded) + noise(5))
			raplEnergy[chip] += power
			rp.AddTag(schema.TagHost, "node1").AddTag(schema.TagZone, "package-"+strconv.Itoa(chip)).AddTag(schema.TagZoneID, "intel-rapl:"+strconv.Itoa(chip))
			rp.AddFloat(schema.FieldEnergyJ, milli(raplEnergy[chip])).AddFloat(schema.FieldPowerW, power)
			pts = append(pts, rp)
			nv := point.New(schema.NVMe, ts)
			nv.AddTag(schema.TagHost, "node1").AddTag(schema.TagDevice, "nvme"+strconv.Itoa(chip)).AddTag(schema.TagModel, "SAMSUNG MZQL23T8HCLS").AddTag(schema.TagSerial, "S64H0000"+strconv.Itoa(chip)).AddTag(schema.TagSensor, "Composite")
			nv.AddFloat(schema.FieldTempC, math.Round(rise(t, 31, 8, 600, base, loadEnd)+noise(0.6))).AddFloat(schema.FieldWarnC, 80).AddFloat(schema.FieldCritC, 85)
			pts = append(pts, nv)
		}
		node := tenth(400 + 8*70 + 2*60 + (8*620+2*180+300)*b2f(loaded) + noise(20))
		pduEnergy += node
		pdu := point.New(schema.PDU, ts)
		pdu.AddTag(schema.TagHost, "node1").AddTag(schema.TagPDU, "rack1-a")
		pdu.AddFloat(schema.FieldCurrentA, tenth(node/208)).AddFloat(schema.FieldPowerW, node).AddFloat(schema.FieldEnergyJ, math.Round(pduEnergy))
		pts = append(pts, pdu)

		coolant := tenth(rise(t, 30, 8, 2400, base+60, loadEnd+60) + noise(0.05))
		pump := math.Mod(t, 1800) < 300 // the vendor's minimum circulation
		tk := point.New(schema.Tank, ts)
		tk.AddTag(schema.TagHost, "node1").AddTag(schema.TagTank, "smartpod1").AddTag(schema.TagVendor, "submer")
		tk.AddFloat(schema.FieldCoolantTempC, coolant).AddFloat(schema.FieldSetpointC, 45)
		tk.AddFloat(schema.FieldConsumptionW, math.Round(50+320*b2f(pump)+noise(2))).AddFloat(schema.FieldDissipationKW, 3.5*b2f(pump)).AddFloat(schema.FieldDissipationC, 2*b2f(pump)).AddFloat(schema.FieldDissipationW, 3500*b2f(pump))
		tk.AddFloat(schema.FieldMPUE, 1.03).AddBool(schema.FieldPump1On, pump).AddBool(schema.FieldPump2On, false).AddFloat(schema.FieldPump1RPM, 1450*b2f(pump)).AddFloat(schema.FieldPump2RPM, 0)
		tk.AddFloat(schema.FieldCoolantInC, tenth(coolant+1)).AddFloat(schema.FieldCoolantOutC, tenth(coolant-1)).AddFloat(schema.FieldCoolantFlowLPM, 40*b2f(pump))
		tk.AddFloat(schema.FieldWaterInC, 11).AddFloat(schema.FieldWaterOutC, 11+3*b2f(pump)).AddFloat(schema.FieldWaterFlowLPM, 17*b2f(pump))
		tk.AddFloat(schema.FieldAlarmC, 55).AddFloat(schema.FieldControllerCPU0C, 59).AddFloat(schema.FieldControllerCPU1C, 58).AddString(schema.FieldMode, "normal")
		pts = append(pts, tk)

		host := point.New(schema.CPU, ts)
		host.AddTag(schema.TagHost, "node1").AddTag(schema.TagCPU, "total")
		u := tenth(2 + 95*b2f(loaded) + noise(1))
		host.AddFloat(schema.FieldUsagePct, u).AddFloat(schema.FieldUserPct, tenth(u*0.9)).AddFloat(schema.FieldSystemPct, tenth(u*0.1)).AddFloat(schema.FieldIowaitPct, 0).AddFloat(schema.FieldIdlePct, tenth(100-u))
		mem := point.New(schema.Mem, ts)
		mem.AddTag(schema.TagHost, "node1")
		mem.AddInt(schema.FieldTotalBytes, 512<<30).AddInt(schema.FieldAvailableBytes, 480<<30).AddInt(schema.FieldUsedBytes, 32<<30).AddInt(schema.FieldSwapUsedBytes, 0)
		tick := point.New(schema.CollectorTick, ts)
		tick.AddTag(schema.TagHost, "node1")
		tick.AddFloat(schema.FieldLagS, math.Round((0.0004+noise(0.0002))*1e6)/1e6).AddInt(schema.FieldMissedTicksTotal, 0).AddInt(schema.FieldPoints, 27)
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
