// Command promgen writes a day (or --hours) of 1 Hz readings of one 8-GPU
// node, as DCGM exporter and node_exporter expose them, in the OpenMetrics
// text that `promtool tsdb create-blocks-from openmetrics` backfills into a
// Prometheus TSDB: the data bench/prometheus-export.sh exports. Every family
// is typed gauge, as OpenMetrics wants counters' samples suffixed _total and
// the exporters' names do not all follow that; queries do not read types.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"time"
)

func main() {
	hours := flag.Float64("hours", 24, "span of the readings")
	gpus := flag.Int("gpus", 8, "GPUs on the node")
	cores := flag.Int("cores", 32, "CPU cores (coretemp sensors, across 2 packages)")
	end := flag.Int64("end", time.Now().Add(-time.Hour).Unix(), "Unix time of the last reading")
	host := flag.String("host", "gpu-node-01", "the node's name")
	flag.Parse()
	n := int64(*hours * 3600)
	start := *end - n + 1
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()

	// load is 1 in a job's hour, 0 between: jobs run 50 min of each hour.
	load := func(t int64) float64 {
		if (t/60)%60 < 50 {
			return 1
		}
		return 0
	}
	// lag follows load through a first-order lag of time constant tau.
	lag := func(idle, rise, tau float64) func(int64, float64) float64 {
		return func(t int64, prev float64) float64 {
			target := idle + rise*load(t)
			if math.IsNaN(prev) {
				return idle
			}
			return prev + (target-prev)*(1-math.Exp(-1/tau))
		}
	}
	for _, f := range []struct {
		name, typ        string
		idle, rise, tau  float64
		counter, integer bool
	}{
		{"DCGM_FI_DEV_GPU_TEMP", "gauge", 34, 30, 8, false, true},
		{"DCGM_FI_DEV_MEMORY_TEMP", "gauge", 38, 32, 13, false, true},
		{"DCGM_FI_DEV_POWER_USAGE", "gauge", 70, 620, 1, false, false},
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "gauge", 0, 0, 0, true, false},
		{"DCGM_FI_DEV_SM_CLOCK", "gauge", 345, 1635, 1, false, true},
		{"DCGM_FI_DEV_MEM_CLOCK", "gauge", 2619, 0, 1, false, true},
		{"DCGM_FI_DEV_GPU_UTIL", "gauge", 0, 100, 1, false, true},
		{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", 0, 4, 1, false, true},
	} {
		fmt.Fprintf(w, "# TYPE %s %s\n", f.name, f.typ)
		for g := 0; g < *gpus; g++ {
			labels := fmt.Sprintf(`gpu="%d",UUID="GPU-%08d-0000-0000-0000-000000000000",device="nvidia%d",modelName="NVIDIA H100 80GB HBM3",Hostname="%s",instance="%s:9400",job="dcgm"`, g, g, g, *host, *host)
			v, energy := math.NaN(), 0.0
			for t := start; t <= *end; t++ {
				if f.counter {
					energy += (70 + 620*load(t)) * 1000 // mJ a second
					fmt.Fprintf(w, "%s{%s} %.0f %d\n", f.name, labels, energy, t)
					continue
				}
				v = lag(f.idle+float64(g%3), f.rise, f.tau)(t, v)
				if f.integer {
					fmt.Fprintf(w, "%s{%s} %.0f %d\n", f.name, labels, math.Round(v), t)
				} else {
					fmt.Fprintf(w, "%s{%s} %.3f %d\n", f.name, labels, v, t)
				}
			}
		}
	}
	ne := fmt.Sprintf(`instance="%s:9100",job="node"`, *host)
	fmt.Fprintf(w, "# TYPE node_hwmon_temp_celsius gauge\n")
	for pkg := 0; pkg < 2; pkg++ {
		for s := 1; s <= *cores/2+1; s++ {
			labels := fmt.Sprintf(`chip="platform_coretemp_%d",sensor="temp%d",%s`, pkg, s, ne)
			v := math.NaN()
			for t := start; t <= *end; t++ {
				v = lag(38+float64(s%4), 25, 5)(t, v)
				fmt.Fprintf(w, "node_hwmon_temp_celsius{%s} %.0f %d\n", labels, v, t)
			}
		}
	}
	for _, info := range []string{"node_hwmon_chip_names", "node_hwmon_sensor_label"} {
		fmt.Fprintf(w, "# TYPE %s gauge\n", info)
		for pkg := 0; pkg < 2; pkg++ {
			for s := 1; s <= *cores/2+1; s++ {
				var labels string
				if info == "node_hwmon_chip_names" {
					if s > 1 {
						continue
					}
					labels = fmt.Sprintf(`chip="platform_coretemp_%d",chip_name="coretemp",%s`, pkg, ne)
				} else if s == 1 {
					labels = fmt.Sprintf(`chip="platform_coretemp_%d",label="Package id %d",sensor="temp1",%s`, pkg, pkg, ne)
				} else {
					labels = fmt.Sprintf(`chip="platform_coretemp_%d",label="Core %d",sensor="temp%d",%s`, pkg, s-2, s, ne)
				}
				for t := start; t <= *end; t++ {
					fmt.Fprintf(w, "%s{%s} 1 %d\n", info, labels, t)
				}
			}
		}
	}
	fmt.Fprintf(w, "# TYPE node_rapl_package_joules_total gauge\n")
	for pkg := 0; pkg < 2; pkg++ {
		labels := fmt.Sprintf(`index="%d",path="/sys/class/powercap/intel-rapl:%d",%s`, pkg, pkg, ne)
		e := 0.0
		for t := start; t <= *end; t++ {
			e += 60 + 140*load(t)
			fmt.Fprintf(w, "node_rapl_package_joules_total{%s} %.3f %d\n", labels, e, t)
		}
	}
	for _, m := range []struct {
		name string
		f    func(t int64) float64
	}{
		{"node_load1", func(t int64) float64 { return 0.2 + 31*load(t) }},
		{"node_memory_MemTotal_bytes", func(int64) float64 { return 2 << 40 }},
		{"node_memory_MemAvailable_bytes", func(t int64) float64 { return 2<<40 - 1<<38*load(t) - 1<<33 }},
	} {
		fmt.Fprintf(w, "# TYPE %s gauge\n", m.name)
		for t := start; t <= *end; t++ {
			fmt.Fprintf(w, "%s{%s} %.6g %d\n", m.name, ne, m.f(t), t)
		}
	}
	fmt.Fprintln(w, "# EOF")
}
