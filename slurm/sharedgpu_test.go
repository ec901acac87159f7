package slurm_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

// prologArg and epilogArg make this test binary Slurm's Prolog and Epilog,
// doing what `heatsink slurm prolog` and `epilog` do.
const (
	prologArg = "heatsink-test-prolog"
	epilogArg = "heatsink-test-epilog"
)

func prologOrEpilog(start bool, dir string) error {
	j, err := slurm.JobFromEnv(os.Getenv)
	if err != nil {
		return err
	}
	if !start {
		return slurm.EndJob(dir, j.ID)
	}
	if j.GPUs, j.GPUSource, err = slurm.JobGPUs(os.Getenv); err != nil {
		return err
	}
	if j.GPUSource == "" {
		c := slurm.Client{Env: []string{"SLURM_CONF=" + os.Getenv("SLURM_CONF")}}
		if err := slurm.NoGPUsOnGresNode(context.Background(), c, os.Getenv("SLURMD_NODENAME"), &j); err != nil {
			return err
		}
	}
	return slurm.StartJob(dir, j)
}

// Two jobs on one node of four GPU gres, each holding two: the Prolog
// slurmd runs learns each job's own GPUs, and each GPU's points are tagged
// with the job holding it alone; the node's shared readings with both.
func TestSharedGPUNodeOnRealSlurm(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "heatsink-sharedgpu-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	jobs := filepath.Join(dir, "jobs")
	script := func(name, arg string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\nexec "+self+" "+arg+" "+jobs+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c := slurmtest.Start(t, slurmtest.Options{Nodes: 1, GPUs: 4, Prolog: script("prolog.sh", prologArg), Epilog: script("epilog.sh", epilogArg)})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var allocs []*slurm.Allocation
	for range 2 {
		a, err := c.Client.Allocate(ctx, slurm.AllocOptions{Nodes: 1, Extra: []string{"--gres=gpu:2", "--ntasks=1"}})
		if err != nil {
			t.Fatal(err)
		}
		allocs = append(allocs, a)
		defer a.Release(context.Background())
	}
	recs, err := slurm.ReadJobs(jobs)
	if err != nil || len(recs) != 2 {
		t.Fatalf("job records after two allocations: %+v %v", recs, err)
	}
	holder := map[string]string{} // GPU index -> job
	for _, j := range recs {
		if j.GPUSource != slurm.GPUsFromSlurm || len(j.GPUs) != 2 {
			t.Errorf("job %s: GPUs %v from %q, want two from SLURM_JOB_GPUS", j.ID, j.GPUs, j.GPUSource)
		}
		for _, g := range j.GPUs {
			if other, ok := holder[g.Index]; ok {
				t.Errorf("GPU %s recorded for jobs %s and %s", g.Index, other, j.ID)
			}
			holder[g.Index] = j.ID
		}
	}
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range holder {
			if !yield(k) {
				return
			}
		}
	}); strings.Join(got, ",") != "0,1,2,3" {
		t.Fatalf("GPUs held %v, want 0-3 between the two jobs", got)
	}

	ch, _, err := slurm.NewWatcher(jobs).Poll(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	both := allocs[0].Job.ID + "," + allocs[1].Job.ID
	if allocs[1].Job.ID < allocs[0].Job.ID {
		both = allocs[1].Job.ID + "," + allocs[0].Job.ID
	}
	for i := range 4 {
		p := point.New(schema.GPU, time.Now())
		p.AddTag(schema.TagGPU, fmt.Sprint(i)).AddTag(schema.TagUUID, fmt.Sprintf("GPU-%d", i))
		tags := ch.Tags.TagsFor(&p)
		want := []point.Tag{{Key: "job", Value: holder[fmt.Sprint(i)]}, {Key: "jobs", Value: holder[fmt.Sprint(i)]}}
		if !slices.Equal(tags, want) {
			t.Errorf("GPU %d tagged %v, want %v", i, tags, want)
		}
	}
	pdu := point.New(schema.PDU, time.Now())
	if tags := ch.Tags.TagsFor(&pdu); !slices.Equal(tags, []point.Tag{{Key: "jobs", Value: both}}) {
		t.Errorf("the PDU's reading tagged %v, want jobs=%s alone", tags, both)
	}

	// The first job's summary goes into its AdminComment (through
	// scontrol: this cluster keeps no accounting, where sacctmgr would
	// write a finished job's); the second's already holds another
	// tool's, which is kept.
	first, second := allocs[0].Job.ID, allocs[1].Job.ID
	e, peak := 36000.0, 71.0
	s := &slurm.Summary{Job: first, RuntimeS: 120, GPUs: []slurm.Energy{{Host: "n1", GPU: "0", UUID: "GPU-a", EnergyJ: &e}},
		Components: []slurm.ComponentSummary{{Host: "n1", ID: "gpu_core:0", Kind: "gpu_core", PeakC: &peak}},
		NodeEnergy: []slurm.NodeEnergy{{Host: "n1", EnergyJ: &e, SharedCPUEnergyJ: &e, SharedWith: []string{second}}}}
	summary := s.Admin("/home/ana/job-" + first + "-thermal.json")
	text, err := summary.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Client.SetAdminComment(ctx, first, summary); err != nil {
		t.Fatal(err)
	}
	got, err := c.Client.AdminComment(ctx, first)
	if err != nil || got != text {
		t.Fatalf("AdminComment read back %q (%v), want %q", got, err, text)
	}
	a, ok := slurm.ParseAdminSummary(got)
	var out strings.Builder
	if !ok || a.Print(&out) != nil || !strings.Contains(out.String(), "n1           0          36.0     71.0            -        -  GPU-a") ||
		!strings.Contains(out.String(), "shared with other jobs") {
		t.Errorf("printed for a person:\n%s", out.String())
	}
	if _, err := c.Client.Run(ctx, "scontrol", "update", "JobId="+second, "AdminComment=JS1:abc"); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.SetAdminComment(ctx, second, summary); !errors.Is(err, slurm.ErrAdminCommentTaken) {
		t.Errorf("over another tool's AdminComment: %v", err)
	}
	if got, _ := c.Client.AdminComment(ctx, second); got != "JS1:abc" {
		t.Errorf("another tool's AdminComment became %q", got)
	}

	// The Epilog removes each record.
	for _, a := range allocs {
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitIdle(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	if recs, err := slurm.ReadJobs(jobs); err != nil || len(recs) != 0 {
		t.Errorf("records left after the Epilog: %+v %v", recs, err)
	}

	// A job holding no GPU gres, whose name poses as an AdminComment: on
	// this node of GPU gres it holds no GPU, and the pose is not read.
	forger, err := c.Client.Allocate(ctx, slurm.AllocOptions{Nodes: 1, Name: `x AdminComment={"heatsink":1,"job":"0"}`})
	if err != nil {
		t.Fatal(err)
	}
	defer forger.Release(context.Background())
	if recs, err := slurm.ReadJobs(jobs); err != nil || len(recs) != 1 || recs[0].GPUSource != slurm.GPUsNone || len(recs[0].GPUs) != 0 {
		t.Errorf("the record of a job without GPU gres: %+v %v", recs, err)
	} else {
		p := point.New(schema.GPU, time.Now())
		p.AddTag(schema.TagGPU, "0")
		if tags := slurm.NewJobTags(recs).TagsFor(&p); tags != nil {
			t.Errorf("a GPU tagged with the job holding none: %v", tags)
		}
	}
	if got, err := c.Client.AdminComment(ctx, forger.Job.ID); got != "" || err != nil {
		t.Errorf("a job's name read as its AdminComment: %q %v", got, err)
	}
	// A job of 64 GPUs: its AdminComment keeps within the bound, leaving
	// GPUs out, and Slurm keeps it whole.
	big := &slurm.Summary{Job: forger.Job.ID}
	for i := range 64 {
		big.GPUs = append(big.GPUs, slurm.Energy{Host: fmt.Sprintf("node%03d", i/8), GPU: fmt.Sprint(i % 8), UUID: fmt.Sprintf("GPU-%036d", i), EnergyJ: &e})
	}
	bigSummary := big.Admin("/home/ana/job-" + forger.Job.ID + "-thermal.json")
	text, err = bigSummary.Encode()
	if a, _ := slurm.ParseAdminSummary(text); err != nil || len(text) > slurm.AdminCommentMaxBytes || a.GPUsLeftOut == 0 || len(a.GPUs)+a.GPUsLeftOut != 64 {
		t.Fatalf("64 GPUs encoded in %d bytes, %d left out: %v", len(text), a.GPUsLeftOut, err)
	}
	if err := c.Client.SetAdminComment(ctx, forger.Job.ID, bigSummary); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Client.AdminComment(ctx, forger.Job.ID); got != text || err != nil {
		t.Errorf("a %d-byte AdminComment read back as %d bytes (%v)", len(text), len(got), err)
	}

}
