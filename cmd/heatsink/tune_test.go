package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
)

// Two tuning runs of a command publish their evaluations to a real InfluxDB
// (influxd on loopback); a third takes them back as its sources with
// --sources influx and fits the copula on them.
func TestTuneTakesItsSourcesFromInfluxDB(t *testing.T) {
	t.Parallel()
	bin := heatsinkBinary(t)
	db := influxtest.Start(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "heatsink.yaml")
	os.WriteFile(conf, []byte(fmt.Sprintf("interval: 200ms\nsources: {nvml: {disabled: true}}\nsinks:\n  influx: {url: %s, bucket: %s, spool_dir: %s}\n",
		db.URL(), influxtest.Bucket, filepath.Join(dir, "spool"))), 0o644)
	space := filepath.Join(dir, "space.yaml")
	os.WriteFile(space, []byte("name: toy\ntask:\n  - {name: n, min: 1, max: 100}\nparams:\n  - {name: a, type: int, min: 1, max: 6}\n  - {name: b, type: bool}\n"), 0o644)
	tune := func(n int, extra ...string) string {
		args := append([]string{"tune", "--config", conf, "--space", space, "--task", fmt.Sprintf("n=%d", n),
			"--out", filepath.Join(dir, fmt.Sprintf("out-%d", n)), "--baseline", "0s", "--objective", "min:re:cost=([0-9]+)"}, extra...)
		args = append(args, "--", "sh", "-c", "echo cost=$(( ({a} - {n}/10) * ({a} - {n}/10) + 1 ))")
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("heatsink %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	tune(20, "--method", "random", "--budget", "5")
	tune(40, "--method", "random", "--budget", "5")
	pts, err := db.Points("tune_evaluation")
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 10 {
		t.Fatalf("%d tune_evaluation points in InfluxDB, want 10", len(pts))
	}
	out := tune(30, "--method", "gc", "--budget", "auto", "--sources", "influx")
	if !strings.Contains(out, "heatsink tune: budget: ") || !strings.Contains(out, "recommended: heatsink run") {
		t.Errorf("the GC run on the InfluxDB sources:\n%s", out)
	}
	// Without a configured InfluxDB, --sources influx is an error that says so.
	bare := exec.Command(bin, "tune", "--space", space, "--task", "n=30", "--out", filepath.Join(dir, "bare"), "--sources", "influx", "--", "true")
	if b, err := bare.CombinedOutput(); err == nil || !strings.Contains(string(b), "--sources influx: no InfluxDB configured") {
		t.Errorf("--sources influx without sinks.influx: %v\n%s", err, b)
	}
}

// --gc and --constraint are parsed before anything runs, and a bad value
// is named.
func TestTuneNamesABadCopulaVariantOrBound(t *testing.T) {
	t.Parallel()
	bin := heatsinkBinary(t)
	dir := t.TempDir()
	space := filepath.Join(dir, "space.yaml")
	os.WriteFile(space, []byte("name: toy\ntask:\n  - {name: n, min: 1, max: 100}\nparams:\n  - {name: a, type: int, min: 1, max: 6}\n"), 0o644)
	for _, tc := range []struct{ flag, value, want string }{
		{"--gc", "marginals=sdv", `--gc "marginals=sdv": want marginals=space|data`},
		{"--gc", "local=0", `--gc "local=0"`},
		{"--constraint", "score>=high", `--constraint "score>=high": "high" is not a number`},
		{"--constraint", "score=>0.5", `--constraint "score=>0.5": want no-throttle, margin_c=N, or a floor or ceiling`},
	} {
		out, err := exec.Command(bin, "tune", "--space", space, "--task", "n=3", "--budget", "2", "--method", "random",
			"--out", filepath.Join(dir, "out"), tc.flag, tc.value, "--", "true").CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s %s: %v\n%s\nwant %q", tc.flag, tc.value, err, out, tc.want)
		}
	}
}
