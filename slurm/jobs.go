package slurm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// DefaultJobsDir is where the Prolog records the jobs running on a node
// and the agent looks for them. /run is a tmpfs: a reboot forgets jobs
// whose Epilog never ran.
const DefaultJobsDir = "/run/heatsink/jobs"

// RunPrefix starts the name of a job that `heatsink run --launcher slurm`
// allocated; the rest of the name is the run id, which the agents put on
// their job events so that the run can be exported from InfluxDB with
// every node's readings.
const RunPrefix = "heatsink-"

// Job is a job running on the node, as the Prolog records it.
type Job struct {
	ID        string    `json:"id"`
	Run       string    `json:"run,omitempty"`
	Name      string    `json:"name,omitempty"`
	User      string    `json:"user,omitempty"`
	Partition string    `json:"partition,omitempty"`
	Start     time.Time `json:"start"`
	// GPUs are the GPUs the job holds on the node, as GPUSource (see
	// JobGPUs) told; with no source, nothing is known and the job counts
	// on every GPU of the node.
	GPUs      []GPU  `json:"gpus,omitempty"`
	GPUSource string `json:"gpu_source,omitempty"`
}

var jobID = regexp.MustCompile(`^[0-9]+(_[0-9]+)?(\+[0-9]+)?$`)

// JobFromEnv reads the job the Prolog or Epilog runs for from the
// environment slurmd gives it (SLURM_JOB_ID, SLURM_JOB_USER,
// SLURM_JOB_PARTITION, and SLURM_JOB_NAME where the Slurm version sets it).
func JobFromEnv(getenv func(string) string) (Job, error) {
	j := Job{ID: getenv("SLURM_JOB_ID"), Name: getenv("SLURM_JOB_NAME"), User: getenv("SLURM_JOB_USER"),
		Partition: getenv("SLURM_JOB_PARTITION")}
	if j.ID == "" {
		j.ID = getenv("SLURM_JOBID")
	}
	if j.ID == "" {
		return j, errors.New("SLURM_JOB_ID is not set: run this as Slurm's Prolog or Epilog")
	}
	if !jobID.MatchString(j.ID) {
		return j, fmt.Errorf("SLURM_JOB_ID %q is not a job id", j.ID)
	}
	j.Run = RunOf(j.Name)
	return j, nil
}

// RunOf returns the run id in a job name made by `heatsink run --launcher
// slurm`, or "".
func RunOf(jobName string) string {
	if r, ok := strings.CutPrefix(jobName, RunPrefix); ok {
		return r
	}
	return ""
}

// StartJob records that the job runs on this node: the Prolog's part. The
// record is written whole (temporary file, rename), so the agent never
// reads half of one.
func StartJob(dir string, j Job) error {
	if !jobID.MatchString(j.ID) {
		return fmt.Errorf("job id %q is not a job id", j.ID)
	}
	if j.Start.IsZero() {
		j.Start = time.Now()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("jobs directory: %w", err)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".job-*")
	if err != nil {
		return fmt.Errorf("record job %s: %w", j.ID, err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, j.ID+".json"))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("record job %s: %w", j.ID, werr)
	}
	return nil
}

// EndJob removes the job's record: the Epilog's part. A job that was never
// recorded (the Prolog failed, or heatsink was installed mid-job) is not
// an error.
func EndJob(dir, id string) error {
	if !jobID.MatchString(id) {
		return fmt.Errorf("job id %q is not a job id", id)
	}
	err := os.Remove(filepath.Join(dir, id+".json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("end job %s: %w", id, err)
	}
	return nil
}

// ReadJobs returns the jobs recorded in dir, by id. A missing directory
// holds no job; a record that cannot be read is skipped and reported.
func ReadJobs(dir string) ([]Job, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read jobs directory: %w", err)
	}
	var jobs []Job
	var errs []error
	for _, e := range ents {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || !jobID.MatchString(id) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) { // removed by the Epilog meanwhile
				errs = append(errs, err)
			}
			continue
		}
		var j Job
		if err := json.Unmarshal(b, &j); err != nil || j.ID != id {
			errs = append(errs, fmt.Errorf("job record %s: not a job record (%v)", filepath.Join(dir, name), err))
			continue
		}
		jobs = append(jobs, j)
	}
	slices.SortFunc(jobs, func(a, b Job) int { return strings.Compare(a.ID, b.ID) })
	return jobs, errors.Join(errs...)
}

// Watcher follows a jobs directory for the node agent.
type Watcher struct {
	dir   string
	known map[string]Job
}

// NewWatcher returns a watcher of dir that knows no job yet.
func NewWatcher(dir string) *Watcher { return &Watcher{dir: dir, known: map[string]Job{}} }

// Change is what a Poll found.
type Change struct {
	// Jobs are the jobs running now, by id.
	Jobs []Job
	// Tag is the ids of the jobs joined by commas; empty when none.
	Tag string
	// Tags tags each point with the jobs it belongs to.
	Tags *JobTags
	// Events mark the jobs that started and ended since the last Poll:
	// event points of kind job_start and job_end, tagged with the job (and
	// the run, for `heatsink run --launcher slurm`).
	Events []point.Point
}

// Poll reads the directory and reports whether the set of jobs changed
// since the last call. now stamps the events, except a job_start the
// agent sees late (it was down, or busy, when the Prolog ran): that is
// stamped at the job's start as the Prolog recorded it, so a job
// started while heatsink was down has its start once heatsink is back.
// A record whose start or GPUs changed under the same id is a requeued
// job starting again: it ends the old run and starts the new.
func (w *Watcher) Poll(now time.Time) (Change, bool, error) {
	jobs, err := ReadJobs(w.dir)
	seen := map[string]bool{}
	var ch Change
	for _, j := range jobs {
		seen[j.ID] = true
		old, ok := w.known[j.ID]
		if ok && sameRun(old, j) {
			continue
		}
		at := now
		if !j.Start.IsZero() && j.Start.Before(now) {
			at = j.Start
		}
		if ok { // the old run ended before the new one started
			ch.Events = append(ch.Events, jobEvent(at, schema.KindJobEnd, old))
		}
		w.known[j.ID] = j
		ch.Events = append(ch.Events, jobEvent(at, schema.KindJobStart, j))
	}
	for id, j := range w.known {
		if !seen[id] {
			delete(w.known, id)
			ch.Events = append(ch.Events, jobEvent(now, schema.KindJobEnd, j))
		}
	}
	if len(ch.Events) == 0 {
		return Change{}, false, err
	}
	// By job, a requeued job's end before its new start.
	slices.SortStableFunc(ch.Events, func(a, b point.Point) int { return strings.Compare(a.Tag(schema.TagJob), b.Tag(schema.TagJob)) })
	ids := make([]string, 0, len(w.known))
	for id := range w.known {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		ch.Jobs = append(ch.Jobs, w.known[id])
	}
	ch.Tag = strings.Join(ids, ",")
	ch.Tags = NewJobTags(ch.Jobs)
	return ch, true, err
}

// sameRun reports whether two records of one job id are of the same run
// of it: a requeued job's Prolog records a new start, and maybe other GPUs.
func sameRun(a, b Job) bool {
	return a.Start.Equal(b.Start) && a.GPUSource == b.GPUSource && slices.Equal(a.GPUs, b.GPUs)
}

func jobEvent(now time.Time, kind string, j Job) point.Point {
	verb := "started"
	if kind == schema.KindJobEnd {
		verb = "ended"
	}
	msg := fmt.Sprintf("Slurm job %s %s on the node", j.ID, verb)
	if j.User != "" {
		msg += fmt.Sprintf(" (user %s, partition %s)", j.User, j.Partition)
	}
	return schema.EventPoint{Time: now, Run: j.Run, Kind: kind, Job: j.ID, Message: msg}.Point()
}

// CheckEnv holds a job as read from the controller against the
// environment slurmctld gives EpilogSlurmctld for the same job
// (SLURM_JOB_UID, SLURM_JOB_USER, SLURM_JOB_WORK_DIR where the version
// sets them): values slurmctld set itself, which no job name can forge.
// Any disagreement means one of the two was misread, and nothing is
// written on the strength of either.
func (j JobInfo) CheckEnv(getenv func(string) string) error {
	if getenv("SLURM_JOB_ID") != j.ID {
		return nil
	}
	var errs []error
	if v := getenv("SLURM_JOB_UID"); v != "" && v != strconv.Itoa(j.UID) {
		errs = append(errs, fmt.Errorf("SLURM_JOB_UID is %s, the controller's job record says uid %d", v, j.UID))
	}
	if v := getenv("SLURM_JOB_USER"); v != "" && v != j.User {
		errs = append(errs, fmt.Errorf("SLURM_JOB_USER is %q, the controller's job record says %q", v, j.User))
	}
	if v := getenv("SLURM_JOB_WORK_DIR"); v != "" && v != j.WorkDir {
		errs = append(errs, fmt.Errorf("SLURM_JOB_WORK_DIR is %q, the controller's job record says %q", v, j.WorkDir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("job %s: %w", j.ID, err)
	}
	return nil
}
