package slurm_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/slurm"
	"github.com/heatsink-hpc/heatsink/slurm/slurmtest"
)

// ctldEpilogArg makes this test binary slurmctld's EpilogSlurmctld,
// putting a summary into the ended job's AdminComment as `heatsink slurm
// summary` does (SetAdminComment), and recording the outcome beside
// the configuration it was given.
const ctldEpilogArg = "heatsink-test-ctld-epilog"

// adminSummaryFor is the summary the EpilogSlurmctld child writes for a
// job (id its own job id, as heatsink's summary names it): fixed numbers, so the test knows what sacct must show; capitals
// and quotes, which sacctmgr would not keep as they are.
func adminSummaryFor(id string) slurm.AdminSummary {
	e, peak, r := 36000.0, 71.5, 0.0612
	return slurm.AdminSummary{Heatsink: 1, Job: id, RuntimeS: 2, EnergyJ: &e, File: "/home/Ana/job-" + id + "-thermal.json",
		GPUs: []slurm.AdminGPU{{Host: "GPU01", GPU: "0", UUID: "GPU-5e2b9a4c", EnergyJ: &e, PeakC: &peak, CPerW: &r}}}
}

func ctldEpilog(dir string) error {
	conf, err := os.ReadFile(filepath.Join(dir, "conf"))
	if err != nil {
		return err
	}
	id := os.Getenv("SLURM_JOB_ID")
	c := slurm.Client{Env: []string{"SLURM_CONF=" + strings.TrimSpace(string(conf))}}
	acct := slurm.AccountingJobID(id, os.Getenv)
	err = c.SetAdminComment(context.Background(), acct, adminSummaryFor(id))
	result := "ok"
	if err != nil {
		result = err.Error()
	}
	tmp := filepath.Join(dir, "result."+id+".tmp")
	if werr := os.WriteFile(tmp, []byte(result), 0o644); werr != nil {
		return errors.Join(err, werr)
	}
	return errors.Join(err, os.Rename(tmp, filepath.Join(dir, "result."+id)))
}

// waitResult waits for the EpilogSlurmctld of job id, which must succeed.
func waitResult(t *testing.T, dir, id string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "result."+id))
		if err == nil {
			if string(b) != "ok" {
				t.Fatalf("EpilogSlurmctld of job %s: %s", id, b)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("EpilogSlurmctld of job %s did not finish in 60 s", id)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A job ends; EpilogSlurmctld, whose job slurmctld no longer lets
// anyone update, writes its summary into the accounting database through
// sacctmgr; `sacct -X -n -P -o AdminComment` shows it, one line of JSON.
func TestAdminCommentThroughSacctOnRealSlurm(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "heatsink-sacct-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	script := filepath.Join(dir, "epilog-slurmctld.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec "+self+" "+ctldEpilogArg+" "+dir+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	// Two nodes, so that an array's two tasks run at once.
	c := slurmtest.Start(t, slurmtest.Options{Nodes: 2, Accounting: true, EpilogSlurmctld: script})
	t.Logf("cluster with MariaDB and slurmdbd up in %.1f s", time.Since(began).Seconds())
	if err := os.WriteFile(filepath.Join(dir, "conf"), []byte(c.Conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	out, err := c.Client.Run(ctx, "sbatch", "--parsable", "--output=/dev/null", "--wrap=sleep 1")
	if err != nil {
		t.Fatal(err)
	}
	id, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	waitResult(t, dir, id)
	t.Logf("job %s ended and its AdminComment was written %.1f s after the test began", id, time.Since(began).Seconds())
	want := adminSummaryFor(id)
	// sacct itself, as an admin types it: one line, heatsink's packed
	// form, which sacctmgr kept whole.
	out, err = c.Client.Run(ctx, "sacct", "-j", id, "-X", "-n", "-P", "-o", "AdminComment")
	raw := strings.TrimRight(string(out), "\n")
	packed, perr := want.EncodePacked()
	if err != nil || perr != nil || raw != packed {
		t.Fatalf("sacct -X -n -P -o AdminComment for job %s: %q %v, want %q %v", id, raw, err, packed, perr)
	}
	got, ok := slurm.ParseAdminSummary(raw)
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if !ok || string(gotJSON) != string(wantJSON) {
		t.Fatalf("sacct's AdminComment decodes to %s, want %s", gotJSON, wantJSON)
	}
	// What a script does with it, here in Go: base32 (any case), gunzip, JSON.
	z, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimPrefix(raw, slurm.PackedPrefix)))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := io.ReadAll(zr); err != nil || string(plain) != string(wantJSON) {
		t.Errorf("decoded by hand: %s %v, want %s", plain, err, wantJSON)
	}
	// And heatsink's reading of it, which a person's printout comes from.
	text, err := c.Client.AdminComment(ctx, id)
	if err != nil || text != raw {
		t.Fatalf("AdminComment of job %s: %q %v", id, text, err)
	}
	var b strings.Builder
	if got.Print(&b) != nil || !strings.Contains(b.String(), fmt.Sprintf("job %s: 2 s, 36.0 kJ", id)) || !strings.Contains(b.String(), "0.061") ||
		!strings.Contains(b.String(), "GPU-5e2b9a4c") || !strings.Contains(b.String(), "/home/Ana/") {
		t.Errorf("printed for a person:\n%s", b.String())
	}
	// What sacctmgr does to JSON, which is why the packed form exists.
	if _, err := c.Client.Run(ctx, "sacctmgr", "-i", "update", "job", "where", "jobid="+id, "set", `AdminComment={"Host":"GPU01"}`); err != nil {
		t.Fatal(err)
	}
	if out, err := c.Client.Run(ctx, "sacct", "-j", id, "-X", "-n", "-P", "-o", "AdminComment"); err != nil || strings.TrimSpace(string(out)) != "{`host`:`gpu01`}" {
		t.Errorf("sacctmgr stored JSON as %q %v; heatsink's packed form assumes it lowercases and turns quotes into backticks", out, err)
	}
	// The controller indeed refuses the ended job: sacctmgr was the way.
	if _, err := c.Client.Run(ctx, "scontrol", "update", "JobId="+id, "AdminComment=x"); err == nil {
		t.Errorf("scontrol updated the ended job %s: the sacctmgr path was not needed", id)
	}

	t.Run("array tasks each keep their own", func(t *testing.T) {
		out, err := c.Client.Run(ctx, "sbatch", "--parsable", "--output=/dev/null", "--array=0-1", "--wrap=sleep 1")
		if err != nil {
			t.Fatal(err)
		}
		array, submitted := strings.TrimSpace(string(out)), time.Now()
		// Each task's own job id, for its epilog's result.
		deadline := time.Now().Add(60 * time.Second)
		var ids []string
		for len(ids) < 2 {
			out, _ := c.Client.Run(ctx, "sacct", "-j", array, "-X", "-n", "-P", "-o", "JobIDRaw,State")
			ids = ids[:0]
			for l := range strings.Lines(string(out)) {
				if f := strings.Split(strings.TrimSpace(l), "|"); len(f) == 2 && f[1] != "PENDING" {
					ids = append(ids, f[0])
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("array %s: tasks not started in 60 s: %q", array, out)
			}
			if len(ids) < 2 {
				time.Sleep(200 * time.Millisecond)
			}
		}
		for _, raw := range ids {
			waitResult(t, dir, raw)
		}
		t.Logf("array %s: both EpilogSlurmctld done %.1f s after submission", array, time.Since(submitted).Seconds())
		// Each task's AdminComment is its own summary (named by its own
		// job id), though the last task's job id is the array's, which
		// names every task to sacctmgr.
		out, err = c.Client.Run(ctx, "sacct", "-j", array, "-X", "-n", "-P", "-o", "JobID,JobIDRaw,AdminComment")
		if err != nil {
			t.Fatal(err)
		}
		tasks := 0
		for l := range strings.Lines(string(out)) {
			f := strings.SplitN(strings.TrimSpace(l), "|", 3)
			if len(f) != 3 {
				continue
			}
			tasks++
			if a, ok := slurm.ParseAdminSummary(f[2]); !ok || a.Job != f[1] {
				t.Errorf("task %s (job %s): AdminComment of job %q (%v), want its own", f[0], f[1], a.Job, ok)
			}
		}
		if tasks != 2 {
			t.Errorf("sacct lists %d tasks of array %s: %q", tasks, array, out)
		}
	})
}
