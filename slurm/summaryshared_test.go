package slurm

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// writeSharedNode records a node of four GPUs shared by job 101 (GPUs 0
// and 1) and job 102 (GPUs 2 and 3) from 60 s to 180 s, tagged as the
// agent tags them (JobTags): GPU i draws 100·(i+1) W while the jobs run,
// 50 W before, and its energy counter counts it; GPU 1 slows for heat
// from 100 s to 150 s; the CPU package draws
// 100 W throughout. It returns the run directory and what each job held,
// as GatherJob learns it from the tags.
func writeSharedNode(t *testing.T) (string, time.Time, time.Time, map[string]map[string]Holding) {
	t.Helper()
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	start, end := t0.Add(60*time.Second), t0.Add(180*time.Second)
	tags := NewJobTags([]Job{
		{ID: "101", GPUs: []GPU{{Index: "0"}, {Index: "1"}}, GPUSource: GPUsFromSlurm},
		{ID: "102", GPUs: []GPU{{Index: "2"}, {Index: "3"}}, GPUSource: GPUsFromSlurm},
	})
	observers := map[string]func(*point.Point){}
	results := map[string]func() map[string]Holding{}
	for _, id := range []string{"101", "102"} {
		observers[id], results[id] = holdings(id, start)
	}
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	energy := make([]float64, 4)
	for s := 0; s <= 210; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		busy := s >= 60 && s < 180
		var pts []point.Point
		for i := range 4 {
			power, temp := 50.0, 40.0
			if busy {
				power, temp = 100*float64(i+1), 70+float64(i)
			}
			p := point.New("gpu", at)
			p.AddTag("gpu", string(rune('0'+i))).AddTag("uuid", "GPU-"+string(rune('a'+i))).AddTag("host", "n1")
			p.AddFloat("temp_c", temp).AddFloat("power_w", power).AddFloat("energy_j", energy[i])
			p.AddBool("throttle_thermal", i == 1 && s >= 100 && s < 150) // GPU 1 slows for 50 s
			energy[i] += power
			pts = append(pts, p)
		}
		r := point.New("rapl", at)
		r.AddTag("zone", "package-0").AddTag("zone_id", "intel-rapl:0").AddTag("host", "n1")
		r.AddFloat("energy_j", 100*float64(s))
		pts = append(pts, r)
		// The agent's tags are seen, then dropped, as gather does.
		for i := range pts {
			q := pts[i]
			if s >= 60 && s <= 180 {
				q.Tags = append(slices.Clone(q.Tags), tags.TagsFor(&q)...)
			}
			for _, o := range observers {
				o(&q)
			}
		}
		if err := w.Write(pts); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s0, e0 := start, end
	if err := rundir.WriteMeta(dir, &rundir.Meta{ID: "n1", Start: t0, IntervalS: 1, Phases: []rundir.Phase{
		{Name: "baseline", Start: t0, End: &s0}, {Name: "load", Start: start, End: &e0}}}); err != nil {
		t.Fatal(err)
	}
	held := map[string]map[string]Holding{}
	for id, r := range results {
		held[id] = r()
	}
	return dir, start, end, held
}

// Each job's summary holds only its GPUs and their energy; the CPU
// package's energy, which both jobs shared, is in neither job's energy_j.
func TestSummaryOfJobsSharingANodeCountsOnlyTheirGPUs(t *testing.T) {
	dir, start, end, held := writeSharedNode(t)
	run, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := held["101"]["n1"]; !slices.Equal(got.GPUs, []string{"0", "1"}) || !slices.Equal(got.SharedWith, []string{"102"}) {
		t.Fatalf("job 101 held %+v, want GPUs 0,1 shared with 102", got)
	}
	var sum float64
	for id, own := range map[string][]string{"101": {"0", "1"}, "102": {"2", "3"}} {
		s := Summarize(run, analysis.DefaultOptions(), Span{Job: id, Nodes: []string{"n1"}, Start: start, End: end, Held: held[id]})
		var gpus []string
		var gpuJ float64
		for _, g := range s.GPUs {
			gpus = append(gpus, g.GPU)
			if g.EnergyJ == nil || g.Method != "energy counter difference" {
				t.Fatalf("job %s GPU %s: %v by %q (%s)", id, g.GPU, deref(g.EnergyJ), g.Method, g.NotComputed)
			}
			// 120 s at 100·(i+1) W.
			if want := 120 * 100 * float64(g.GPU[0]-'0'+1); math.Abs(*g.EnergyJ-want) > 1e-6 {
				t.Errorf("job %s GPU %s: %v J, want %v", id, g.GPU, *g.EnergyJ, want)
			}
			gpuJ += *g.EnergyJ
			want := 0.0
			if g.GPU == "1" {
				want = 50
			}
			if g.ThermalThrottleS == nil || *g.ThermalThrottleS != want || g.PowerThrottleS != nil {
				t.Errorf("job %s GPU %s: thermal throttle %v s, power %v, want %v s and none", id, g.GPU, deref(g.ThermalThrottleS), deref(g.PowerThrottleS), want)
			}
		}
		if !slices.Equal(gpus, own) {
			t.Errorf("job %s summarises GPUs %v, want %v", id, gpus, own)
		}
		for _, c := range s.Components {
			if gpu, ok := gpuOf(c.ID); ok && strings.HasPrefix(c.Kind, "gpu") && !slices.Contains(own, gpu) {
				t.Errorf("job %s summarises %s, another job's GPU", id, c.ID)
			}
		}
		// The throttle seconds also reach the job_summary points, on each
		// GPU's core component.
		cores := 0
		for _, p := range s.Points() {
			if p.Tag("kind") != "gpu_core" {
				continue
			}
			cores++
			want := 0.0
			if p.Tag("component") == "gpu_core:1" {
				want = 50
			}
			if v, ok := p.Float("thermal_throttle_s"); !ok || v != want {
				t.Errorf("job %s %s point: thermal_throttle_s %v (%v), want %v", id, p.Tag("component"), v, ok, want)
			}
			if _, ok := p.Float("power_throttle_s"); ok {
				t.Errorf("job %s %s point has a power_throttle_s the GPU never reported", id, p.Tag("component"))
			}
		}
		if cores != 2 {
			t.Errorf("job %s: %d gpu_core points, want its 2 GPUs'", id, cores)
		}
		n := s.NodeEnergy[0]
		if n.EnergyJ == nil || math.Abs(*n.EnergyJ-gpuJ) > 1e-6 || n.CPUEnergyJ != nil {
			t.Errorf("job %s node energy %v (cpu %v), want its GPUs' %v J alone", id, deref(n.EnergyJ), deref(n.CPUEnergyJ), gpuJ)
		}
		if n.SharedCPUEnergyJ == nil || *n.SharedCPUEnergyJ != 12000 || len(n.SharedWith) != 1 {
			t.Errorf("job %s: shared CPU energy %v with %v, want the package's 12000 J with the other job", id, deref(n.SharedCPUEnergyJ), n.SharedWith)
		}
		sum += *n.EnergyJ
	}
	// The four GPUs' 120 s at 100+200+300+400 W, each counted once.
	if sum != 120000 {
		t.Errorf("the two jobs' energy_j sum to %v J, want the GPUs' 120000 J", sum)
	}
}
