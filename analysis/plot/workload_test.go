package plot

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/analysis"
)

func realReport(t *testing.T, dir string) *analysis.Report {
	t.Helper()
	r, err := analysis.Load(filepath.Join("..", "testdata", dir))
	if err != nil {
		t.Fatal(err)
	}
	return analysis.Analyze(r, analysis.DefaultOptions())
}

// The real H100 DGEMM run gets the thermal-slowdown picture (TFLOP/s with
// the GPU's temperature on a second axis), and the VM run, which recorded
// no temperature, still gets figures: its throughput and its host.
func TestWorkloadAndHostFiguresOfRealRuns(t *testing.T) {
	for _, tc := range []struct {
		run        string
		figures    []string
		rightAxis  bool
		leftAxis   string
		rightTitle string
	}{
		{"h100-dgemm", []string{"temperatures", "throughput", "heat-intervals", "host"}, true, "throughput (TFLOP/s)", "hottest GPU temperature (°C)"},
		{"vm-cpu-stream", []string{"throughput", "host"}, false, "triad bandwidth (GB/s)", ""},
	} {
		t.Run(tc.run, func(t *testing.T) {
			rep := realReport(t, tc.run)
			dir := t.TempDir()
			figs, err := WriteReport(dir, rep)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range figs {
				names = append(names, strings.TrimSuffix(f.SVG, ".svg"))
				checkPNG(t, filepath.Join(dir, f.PNG))
				checkSVG(t, filepath.Join(dir, f.SVG))
			}
			if !slices.Equal(names, tc.figures) {
				t.Fatalf("figures %q, want %q", names, tc.figures)
			}
			d, err := throughputFigure(rep)
			if err != nil {
				t.Fatal(err)
			}
			f := d.(framed)
			if f.p.Y.Label.Text != tc.leftAxis || (f.right != nil) != tc.rightAxis {
				t.Errorf("left axis %q, right axis %+v", f.p.Y.Label.Text, f.right)
			}
			if f.right != nil && (f.right.label != tc.rightTitle || f.right.min >= f.right.max) {
				t.Errorf("right axis %+v", f.right)
			}
		})
	}
}

// An 8-GPU node: every GPU its own colour, its memory in the same one.
func TestEveryGPUHasItsOwnColour(t *testing.T) {
	seen := map[string]bool{}
	devices := map[string]int{}
	for g := 0; g < 8; g++ {
		for _, kind := range []string{analysis.KindGPUCore, analysis.KindGPUMem} {
			c := analysis.ComponentResult{ID: kind + ":" + string(rune('0'+g)), Kind: kind}
			k := deviceKey(c)
			if _, ok := devices[k]; !ok {
				devices[k] = len(devices)
			}
		}
	}
	if len(devices) != 8 {
		t.Fatalf("%d colour groups for 8 GPUs: %v", len(devices), devices)
	}
	for _, i := range devices {
		r, g, b, _ := colour(i).RGBA()
		key := string(rune(r>>8)) + string(rune(g>>8)) + string(rune(b>>8))
		if seen[key] {
			t.Errorf("colour %d repeats", i)
		}
		seen[key] = true
	}
	if deviceKey(analysis.ComponentResult{ID: "n1/gpu_core:0", Kind: analysis.KindGPUCore}) == deviceKey(analysis.ComponentResult{ID: "n2/gpu_core:0", Kind: analysis.KindGPUCore}) {
		t.Error("GPU 0 of two hosts share a colour")
	}
}
