package slurm

import (
	"slices"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// Two jobs on MIG instances of a node of two GPUs, learnt from their
// CUDA_VISIBLE_DEVICES as the Prolog learns them: job 301 holds an
// instance of GPU 0; job 302 another instance of GPU 0 and one of GPU 1.
// GPU 0's points carry both jobs, and its energy is in neither job's
// energy_j; GPU 1's is job 302's alone.
func TestSummaryOfMIGJobsSharesTheGPUTheyShare(t *testing.T) {
	var jobs []Job
	for id, cuda := range map[string]string{"301": "MIG-GPU-a/1/0", "302": "MIG-GPU-a/2/0,MIG-GPU-b/1/0"} {
		gpus, src, err := JobGPUs(env(map[string]string{"SLURM_JOB_GPUS": "0", "CUDA_VISIBLE_DEVICES": cuda}))
		if err != nil || src != GPUsFromMIG {
			t.Fatalf("job %s: %v from %q, %v", id, gpus, src, err)
		}
		jobs = append(jobs, Job{ID: id, GPUs: gpus, GPUSource: src})
	}
	tags := NewJobTags(jobs)
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	start, end := t0.Add(60*time.Second), t0.Add(180*time.Second)
	observe, results := map[string]func(*point.Point){}, map[string]func() map[string]Holding{}
	for _, id := range []string{"301", "302"} {
		observe[id], results[id] = holdings(id, start)
	}
	w, err := rundir.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	energy := []float64{0, 0}
	for s := 0; s <= 210; s++ {
		at := t0.Add(time.Duration(s) * time.Second)
		for i, uuid := range []string{"GPU-a", "GPU-b"} {
			power := 100.0 * float64(i+1) // 100 W and 200 W throughout
			p := point.New("gpu", at)
			p.AddTag("gpu", string(rune('0'+i))).AddTag("uuid", uuid).AddTag("host", "n1")
			p.AddFloat("temp_c", 50).AddFloat("power_w", power).AddFloat("energy_j", energy[i])
			energy[i] += power
			q := p
			if s >= 60 && s <= 180 {
				q.Tags = append(slices.Clone(p.Tags), tags.TagsFor(&p)...)
			}
			for _, o := range observe {
				o(&q)
			}
			if err := w.Write([]point.Point{p}); err != nil {
				t.Fatal(err)
			}
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
	run, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		job            string
		ownJ, sharedJ  float64
		sharedGPU      string
		sharedWith     string
		summarisedGPUs []string
	}{
		{"301", 0, 12000, "0", "302", []string{"0"}},
		{"302", 24000, 12000, "0", "301", []string{"0", "1"}},
	} {
		held := results[c.job]()
		s := Summarize(run, analysis.DefaultOptions(), Span{Job: c.job, Nodes: []string{"n1"}, Start: start, End: end, Held: held})
		var gpus []string
		for _, g := range s.GPUs {
			gpus = append(gpus, g.GPU)
			if shared := g.GPU == c.sharedGPU; shared != slices.Equal(g.SharedWith, []string{c.sharedWith}) {
				t.Errorf("job %s GPU %s: shared with %v", c.job, g.GPU, g.SharedWith)
			}
		}
		if !slices.Equal(gpus, c.summarisedGPUs) {
			t.Errorf("job %s summarises GPUs %v, want %v", c.job, gpus, c.summarisedGPUs)
		}
		n := s.NodeEnergy[0]
		if n.EnergyJ == nil || *n.EnergyJ != c.ownJ || n.SharedGPUEnergyJ == nil || *n.SharedGPUEnergyJ != c.sharedJ {
			t.Errorf("job %s: energy_j %v, shared_gpu_energy_j %v; want %v and %v", c.job, deref(n.EnergyJ), deref(n.SharedGPUEnergyJ), c.ownJ, c.sharedJ)
		}
	}
}
