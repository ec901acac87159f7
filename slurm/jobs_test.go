package slurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestJobFromEnv(t *testing.T) {
	j, err := JobFromEnv(env(map[string]string{"SLURM_JOB_ID": "42", "SLURM_JOB_USER": "ana", "SLURM_JOB_PARTITION": "gpu",
		"SLURM_JOB_NAME": "heatsink-20260301T120000Z-login"}))
	if err != nil || j.ID != "42" || j.User != "ana" || j.Run != "20260301T120000Z-login" {
		t.Errorf("%+v %v", j, err)
	}
	if j, err := JobFromEnv(env(map[string]string{"SLURM_JOBID": "7_3"})); err != nil || j.ID != "7_3" || j.Run != "" {
		t.Errorf("array job from the old variable: %+v %v", j, err)
	}
	for _, bad := range []map[string]string{{}, {"SLURM_JOB_ID": "../../etc/passwd"}, {"SLURM_JOB_ID": "12 13"}} {
		if _, err := JobFromEnv(env(bad)); err == nil {
			t.Errorf("JobFromEnv(%v) accepted", bad)
		}
	}
}

// The Prolog's record and the Epilog's removal turn, at the agent's next
// poll, into the job tag on every point and job_start and job_end events.
func TestWatcherFollowsPrologAndEpilog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jobs")
	w := NewWatcher(dir)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, changed, err := w.Poll(now); changed || err != nil {
		t.Fatalf("no directory yet: changed %v err %v", changed, err)
	}
	if err := StartJob(dir, Job{ID: "42", Run: "r1", User: "ana", Partition: "gpu"}); err != nil {
		t.Fatal(err)
	}
	ch, changed, err := w.Poll(now)
	if !changed || err != nil || ch.Tag != "42" || len(ch.Events) != 1 {
		t.Fatalf("after the Prolog: %+v %v %v", ch, changed, err)
	}
	ev := ch.Events[0]
	if ev.Measurement != "event" || ev.Tag("kind") != "job_start" || ev.Tag("job") != "42" || ev.Tag("run") != "r1" || !ev.Time.Equal(now) {
		t.Errorf("start event %v", ev)
	}
	if m, _ := ev.Field("message"); !strings.Contains(m.StringV(), "ana") {
		t.Errorf("message %q", m.StringV())
	}
	if _, changed, _ := w.Poll(now.Add(time.Second)); changed {
		t.Error("a poll with nothing new reports a change")
	}
	StartJob(dir, Job{ID: "43"})
	ch, _, _ = w.Poll(now.Add(2 * time.Second))
	if ch.Tag != "42,43" || len(ch.Jobs) != 2 {
		t.Errorf("two jobs sharing the node: tag %q jobs %v", ch.Tag, ch.Jobs)
	}
	if err := EndJob(dir, "42"); err != nil {
		t.Fatal(err)
	}
	ch, changed, _ = w.Poll(now.Add(3 * time.Second))
	if !changed || ch.Tag != "43" || len(ch.Events) != 1 || ch.Events[0].Tag("kind") != "job_end" || ch.Events[0].Tag("job") != "42" || ch.Events[0].Tag("run") != "r1" {
		t.Errorf("after the Epilog: %+v", ch)
	}
	EndJob(dir, "43")
	ch, _, _ = w.Poll(now.Add(4 * time.Second))
	if ch.Tag != "" || len(ch.Jobs) != 0 {
		t.Errorf("no job left: %+v", ch)
	}
	if err := EndJob(dir, "43"); err != nil {
		t.Errorf("an Epilog for a job never recorded: %v", err)
	}
}

func TestReadJobsSkipsWhatIsNotARecord(t *testing.T) {
	dir := t.TempDir()
	StartJob(dir, Job{ID: "5"})
	os.WriteFile(filepath.Join(dir, "6.json"), []byte("{not json"), 0o644)
	os.WriteFile(filepath.Join(dir, "7.json"), []byte(`{"id":"8"}`), 0o644)
	os.WriteFile(filepath.Join(dir, ".job-123"), []byte(`{"id":"9"}`), 0o644) // a Prolog mid-write
	os.WriteFile(filepath.Join(dir, "README"), []byte("x"), 0o644)
	jobs, err := ReadJobs(dir)
	if len(jobs) != 1 || jobs[0].ID != "5" {
		t.Errorf("jobs %+v", jobs)
	}
	if err == nil || !strings.Contains(err.Error(), "6.json") || !strings.Contains(err.Error(), "7.json") {
		t.Errorf("error %v, want both bad records named", err)
	}
	if err := StartJob(dir, Job{ID: "x/../../y"}); err == nil {
		t.Error("a job id with a path in it was recorded")
	}
}

// A Prolog that ran while the agent was down: once the agent is back, the
// job is tagged and its job_start event carries the start the Prolog
// recorded, not the time the agent came back.
func TestWatcherStartedAfterThePrologKeepsTheJobsStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jobs")
	now := time.Now()
	start := now.Add(-10 * time.Minute).Truncate(time.Second)
	if err := StartJob(dir, Job{ID: "42", Start: start, GPUs: []GPU{{Index: "1"}}, GPUSource: GPUsFromSlurm}); err != nil {
		t.Fatal(err)
	}
	ch, changed, err := NewWatcher(dir).Poll(now) // the agent, started now
	if !changed || err != nil || len(ch.Events) != 1 {
		t.Fatalf("%+v %v %v", ch, changed, err)
	}
	if ev := ch.Events[0]; ev.Tag("kind") != "job_start" || !ev.Time.Equal(start) {
		t.Errorf("start event %s at %s, want job_start at the Prolog's %s", ev.Tag("kind"), ev.Time, start)
	}
	gpu := func(i string) *point.Point {
		p := point.New(schema.GPU, now)
		p.AddTag(schema.TagGPU, i)
		return &p
	}
	if tags := ch.Tags.TagsFor(gpu("1")); len(tags) != 2 || tags[0].Value != "42" {
		t.Errorf("the job's GPU tagged %v", tags)
	}
	if tags := ch.Tags.TagsFor(gpu("0")); tags != nil {
		t.Errorf("another GPU tagged %v", tags)
	}
}

// A requeued job runs again under the same id, maybe on other GPUs; its
// Epilog and new Prolog can both fall between two polls. The new record's
// start tells: the old run ends, the new starts, and the tags follow.
func TestWatcherSeesARequeuedJobStartAgain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jobs")
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	w := NewWatcher(dir)
	StartJob(dir, Job{ID: "42", Start: t0, GPUs: []GPU{{Index: "0"}}, GPUSource: GPUsFromSlurm})
	if _, changed, _ := w.Poll(t0.Add(time.Second)); !changed {
		t.Fatal("first run not seen")
	}
	t1 := t0.Add(30 * time.Minute)
	EndJob(dir, "42")
	StartJob(dir, Job{ID: "42", Start: t1, GPUs: []GPU{{Index: "3"}}, GPUSource: GPUsFromSlurm})
	ch, changed, err := w.Poll(t1.Add(time.Second))
	if !changed || err != nil || len(ch.Events) != 2 {
		t.Fatalf("after the requeue: %+v %v %v", ch, changed, err)
	}
	if ch.Events[0].Tag("kind") != "job_end" || ch.Events[1].Tag("kind") != "job_start" || !ch.Events[1].Time.Equal(t1) {
		t.Errorf("events %v", ch.Events)
	}
	p := point.New(schema.GPU, t1)
	p.AddTag(schema.TagGPU, "0")
	if tags := ch.Tags.TagsFor(&p); tags != nil {
		t.Errorf("the first run's GPU still tagged %v", tags)
	}
	if _, changed, _ := w.Poll(t1.Add(2 * time.Second)); changed {
		t.Error("the same run seen as a change again")
	}
}
