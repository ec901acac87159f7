package slurm_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/slurm"
)

// The packed form survives what sacctmgr does to an AdminComment (every
// letter lowercased, quotes made backticks: it has neither capitals nor
// quotes) and reads back as the summary; another tool's comment, or a
// damaged one, is not taken for heatsink's.
func TestPackedAdminCommentRoundTrips(t *testing.T) {
	e, r := 1234.5, 0.07
	a := slurm.AdminSummary{Heatsink: 1, Job: "42", RuntimeS: 60, EnergyJ: &e, File: "/home/Ana/job-42-thermal.json",
		GPUs: []slurm.AdminGPU{{Host: "GPU01", GPU: "3", UUID: "GPU-5E2B", EnergyJ: &e, CPerW: &r}}}
	packed, err := a.EncodePacked()
	if err != nil {
		t.Fatal(err)
	}
	if packed != strings.ToLower(packed) || strings.ContainsAny(packed, `"'`) || !strings.HasPrefix(packed, slurm.PackedPrefix) {
		t.Fatalf("packed form %q has capitals or quotes, or lacks its prefix", packed)
	}
	want, _ := json.Marshal(a)
	for _, c := range []struct {
		name, text string
		ours       bool
	}{
		{"packed", packed, true},
		{"packed, read back in capitals", strings.ToUpper(packed), true},
		{"JSON", string(want), true},
		{"jobstats' as sacctmgr left it", "js1:h4siabcd", false},
		{"our prefix on damaged data", slurm.PackedPrefix + "0189", false},
		{"none", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := slurm.ParseAdminSummary(c.text)
			if ok != c.ours {
				t.Fatalf("taken for heatsink's: %v, want %v", ok, c.ours)
			}
			if b, _ := json.Marshal(got); ok && string(b) != string(want) {
				t.Errorf("read back as %s, want %s", b, want)
			}
		})
	}
}

// A summary of 512 GPUs: the packed form keeps within the bound, leaving
// GPUs out from the end and counting them, and holds more of them than
// the JSON does.
func TestPackedAdminCommentKeepsWithinTheBound(t *testing.T) {
	e := 3.6e6
	a := slurm.AdminSummary{Heatsink: 1, Job: "7", RuntimeS: 3600, File: "/w/job-7-thermal.json"}
	for i := range 512 {
		a.GPUs = append(a.GPUs, slurm.AdminGPU{Host: fmt.Sprintf("node%03d", i/8), GPU: fmt.Sprint(i % 8), UUID: fmt.Sprintf("GPU-%08x-1111-2222-3333-%012x", i*7919, i*104729), EnergyJ: &e})
	}
	packed, err := a.EncodePacked()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := a.Encode()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := slurm.ParseAdminSummary(packed)
	j, _ := slurm.ParseAdminSummary(plain)
	if len(packed) > slurm.AdminCommentMaxBytes || p.GPUsLeftOut == 0 || len(p.GPUs)+p.GPUsLeftOut != 512 {
		t.Fatalf("packed: %d bytes, %d GPUs, %d left out", len(packed), len(p.GPUs), p.GPUsLeftOut)
	}
	if len(p.GPUs) <= len(j.GPUs) {
		t.Errorf("packed holds %d GPUs, JSON %d", len(p.GPUs), len(j.GPUs))
	}
	t.Logf("in %d bytes: %d GPUs packed, %d as JSON", slurm.AdminCommentMaxBytes, len(p.GPUs), len(j.GPUs))
}

func TestAccountingJobIDNamesAnArrayTaskByArrayAndTask(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		name, id string
		env      func(string) string
		want     string
	}{
		{"a plain job", "42", env("SLURM_JOB_ID", "42"), "42"},
		{"the array's last task, whose id is the array's", "40", env("SLURM_JOB_ID", "40", "SLURM_ARRAY_JOB_ID", "40", "SLURM_ARRAY_TASK_ID", "1"), "40_1"},
		{"another task", "41", env("SLURM_JOB_ID", "41", "SLURM_ARRAY_JOB_ID", "40", "SLURM_ARRAY_TASK_ID", "0"), "40_0"},
		{"a job the environment is not about", "7", env("SLURM_JOB_ID", "41", "SLURM_ARRAY_JOB_ID", "40", "SLURM_ARRAY_TASK_ID", "0"), "7"},
		{"a task id that is no number", "41", env("SLURM_JOB_ID", "41", "SLURM_ARRAY_JOB_ID", "40", "SLURM_ARRAY_TASK_ID", "x;rm"), "41"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := slurm.AccountingJobID(c.id, c.env); got != c.want {
				t.Errorf("%s, want %s", got, c.want)
			}
		})
	}
}
