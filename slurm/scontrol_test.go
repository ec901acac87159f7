package slurm

import (
	"strings"
	"testing"
)

func TestParseRecordKeepsSpacesInValues(t *testing.T) {
	// As scontrol 22.05 prints a drained node and a job (abridged).
	node := "NodeName=n1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=IDLE+DRAIN ThreadsPerCore=1 " +
		"Partitions=debug BootTime=2026-11-22T05:00:00 Reason=heatsink: gpu_hot on gpu gpu 0 (91 vs 85) gpu=0 [root@2026-11-22T05:41:00] Comment=(null)\n"
	kv := ParseRecord(node)
	if kv["NodeName"] != "n1" || kv["State"] != "IDLE+DRAIN" || kv["Comment"] != "(null)" {
		t.Errorf("node %v", kv)
	}
	if want := "heatsink: gpu_hot on gpu gpu 0 (91 vs 85) gpu=0 [root@2026-11-22T05:41:00]"; kv["Reason"] != want {
		t.Errorf("Reason %q, want %q", kv["Reason"], want)
	}
	job := "JobId=3 JobName=heatsink-20260301T120000Z-login UserId=root(0) GroupId=root(0) JobState=RUNNING " +
		"ReqB:S:C:T=0:0:*:* Socks/Node=* StartTime=2026-03-01T12:00:05 EndTime=Unknown NodeList=n[1-2] " +
		"TRES=cpu=2,node=2,billing=2 WorkDir=/home/a b/run StdOut=/home/a b/run/slurm-3.out"
	kv = ParseRecord(job)
	for k, want := range map[string]string{"JobId": "3", "JobName": "heatsink-20260301T120000Z-login", "ReqB:S:C:T": "0:0:*:*",
		"Socks/Node": "*", "TRES": "cpu=2,node=2,billing=2", "WorkDir": "/home/a b/run", "StdOut": "/home/a b/run/slurm-3.out", "NodeList": "n[1-2]"} {
		if kv[k] != want {
			t.Errorf("%s = %q, want %q", k, kv[k], want)
		}
	}
	if got := RunOf(kv["JobName"]); got != "20260301T120000Z-login" {
		t.Errorf("run of the job name: %q", got)
	}
	if reasonStamp.ReplaceAllString(ParseRecord(node)["Reason"], "") != "heatsink: gpu_hot on gpu gpu 0 (91 vs 85) gpu=0" {
		t.Error("the [user@time] stamp is not removed from the reason")
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add("NodeName=n1 State=IDLE Reason=too hot [root@2026-01-01T00:00:00]")
	f.Add("JobId=1 WorkDir=/a b  c StdOut= Comment=x=y")
	f.Add("=== ==x X= Y")
	f.Fuzz(func(t *testing.T, s string) {
		kv := ParseRecord(s)
		line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
		for k, v := range kv {
			if !strings.Contains(line, k+"="+v) && !strings.Contains(line, k+"="+strings.SplitN(v, " ", 2)[0]) {
				t.Fatalf("pair %s=%q not in the line %q", k, v, line)
			}
			if k == "" || k[0] < 'A' || k[0] > 'Z' {
				t.Fatalf("key %q does not start with a capital", k)
			}
		}
	})
}

func TestParseTime(t *testing.T) {
	for _, s := range []string{"", "Unknown", "None", "N/A"} {
		if tm, err := parseTime(s); err != nil || !tm.IsZero() {
			t.Errorf("parseTime(%q) = %v, %v", s, tm, err)
		}
	}
	if tm, err := parseTime("2026-03-01T12:00:05"); err != nil || tm.Hour() != 12 || tm.Second() != 5 {
		t.Errorf("parseTime: %v %v", tm, err)
	}
	if _, err := parseTime("yesterday"); err == nil {
		t.Error("a bad time parsed")
	}
}
