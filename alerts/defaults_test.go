package alerts_test

import (
	"io/fs"
	"maps"
	"slices"
	"testing"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
)

// node is one tick of an immersed GPU node, nominal unless a test changes it.
type node struct {
	gpuC, memC, nvmeC, cpuC, coolantC float64
	reasons                           int
	mode                              string
	demo, nvmeSilent                  bool
}

func nominal() node {
	return node{gpuC: 45, memC: 50, nvmeC: 40, cpuC: 50, coolantC: 32, reasons: 0x1, mode: "normal"}
}

func (n node) points() []point.Point {
	ps := []point.Point{
		gpu(0, f{"temp_c", n.gpuC}, f{"mem_temp_c", n.memC}, f{"clock_event_reasons", n.reasons},
			f{"throttle_thermal", false}, f{"slowdown_c", 89.0}, f{"shutdown_c", 95.0}, f{"mem_max_c", 95.0}),
		pt("hwmon", "chip=pci0000:00_0000:00:18.3 chip_name=k10temp sensor=temp1 label=Tctl class=cpu host=n1", f{"temp_c", n.cpuC}),
		pt("hwmon", "chip=pci0000:00_0000:00:18.3 chip_name=k10temp sensor=temp3 label=Tccd1 class=other host=n1", f{"temp_c", n.cpuC + 30}),
		tank(f{"coolant_temp_c", n.coolantC}, f{"setpoint_c", 35.0}, f{"alarm_c", 45.0}, f{"mode", n.mode}, f{"demo", n.demo}),
	}
	if !n.nvmeSilent {
		ps = append(ps, pt("nvme", "device=nvme0 model=X sensor=Composite host=n1", f{"temp_c", n.nvmeC}, f{"warn_c", 70.0}, f{"crit_c", 80.0}))
	}
	return ps
}

// TestShippedRulesFireOnTheirHotspotsOnly plays 70 s of a node through the
// default rules of configs/alerts.yaml: a nominal node fires nothing, and
// each hotspot fires its own rules.
func TestShippedRulesFireOnTheirHotspotsOnly(t *testing.T) {
	b, err := fs.ReadFile(configs.Examples, "alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(n *node, sec int)
		want   []string
	}{
		{"nominal", func(n *node, sec int) { n.gpuC += float64(sec % 3) }, nil},
		// 85 °C in 32 °C coolant is also the blind spot's difference (45 °C).
		{"GPU core near slowdown", func(n *node, _ int) { n.gpuC = 85 }, []string{"gpu_core_near_slowdown", "immersion_blind_spot_gpu"}},
		{"GPU loaded but cool", func(n *node, _ int) { n.gpuC = 72 }, nil},
		{"GPU memory near max", func(n *node, _ int) { n.memC = 91 }, []string{"gpu_memory_near_max"}},
		{"power brake", func(n *node, _ int) { n.reasons = 0x80 | 0x1 }, []string{"gpu_clocks_thermal_or_power_brake"}},
		{"power cap only", func(n *node, _ int) { n.reasons = 0x4 }, nil},
		{"NVMe above warning", func(n *node, _ int) { n.nvmeC = 72 }, []string{"nvme_above_warning"}},
		{"tank in demo mode", func(n *node, _ int) { n.demo = true }, []string{"tank_demo_mode"}},
		{"tank mode", func(n *node, _ int) { n.mode = "maintenance" }, []string{"tank_mode_not_normal"}},
		{"coolant alarm", func(n *node, _ int) { n.coolantC = 46 }, []string{"tank_coolant_alarm", "tank_coolant_above_setpoint"}},
		{"coolant 4 °C above setpoint", func(n *node, _ int) { n.coolantC = 39 }, []string{"tank_coolant_above_setpoint"}},
		{"GPU heating, coolant still", func(n *node, sec int) { n.gpuC = 40 + float64(sec)/2 }, []string{"immersion_blind_spot_gpu"}},
		{"CPU heating, coolant still", func(n *node, sec int) { n.cpuC = 40 + float64(sec)/4 }, []string{"immersion_blind_spot_cpu"}},
		{"GPU and coolant heating together", func(n *node, sec int) {
			n.gpuC = 40 + float64(sec)/2
			n.coolantC = 32 + float64(sec)/30
		}, nil},
		{"NVMe goes silent", func(n *node, sec int) { n.nvmeSilent = sec > 20 }, []string{"sensor_silent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := replay(t, string(b), ticks(0, 70, func(i int) []point.Point {
				n := nominal()
				tt.change(&n, i)
				return n.points()
			}))
			fired := map[string]bool{}
			for _, p := range rec.points {
				fired[p.Tag("rule")] = true
			}
			got := slices.Sorted(maps.Keys(fired))
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("fired %q, want %q", got, tt.want)
			}
		})
	}
}
