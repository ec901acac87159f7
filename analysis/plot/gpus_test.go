package plot

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// eightGPUs writes a recording without phases of an 8-GPU node whose GPUs
// are loaded one after the other for 15 min each, each heating the next.
func eightGPUs(t *testing.T) *analysis.Report {
	t.Helper()
	dir := t.TempDir()
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	loaded := func(g int, s float64) bool { on := 600 + float64(g)*1500; return s >= on && s < on+900 }
	temp := make([]float64, 8)
	for s := 0.0; s <= 600+8*1500; s++ {
		var pts []point.Point
		for g := range 8 {
			target := 35.0
			if loaded(g, s) {
				target += 0.045 * 620
			}
			if g > 0 && loaded(g-1, s) {
				target += 0.006 * 620
			}
			if s == 0 {
				temp[g] = target
			}
			temp[g] += (target - temp[g]) * (1 - math.Exp(-1.0/70))
			pw := 70.0
			if loaded(g, s) {
				pw = 690
			}
			p := point.New("gpu", start.Add(time.Duration(s)*time.Second))
			p.AddTag("host", "n1").AddTag("gpu", strconv.Itoa(g)).AddTag("model", "NVIDIA H100 80GB HBM3")
			p.AddFloat("temp_c", math.Round(temp[g])).AddFloat("mem_temp_c", math.Round(temp[g]+3)).AddFloat("power_w", pw+math.Sin(s)*5)
			pts = append(pts, p)
		}
		if err := w.Write(pts); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteMeta(dir, &rundir.Meta{ID: "eight", Host: "n1", Start: start, IntervalS: 1}); err != nil {
		t.Fatal(err)
	}
	r, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return analysis.Analyze(r, analysis.DefaultOptions())
}

// A report of a recording with episodes gets the three GPU figures, the
// temperatures in eight distinct colours.
func TestGPUFiguresOfEightGPUs(t *testing.T) {
	rep := eightGPUs(t)
	if len(rep.Episodes) != 8 {
		t.Fatalf("%d episodes, want 8", len(rep.Episodes))
	}
	dir := t.TempDir()
	if _, err := WriteReport(dir, rep); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gpu-episodes", "gpu-fingerprints", "gpu-coupling"} {
		for _, ext := range []string{".svg", ".png"} {
			if st, err := os.Stat(filepath.Join(dir, name+ext)); err != nil || st.Size() == 0 {
				t.Errorf("%s%s: %v", name, ext, err)
			}
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, "gpu-episodes.svg"))
	if err != nil {
		t.Fatal(err)
	}
	colours := map[string]bool{}
	for _, m := range regexp.MustCompile(`stroke:(#[0-9A-Fa-f]{6})`).FindAllStringSubmatch(string(svg), -1) {
		colours[m[1]] = true
	}
	if len(colours) < 8 {
		t.Errorf("%d stroke colours in gpu-episodes.svg, want 8 and more: %v", len(colours), colours)
	}
	heat, err := os.ReadFile(filepath.Join(dir, "gpu-coupling.svg"))
	if err != nil {
		t.Fatal(err)
	}
	// Whole-degree readings put 3.72 °C of planted heating at 4 °C: 0.0065.
	if got := len(regexp.MustCompile(`>0\.00(5\d|6\d|70)<`).FindAll(heat, -1)); got != 7 {
		t.Errorf("%d cells of the coupling heatmap read 0.005-0.007 °C/W, want 7 (each GPU to the next)", got)
	}
}
