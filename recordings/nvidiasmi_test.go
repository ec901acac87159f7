package recordings

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// A log without an index column names each GPU by what else tells them
// apart, and a log imported without --host is named after its file, so
// neither ends up as "gpu_core:" on host "unknown".
func TestNvidiaSMIWithoutIndexNamesGPUsAndHost(t *testing.T) {
	for _, tc := range []struct {
		file    string
		gpus    []string
		warning string
	}{
		{"gpu-node3.uuid.csv", []string{"GPU-6e1a2f3c-0b1d-4b7e-9a55-3c1e0f7d2a10", "GPU-9b0c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e"}, "named by their UUID"},
		{"gpu-node3.bus.csv", []string{"00000000:18:00.0", "00000000:2A:00.0"}, "named by their PCI bus id"},
		{"gpu-node3.bare.csv", []string{"0"}, "taken as GPU 0"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			pts, res := readAll(t, "testdata/"+tc.file, Options{Location: time.UTC})
			var gpus []string
			for _, p := range pts {
				if p.Tag("host") != "gpu-node3" {
					t.Errorf("host %q, want the file's name gpu-node3", p.Tag("host"))
				}
				if !slices.Contains(gpus, p.Tag("gpu")) {
					gpus = append(gpus, p.Tag("gpu"))
				}
			}
			if !slices.Equal(gpus, tc.gpus) {
				t.Errorf("gpus %q, want %q", gpus, tc.gpus)
			}
			w := strings.Join(res.Warnings, "\n")
			if !strings.Contains(w, tc.warning) || !strings.Contains(w, `named "gpu-node3" after the file`) {
				t.Errorf("warnings:\n%s", w)
			}
		})
	}
}

// A cell's own unit is read, not assumed to be the column's: "71 kW" is
// 71000 W, not 71 W. A unit the column cannot hold costs that cell, with
// its row, column and unit, and the rest of the row is kept (issue 28).
func TestNvidiaSMICellUnitsAreConverted(t *testing.T) {
	const header = "timestamp, index, power.draw [W], memory.used [MiB], clocks.sm [MHz], utilization.gpu [%]\n"
	for _, tc := range []struct {
		name  string
		row   string
		field string
		want  float64 // in heatsink's unit; NaN: the field is left out
		bad   string  // what the bad cell's error names
	}{
		{"watts", "71.5 W, 1 MiB, 1 MHz, 1 %", "power_w", 71.5, ""},
		{"kilowatts", "71 kW, 1 MiB, 1 MHz, 1 %", "power_w", 71000, ""},
		{"milliwatts", "300 mW, 1 MiB, 1 MHz, 1 %", "power_w", 0.3, ""},
		{"bare is the header's unit", "70, 1 MiB, 1 MHz, 1 %", "power_w", 70, ""},
		{"gibibytes", "1 W, 10 GiB, 1 MHz, 1 %", "mem_used_bytes", 10 << 30, ""},
		{"kibibytes", "1 W, 2048 KiB, 1 MHz, 1 %", "mem_used_bytes", 2 << 20, ""},
		{"mebibytes", "1 W, 3 MiB, 1 MHz, 1 %", "mem_used_bytes", 3 << 20, ""},
		{"gigahertz", "1 W, 1 MiB, 1.5 GHz, 1 %", "sm_clock_mhz", 1500, ""},
		{"percent unspaced", "1 W, 1 MiB, 1 MHz, 35%", "util_pct", 35, ""},
		{"watts in memory", "1 W, 10 W, 1 MHz, 1 %", "mem_used_bytes", math.NaN(), `column memory.used: unit "W"`},
		{"unknown unit", "1 furlong, 1 MiB, 1 MHz, 1 %", "power_w", math.NaN(), `column power.draw: unit "furlong"`},
		{"megawatts", "0.001 MW, 1 MiB, 1 MHz, 1 %", "power_w", 1000, ""},
		{"unit case matters (mW or MW?)", "1 mw, 1 MiB, 1 MHz, 1 %", "power_w", math.NaN(), `column power.draw: unit "mw"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := header + "2024/03/01 12:00:00, 0, " + tc.row + "\n"
			var pts []point.Point
			res, err := Read(strings.NewReader(in), "n.csv", NvidiaSMI, Options{Host: "h", Location: time.UTC}, func(p *point.Point) error {
				pts = append(pts, *p)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(pts) != 1 {
				t.Fatalf("%d points, want 1 (the rest of the row is kept); bad %v", len(pts), res.Bad)
			}
			v, ok := pts[0].Field(tc.field)
			if math.IsNaN(tc.want) {
				if ok {
					t.Errorf("%s = %v, want it left out", tc.field, v)
				}
				if len(res.Bad) != 1 || res.Bad[0].Line != 2 || !strings.Contains(res.Bad[0].Error(), tc.bad) {
					t.Errorf("bad %v, want line 2 naming %s", res.Bad, tc.bad)
				}
				return
			}
			if len(res.Bad) != 0 {
				t.Errorf("bad %v", res.Bad)
			}
			got, _ := point.Float(v)
			if !ok || math.Abs(got-tc.want) > 1e-9*math.Abs(tc.want) {
				t.Errorf("%s = %v (%v), want %v", tc.field, got, ok, tc.want)
			}
		})
	}
}

// The same column named twice in a header is refused, naming the column
// and both positions: which of two different values is the reading cannot
// be known, and taking the first hid the question (issue 28).
func TestNvidiaSMIDuplicateColumnIsAnError(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   string
	}{
		{"timestamp, index, power.draw [W], power.draw [W]", "power.draw is columns 3 and 4"},
		{"timestamp, index, power.draw [W], Timestamp", "timestamp is columns 1 and 4"},
		{"index, timestamp, index, memory.used [MiB]", "index is columns 1 and 3"},
	} {
		t.Run(tc.header, func(t *testing.T) {
			in := tc.header + "\n2024/03/01 12:00:00, 0, 1, 2\n"
			_, err := Read(strings.NewReader(in), "n.csv", NvidiaSMI, Options{Host: "h", Location: time.UTC}, func(*point.Point) error { return nil })
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "n.csv:1") {
				t.Errorf("error %v, want one naming n.csv:1 and %q", err, tc.want)
			}
		})
	}
}
