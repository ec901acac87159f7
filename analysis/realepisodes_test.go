package analysis

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/rundir"
)

// h100x4 loads testdata/h100x4-episodes (README.md there): heatsink's own
// recording without phases of four H100s loaded one at a time and then
// all together, and the nvidia-smi CSV recorded beside it, imported
// without phases; both analysed.
func h100x4(t *testing.T) (hs, smi *Report, schedule [][3]float64) {
	t.Helper()
	src := filepath.Join("testdata", "h100x4-episodes")
	dir := t.TempDir()
	hsDir := filepath.Join(src, "rec") // points.lp.gz, read as it is
	meta, err := rundir.ReadMeta(hsDir)
	if err != nil {
		t.Fatal(err)
	}
	smiDir := filepath.Join(dir, "smi")
	importSMI(t, filepath.Join(src, "nvidia-smi.csv"), meta, smiDir)
	var reps [2]*Report
	for k, d := range []string{hsDir, smiDir} {
		run, err := Load(d)
		if err != nil {
			t.Fatal(err)
		}
		reps[k] = Analyze(run, DefaultOptions())
	}
	f, err := os.Open(filepath.Join(src, "schedule.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		var row [3]float64
		for i := range row {
			if row[i], err = strconv.ParseFloat(fs[i], 64); err != nil {
				t.Fatalf("schedule.txt: %v", err)
			}
		}
		row[1] -= float64(meta.Start.UnixNano()) / 1e9
		row[2] -= float64(meta.Start.UnixNano()) / 1e9
		schedule = append(schedule, row)
	}
	return reps[0], reps[1], schedule
}

// On the real 4-GPU recording, the episodes are the scheduled loads, in
// both heatsink's and nvidia-smi's recording (nvidia-smi's clock and
// sampling phase differ by up to a second or two).
func TestRealEpisodesMatchTheSchedule(t *testing.T) {
	hs, smi, sched := h100x4(t)
	for name, rep := range map[string]*Report{"heatsink": hs, "nvidia-smi": smi} {
		if len(rep.Episodes) != len(sched) {
			t.Fatalf("%s: %d episodes, want the %d scheduled loads", name, len(rep.Episodes), len(sched))
		}
		for _, s := range sched {
			ok := false
			for _, e := range rep.Episodes {
				if e.GPU == strconv.Itoa(int(s[0])) && math.Abs(e.StartS-s[1]) <= 3 && math.Abs(e.EndS-s[2]) <= 3 {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s: no episode of GPU %.0f from %.1f s to %.1f s", name, s[0], s[1], s[2])
			}
		}
	}
}

// The coupling measured on the real node: GPU 2 heats GPU 3 and GPU 1
// heats GPU 0 (they share airflow, 2 and 1 upstream), nothing else
// measurably; the two recordings agree.
func TestRealCouplingMatrix(t *testing.T) {
	hs, smi, _ := h100x4(t)
	for name, rep := range map[string]*Report{"heatsink": hs, "nvidia-smi": smi} {
		for _, c := range rep.Coupling {
			if c.CPerW == nil {
				t.Errorf("%s %s→%s %s: %s", name, c.Source, c.Neighbour, c.Kind, c.NotComputed)
				continue
			}
			pair := c.Source + "→" + c.Neighbour
			switch {
			case pair == "2→3":
				if *c.LoCPerW < 0.005 || *c.CPerW < 0.008 || *c.CPerW > 0.013 {
					t.Errorf("%s 2→3 %s: %.4f [%.4f, %.4f], want about 0.010 and clear of 0", name, c.Kind, *c.CPerW, *c.LoCPerW, *c.HiCPerW)
				}
			case pair == "1→0":
				if *c.HiCPerW < 0.006 || *c.CPerW < 0.004 {
					t.Errorf("%s 1→0 %s: %.4f [%.4f, %.4f], want about 0.007", name, c.Kind, *c.CPerW, *c.LoCPerW, *c.HiCPerW)
				}
			default:
				if math.Abs(*c.CPerW) > 0.0025 {
					t.Errorf("%s %s %s: %.4f [%.4f, %.4f], want about 0", name, pair, c.Kind, *c.CPerW, *c.LoCPerW, *c.HiCPerW)
				}
			}
		}
	}
}

// One episode's fingerprint from heatsink's recording and from
// nvidia-smi's agree: each GPU's single-GPU episode, core and memory,
// within the intervals.
func TestRealFingerprintAgreesWithNvidiaSMI(t *testing.T) {
	hs, smi, _ := h100x4(t)
	find := func(rep *Report, id string) map[string]EpisodeResult {
		out := map[string]EpisodeResult{}
		for _, c := range rep.Components {
			if c.ID == id {
				for _, e := range c.Episodes {
					if len(e.NeighboursLoaded) == 0 {
						out[id] = e
					}
				}
			}
		}
		return out
	}
	for g := range 4 {
		for _, kind := range []string{KindGPUCore, KindGPUMem} {
			id := kind + ":" + strconv.Itoa(g)
			a, b := find(hs, id)[id], find(smi, id)[id]
			if a.Fingerprint == nil || b.Fingerprint == nil || a.ThermalResistanceHiCPerW == nil || b.ThermalResistanceHiCPerW == nil {
				t.Errorf("%s: no fitted single-GPU fingerprint in both recordings", id)
				continue
			}
			if *a.ThermalResistanceLoCPerW > *b.ThermalResistanceHiCPerW || *b.ThermalResistanceLoCPerW > *a.ThermalResistanceHiCPerW {
				t.Errorf("%s: heatsink %.4f [%.4f, %.4f] °C/W, nvidia-smi %.4f [%.4f, %.4f]: disjoint", id,
					*a.ThermalResistanceCPerW, *a.ThermalResistanceLoCPerW, *a.ThermalResistanceHiCPerW,
					*b.ThermalResistanceCPerW, *b.ThermalResistanceLoCPerW, *b.ThermalResistanceHiCPerW)
			}
		}
	}
}
