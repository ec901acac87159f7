//go:build ignore

// gen writes immersion-stream.json, a LibSensorsTools recording
// (SensorTools 0.1.0 layout, see recordings/testdata/README.md) constructed
// to reproduce what the study's harness left behind on a real Submer
// SmartPod run of GPU STREAM: the job's script ends STREAM about 7 s before
// the wrapped command returns (GPU power 80 W -> 39 W), GPU memory rises
// about 18.8 °C over idle while the tank's coolant rises 0.37 °C, and the
// NVMe drive and the jc42 DIMM sensor never rise. Run: go run gen.go.
package main

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

const (
	t0        = 0.708086 // initial-wait-start on the tool's clock
	baselineS = 60
	loadS     = 240
	stopS     = 7 // STREAM ends this long before the wrapped command does
	postS     = 120
)

func main() {
	f, err := os.Create("immersion-stream.json")
	if err != nil {
		panic(err)
	}
	w := bufio.NewWriter(f)
	rng := rand.New(rand.NewPCG(29, 7))
	noise := func(a float64) float64 { return a * (2*rng.Float64() - 1) }
	fmt.Fprint(w, `[
{"arguments": {"help": 0, "cpu": 1, "gpu": 1, "submer": 1, "format": "json", "log": "Output[node1.json]",
	"error-log": "Output[node1.err]", "poll": 1, "initial-wait": 60, "post-wait": 120, "debug": 0,
	"version": "0", "wrapped-call": "./run_stream.sh"}},
{"versions": {"SensorTools": "0.1.0", "LibSensors": "3.6.0", "NVML": "11020", "NVIDIA Driver": "460.27.04"}},
{"event": "initialization", "duration": 0.70807},
`)
	fmt.Fprintf(w, "{\"event\": \"initial-wait-start\", \"timestamp\": %.6f},\n", t0)
	loadStart := t0 + baselineS + 1
	loadEnd := loadStart + loadS
	powerEnd := loadEnd - stopS
	// temp is a first-order response to the powered span [loadStart, powerEnd].
	temp := func(t, idle, rise, tauUp, tauDown float64) float64 {
		switch {
		case t < loadStart:
			return idle
		case t < powerEnd:
			return idle + rise*(1-math.Exp(-(t-loadStart)/tauUp))
		}
		top := rise * (1 - math.Exp(-(powerEnd-loadStart)/tauUp))
		return idle + top*math.Exp(-(t-powerEnd)/tauDown)
	}
	poll := func(tool, stamp float64) {
		powered := tool >= loadStart && tool < powerEnd
		fmt.Fprintf(w, "{\"event\": \"poll-data\", \"timestamp\": %.6f,\n", stamp)
		k10 := temp(tool, 18.3, 2.5, 30, 30) + noise(0.25)
		fmt.Fprintf(w, "\t\"cpu-k10temp-pci-00c3-temperature-0\": %.3f,\n", k10)
		fmt.Fprintf(w, "\t\"cpu-k10temp-pci-00c3-temperature-1\": %.3f,\n", k10+noise(0.25))
		fmt.Fprintf(w, "\t\"cpu-jc42-i2c-0-18-temperature-0\": %.2f,\n", 31.5+0.25*math.Round(noise(0.6)))
		for g := range 2 {
			off := float64(g)
			p := 24.7 + off + noise(0.4)
			util := 0.0
			switch {
			case powered:
				p, util = 80+noise(2.5), 100
			case tool >= powerEnd && tool < loadEnd:
				p = 39 + noise(1.5)
			}
			fmt.Fprintf(w, "\t\"gpu-%d-name\": \"TITAN V\",\n", g)
			fmt.Fprintf(w, "\t\"gpu-%d-gpu-temperature\": %.0f,\n", g, math.Round(temp(tool, 26+off, 14.5, 35, 18)+noise(0.45)))
			fmt.Fprintf(w, "\t\"gpu-%d-memory-temperature\": %.0f,\n", g, math.Round(temp(tool, 25+off, 18.8+off/2, 45, 18)+noise(0.45)))
			fmt.Fprintf(w, "\t\"gpu-%d-power-usage\": %.0f,\n", g, 1000*p)
			fmt.Fprintf(w, "\t\"gpu-%d-power-limit\": 250000,\n", g)
			fmt.Fprintf(w, "\t\"gpu-%d-utilization-gpu\": %.0f,\n", g, util)
			fmt.Fprintf(w, "\t\"gpu-%d-memory-total\": 12652838912,\n", g)
			fmt.Fprintf(w, "\t\"gpu-%d-pstate\": %d,\n", g, map[bool]int{true: 0, false: 8}[powered])
		}
		fmt.Fprintf(w, "\t\"nvme-0-0-temperature\": 38,\n")
		// The coolant is 250 L of oil: the GPUs' 110 W over four minutes
		// moves it by tenths of a degree.
		cool := 20.5 + 0.002*math.Max(0, math.Min(tool, powerEnd)-loadStart)*0.79 + noise(0.03)
		fmt.Fprintf(w, "\t\"submer-0-temperature\": %.2f,\n", cool)
		fmt.Fprintf(w, "\t\"submer-0-setpoint\": 35,\n")
		fmt.Fprintf(w, "\t\"submer-0-consumption\": %.0f,\n", 1450+noise(20))
		fmt.Fprintf(w, "\t\"submer-0-pump1rpm\": 0,\n\t\"submer-0-pump2rpm\": 0,\n")
		fmt.Fprintf(w, "\t\"submer-0-wti\": %.1f,\n\t\"submer-0-wto\": %.1f,\n", 18.1+noise(0.05), 18.4+noise(0.05))
		fmt.Fprintf(w, "\"dummy-end\": true\n},\n")
		fmt.Fprintf(w, "{\"event\": \"poll-update\", \"duration\": %.6f},\n", 0.005+0.001*rng.Float64())
	}
	// Baseline polls are stamped on the tool's clock, the rest from t0
	// (common_driver.cpp passes t0 to poll_cycle after the initial wait).
	for s := 0; s <= baselineS; s++ {
		tool := t0 + float64(s) + 0.0003*rng.Float64()
		poll(tool, tool)
	}
	fmt.Fprintf(w, "{\"event\": \"initial-wait-end\", \"timestamp\": %.6f},\n", loadStart)
	for s := 0; s < loadS; s++ {
		tool := loadStart + 0.3 + float64(s) + 0.0003*rng.Float64()
		poll(tool, tool-t0)
	}
	fmt.Fprintf(w, "{\"event\": \"wrapped-command-end\", \"timestamp\": %.6f},\n", loadEnd)
	fmt.Fprintf(w, "{\"event\": \"post-wait-start\", \"timestamp\": %.6f},\n", loadEnd+0.0001)
	for s := 0; s < postS; s++ {
		tool := loadEnd + 0.5 + float64(s) + 0.0003*rng.Float64()
		poll(tool, tool-t0)
	}
	fmt.Fprintf(w, "{\"event\": \"post-wait-end\", \"timestamp\": %.6f},\n", loadEnd+postS+0.5)
	fmt.Fprintf(w, "{ \"event\": \"shutdown\", \"timestamp\": %.6f }\n]\n", loadEnd+postS+0.51)
	if err := w.Flush(); err != nil {
		panic(err)
	}
	if err := f.Close(); err != nil {
		panic(err)
	}
}
