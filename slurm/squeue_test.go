package slurm

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// testdata/squeue-22.05.json is `squeue --json --states=all --jobs=1` of
// Slurm 22.05.8 (Debian 12) after job 1, named to pose as other fields,
// completed and while array job 2 was pending: 22.05 ignores --jobs and
// lists both.
func TestParseSqueueJSONPicksTheJobByItsID(t *testing.T) {
	b, err := os.ReadFile("testdata/squeue-22.05.json")
	if err != nil {
		t.Fatal(err)
	}
	j, err := parseSqueueJSON(b, "1")
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "x WorkDir=/tmp UserId=root(0)" || j.UID != 65534 || j.User != "nobody" || j.GID != 65534 ||
		j.WorkDir != "/tmp/r28x" || j.State != "COMPLETED" || j.nodeList != "n1" || j.Start.IsZero() || j.End.Before(j.Start) {
		t.Errorf("job 1: %+v", j)
	}
	p, err := parseSqueueJSON(b, "2")
	if err != nil || p.State != "PENDING" || p.Name != "arr" || !p.Start.IsZero() || !p.End.IsZero() {
		t.Errorf("pending job 2: %+v %v", p, err)
	}
	for _, id := range []string{"3", "2_4", "1+0"} {
		if j, err := parseSqueueJSON(b, id); err == nil {
			t.Errorf("job %s found: %+v", id, j)
		}
	}
}

// From 23.02 (data_parser) numbers may be {"set", "infinite", "number"}
// and job_state a list of flags.
func TestSlurmJSONEncodings(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want slurmNumber
	}{
		{`42`, slurmNumber{true, 42}},
		{`null`, slurmNumber{}},
		{`{"set": true, "infinite": false, "number": 1795805655}`, slurmNumber{true, 1795805655}},
		{`{"set": false, "infinite": false, "number": 0}`, slurmNumber{}},
		{`{"set": true, "infinite": true, "number": 0}`, slurmNumber{}},
	} {
		var n slurmNumber
		if err := json.Unmarshal([]byte(tc.in), &n); err != nil || n != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.in, n, err, tc.want)
		}
	}
	var n slurmNumber
	if err := json.Unmarshal([]byte(`"12"`), &n); err == nil {
		t.Error("a string was read as a number")
	}
	for in, want := range map[string]string{`"RUNNING"`: "RUNNING", `["COMPLETED"]`: "COMPLETED", `["RUNNING","COMPLETING"]`: "RUNNING+COMPLETING", `7`: ""} {
		if got := jobState(json.RawMessage(in)); got != want {
			t.Errorf("job_state %s: %q, want %q", in, got, want)
		}
	}
}

func TestParseSqueueJSONRefusesWhatItCannotTrust(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`not json`, "invalid character"},
		{`{"errors": [{"error": "Invalid job id specified", "description": ""}], "jobs": []}`, "Invalid job id"},
		{`{"jobs": [{"job_id": 5, "name": "x"}]}`, "no user_id"},
		{`{"jobs": [{"job_id": 5, "user_id": "0", "group_id": 0}]}`, "not an integer"},
		{`{"jobs": []}`, "no job 5"},
	} {
		if _, err := parseSqueueJSON([]byte(tc.in), "5"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestSplitJobID(t *testing.T) {
	for id, want := range map[string][3]int64{"7": {7, -1, -1}, "7_3": {7, 3, -1}, "7+1": {7, -1, 1}, "7_3+1": {7, 3, 1}} {
		b, tk, h := splitJobID(id)
		if [3]int64{b, tk, h} != want {
			t.Errorf("%s: %d %d %d, want %v", id, b, tk, h, want)
		}
	}
}
