package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/slurm"
)

// `slurm write-summary` is the child `slurm summary` starts as the job's
// user: it writes what it reads on stdin, through no link, and is not
// offered in the help.
func TestSlurmWriteSummaryWritesThroughNoLink(t *testing.T) {
	bin := heatsinkBinary(t)
	base := t.TempDir()
	work := filepath.Join(base, "work")
	os.Mkdir(work, 0o755)
	os.Symlink(work, filepath.Join(base, "link"))
	for _, tc := range []struct {
		dir, in, want string
		ok            bool
	}{
		{work, `{"job": "12"}`, filepath.Join(work, slurm.FileName("12")), true},
		{filepath.Join(base, "link"), `{"job": "12"}`, "a symbolic link, which is not followed", false},
		{work, `{"job": "13"}`, "not the summary of job 12", false},
	} {
		cmd := exec.Command(bin, "slurm", "write-summary", tc.dir, "12")
		cmd.Stdin = strings.NewReader(tc.in)
		out, err := cmd.CombinedOutput()
		if (err == nil) != tc.ok || !strings.Contains(string(out), tc.want) {
			t.Errorf("write-summary %s with %s: %v %q, want ok %v and %q", tc.dir, tc.in, err, out, tc.ok, tc.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(work, slurm.FileName("12"))); err != nil || string(b) != `{"job": "12"}` {
		t.Errorf("the summary: %q %v", b, err)
	}
	help, _ := exec.Command(bin, "slurm", "--help").CombinedOutput()
	if strings.Contains(string(help), "write-summary") {
		t.Errorf("the hidden writer is offered in the help:\n%s", help)
	}
}
