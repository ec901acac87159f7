package slurm

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

func TestJobGPUsPrefersSlurmsAllocation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    []GPU
		source  string
		wantErr bool
	}{
		{"SLURM_JOB_GPUS list", map[string]string{"SLURM_JOB_GPUS": "2,3"}, []GPU{{Index: "2"}, {Index: "3"}}, GPUsFromSlurm, false},
		{"SLURM_JOB_GPUS range", map[string]string{"SLURM_JOB_GPUS": "0-1,4"}, []GPU{{Index: "0"}, {Index: "1"}, {Index: "4"}}, GPUsFromSlurm, false},
		// CUDA_VISIBLE_DEVICES is 0,1 inside a job holding GPUs 2 and 3 of
		// a node with ConstrainDevices: Slurm's list wins.
		{"both", map[string]string{"SLURM_JOB_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "0,1"}, []GPU{{Index: "2"}, {Index: "3"}}, GPUsFromSlurm, false},
		{"CUDA UUIDs", map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-aa,GPU-bb"}, []GPU{{UUID: "GPU-aa"}, {UUID: "GPU-bb"}}, GPUsFromCUDA, false},
		{"CUDA numbers name no node GPU", map[string]string{"CUDA_VISIBLE_DEVICES": "0,1"}, nil, "", false},
		{"nothing", map[string]string{}, nil, "", false},
		// On a MIG node SLURM_JOB_GPUS counts MIG instances: the old MIG
		// names give the physical GPU, two instances of one GPU one GPU.
		{"MIG instances named by their GPU", map[string]string{"SLURM_JOB_GPUS": "5,6", "CUDA_VISIBLE_DEVICES": "MIG-GPU-aa/1/0,MIG-GPU-aa/2/0,MIG-GPU-bb/1/0"},
			[]GPU{{UUID: "GPU-aa"}, {UUID: "GPU-bb"}}, GPUsFromMIG, false},
		// Today's MIG UUIDs name no physical GPU: nothing is known, and
		// SLURM_JOB_GPUS is not taken for GPU indices.
		{"MIG UUIDs", map[string]string{"SLURM_JOB_GPUS": "5", "CUDA_VISIBLE_DEVICES": "MIG-5b7b4c1a-3bfd-5a64-9b1c-2c8e0e2e7b11"}, nil, "", false},
		{"not an index", map[string]string{"SLURM_JOB_GPUS": "0,x"}, nil, "", true},
		{"backward range", map[string]string{"SLURM_JOB_GPUS": "3-1"}, nil, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, src, err := JobGPUs(env(tc.env))
			if (err != nil) != tc.wantErr || src != tc.source || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("JobGPUs(%v) = %v, %q, %v; want %v, %q, error %v", tc.env, got, src, err, tc.want, tc.source, tc.wantErr)
			}
		})
	}
}

// node4 is a node of four GPUs, a CPU package and a PDU outlet, each
// point tagged as its source tags it (the NVML source: gpu index and uuid).
type node4 struct{}

func (node4) Name() string                   { return "node4" }
func (node4) Discover(context.Context) error { return nil }
func (node4) Sample(_ context.Context, at time.Time, buf []point.Point) ([]point.Point, error) {
	for i := range 4 {
		p := point.New(schema.GPU, at)
		p.AddTag(schema.TagGPU, fmt.Sprint(i)).AddTag(schema.TagUUID, fmt.Sprintf("GPU-%d", i)).AddFloat(schema.FieldTempC, 40)
		buf = append(buf, p)
	}
	r := point.New(schema.RAPL, at)
	r.AddTag(schema.TagZone, "package-0").AddFloat(schema.FieldEnergyJ, 1)
	pdu := point.New(schema.PDU, at)
	pdu.AddTag(schema.TagOutlet, "1").AddFloat(schema.FieldPowerW, 900)
	return append(buf, r, pdu), nil
}

type memSink struct {
	mu  sync.Mutex
	pts []point.Point
}

func (s *memSink) Write(p []point.Point) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range p {
		q.Tags = append([]point.Tag(nil), q.Tags...)
		s.pts = append(s.pts, q)
	}
	return nil
}
func (s *memSink) Flush() error { return nil }
func (s *memSink) Close() error { return nil }

// Two jobs share a node of four GPUs, one holding {0,1}, the other {2,3}
// (a third GPU-less job comes and goes): each GPU's points carry only the
// job holding it, the node's shared readings carry both.
func TestTwoJobsOnOneNodeTagOnlyTheirOwnGPUs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jobs")
	for id, gpus := range map[string]string{"101": "0,1", "102": "2,3"} {
		j, err := JobFromEnv(env(map[string]string{"SLURM_JOB_ID": id}))
		if err != nil {
			t.Fatal(err)
		}
		if j.GPUs, j.GPUSource, err = JobGPUs(env(map[string]string{"SLURM_JOB_GPUS": gpus})); err != nil {
			t.Fatal(err)
		}
		if err := StartJob(dir, j); err != nil {
			t.Fatal(err)
		}
	}
	ch, changed, err := NewWatcher(dir).Poll(time.Now())
	if err != nil || !changed {
		t.Fatalf("poll: %v %v", changed, err)
	}
	sink := &memSink{}
	c := collectors.New(collectors.Options{Interval: 20 * time.Millisecond, Ticks: 2, Host: "n1",
		Tags: []point.Tag{{Key: "cluster", Value: "c1"}}}, []collectors.Source{node4{}}, []collectors.Sink{sink})
	c.SetTagger(ch.Tags)
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{ // job, jobs
		"gpu 0": {"101", "101"}, "gpu 1": {"101", "101"}, "gpu 2": {"102", "102"}, "gpu 3": {"102", "102"},
		"rapl": {"", "101,102"}, "pdu": {"", "101,102"},
	}
	seen := map[string]int{}
	for _, p := range sink.pts {
		key := p.Measurement
		switch p.Measurement {
		case schema.GPU:
			key += " " + p.Tag(schema.TagGPU)
		case schema.RAPL, schema.PDU:
		default:
			continue // the collector's own health points
		}
		seen[key]++
		if got := [2]string{p.Tag(schema.TagJob), p.Tag(schema.TagJobs)}; got != want[key] {
			t.Errorf("%s: job %q jobs %q, want %q", key, got[0], got[1], want[key])
		}
		if p.Tag("cluster") != "c1" {
			t.Errorf("%s lost the site's tag: %v", key, p.Tags)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("points seen %v, want %d kinds", seen, len(want))
	}
}

// A job whose GPUs are not known (no GPU gres on the node) counts on every
// GPU; a GPU two jobs share (gres sharing) carries both, and job on none.
func TestJobTagsUnknownAndSharedGPUs(t *testing.T) {
	tags := NewJobTags([]Job{
		{ID: "7", GPUs: []GPU{{Index: "0"}}, GPUSource: GPUsFromSlurm},
		{ID: "8", GPUs: []GPU{{UUID: "GPU-0"}}, GPUSource: GPUsFromCUDA},
		{ID: "9"},
	})
	gpu := func(i string) *point.Point {
		p := point.New(schema.GPU, time.Now())
		p.AddTag(schema.TagGPU, i).AddTag(schema.TagUUID, "GPU-"+i)
		return &p
	}
	for _, tc := range []struct {
		p    *point.Point
		want []point.Tag
	}{
		{gpu("0"), []point.Tag{{Key: "jobs", Value: "7,8,9"}}},
		{gpu("1"), []point.Tag{{Key: "job", Value: "9"}, {Key: "jobs", Value: "9"}}},
		{&point.Point{Measurement: "event", Tags: []point.Tag{{Key: "job", Value: "7"}}}, nil},
	} {
		if got := tags.TagsFor(tc.p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.p.Tags, got, tc.want)
		}
	}
}
