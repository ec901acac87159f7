package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// jobJSON describes a job from `squeue --json`, Slurm's structured output
// (openapi plugins since 21.08, the data_parser plugins since 23.02).
// Every value there is a JSON value of its own, so text the job's user
// chose (a job name of `x WorkDir=/tmp UserId=root(0)`) stays in its field;
// `scontrol show job --oneliner` runs all fields together on one line.
func (c Client) jobJSON(ctx context.Context, id string) (JobInfo, error) {
	out, err := c.Run(ctx, "squeue", "--json", "--states=all", "--jobs="+id)
	if err != nil {
		return JobInfo{}, err
	}
	return parseSqueueJSON(out, id)
}

// squeueJobs is the part of `squeue --json` heatsink reads. Numbers are
// plain in 21.08-22.05 and {"set": true, "number": N} from 23.02 on.
type squeueJobs struct {
	Errors []struct {
		Error       string `json:"error"`
		Description string `json:"description"`
	} `json:"errors"`
	Jobs []struct {
		JobID        slurmNumber     `json:"job_id"`
		ArrayJobID   slurmNumber     `json:"array_job_id"`
		ArrayTaskID  slurmNumber     `json:"array_task_id"`
		HetJobID     slurmNumber     `json:"het_job_id"`
		HetJobOffset slurmNumber     `json:"het_job_offset"`
		Name         string          `json:"name"`
		UserID       slurmNumber     `json:"user_id"`
		UserName     string          `json:"user_name"`
		GroupID      slurmNumber     `json:"group_id"`
		State        json.RawMessage `json:"job_state"`
		Start        slurmNumber     `json:"start_time"`
		End          slurmNumber     `json:"end_time"`
		Nodes        string          `json:"nodes"`
		Partition    string          `json:"partition"`
		WorkDir      string          `json:"current_working_directory"`
		StdOut       string          `json:"standard_output"`
	} `json:"jobs"`
}

// slurmNumber is a Slurm integer in either encoding; Set is false for
// null, {"set": false} and an absent field.
type slurmNumber struct {
	Set bool
	N   int64
}

func (n *slurmNumber) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*n = slurmNumber{}
		return nil
	}
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			Set      bool  `json:"set"`
			Infinite bool  `json:"infinite"`
			Number   int64 `json:"number"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		*n = slurmNumber{Set: o.Set && !o.Infinite, N: o.Number}
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	*n = slurmNumber{Set: true, N: v}
	return nil
}

// parseSqueueJSON picks job id (123, an array task 123_4 or a
// heterogeneous component 123+1) out of `squeue --json`.
func parseSqueueJSON(b []byte, id string) (JobInfo, error) {
	var doc squeueJobs
	if err := json.Unmarshal(b, &doc); err != nil {
		return JobInfo{}, fmt.Errorf("squeue --json for job %s: %w", id, err)
	}
	for _, e := range doc.Errors {
		return JobInfo{}, fmt.Errorf("squeue --json for job %s: %s %s", id, e.Error, e.Description)
	}
	base, task, het := splitJobID(id)
	for _, j := range doc.Jobs {
		switch {
		case task >= 0 && !(j.ArrayJobID.N == base && j.ArrayTaskID.Set && j.ArrayTaskID.N == task):
			continue
		case het >= 0 && !(j.HetJobID.N == base && j.HetJobOffset.N == het):
			continue
		case task < 0 && het < 0 && j.JobID.N != base:
			continue
		}
		if !j.UserID.Set || !j.GroupID.Set {
			return JobInfo{}, fmt.Errorf("squeue --json for job %s: no user_id or group_id", id)
		}
		info := JobInfo{ID: id, Name: j.Name, User: j.UserName, UID: int(j.UserID.N), GID: int(j.GroupID.N),
			State: jobState(j.State), Partition: j.Partition, WorkDir: j.WorkDir, StdOut: j.StdOut, nodeList: j.Nodes}
		if j.Start.Set && j.Start.N > 0 {
			info.Start = time.Unix(j.Start.N, 0)
		}
		if j.End.Set && j.End.N > 0 && !running(info.State) {
			info.End = time.Unix(j.End.N, 0)
		}
		return info, nil
	}
	return JobInfo{}, fmt.Errorf("squeue --json: no job %s (finished longer than MinJobAge ago?)", id)
}

// jobState reads job_state: a string until 22.05, a list of flags from
// 23.02 on (the base state first).
func jobState(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, "+")
	}
	return ""
}

// splitJobID splits 123, 123_4 and 123+1 into the job, the array task and
// the heterogeneous offset (-1 where there is none); id has matched jobID.
func splitJobID(id string) (base, task, het int64) {
	task, het = -1, -1
	if b, h, ok := strings.Cut(id, "+"); ok {
		id = b
		het, _ = strconv.ParseInt(h, 10, 64)
	}
	if b, t, ok := strings.Cut(id, "_"); ok {
		id = b
		task, _ = strconv.ParseInt(t, 10, 64)
	}
	base, _ = strconv.ParseInt(id, 10, 64)
	return base, task, het
}

// squeueFiltersJSON reports whether squeue is 23.02 or later, whose
// --json honours --jobs. squeue --version prints "slurm 23.02.7" (or
// "slurm-wlm 22.05.8" from Debian's packages).
func (c Client) squeueFiltersJSON(ctx context.Context) bool {
	out, err := c.Run(ctx, "squeue", "--version")
	if err != nil {
		return false
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return false
	}
	var major, minor int
	if n, _ := fmt.Sscanf(f[len(f)-1], "%d.%d", &major, &minor); n != 2 {
		return false
	}
	return major > 23 || major == 23 && minor >= 2
}

// errJSONFilterIgnored stands for a squeue whose --json is not used.
var errJSONFilterIgnored = errors.New("squeue before 23.02: --json ignores --jobs")

// errNoJSON tells a Slurm whose squeue has no --json (before 21.08, or
// without its openapi or data_parser plugins) from a failing one.
func errNoJSON(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, s := range []string{"unrecognized option", "invalid option", "plugin", "not supported"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return errors.Is(err, errJSONFilterIgnored)
}
