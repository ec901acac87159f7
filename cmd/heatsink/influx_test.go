package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/point"
)

// spoolContent returns every point in the spool's segment files and how
// many of them lie past the committed position (unsent).
func spoolContent(t *testing.T, dir string) (all []point.Point, unsent int) {
	t.Helper()
	var pos struct {
		Seq uint64 `json:"seq"`
		Off int64  `json:"off"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "position")); err == nil {
		if err := json.Unmarshal(b, &pos); err != nil {
			t.Fatalf("spool position: %v", err)
		}
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "*.lp"))
	for _, seg := range segs {
		b, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		seq, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(seg), ".lp"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		off := int64(0)
		for line := range bytes.Lines(b) {
			start := off
			off += int64(len(line))
			if line[0] == '#' || len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			p, err := point.ParseLine(line)
			if err != nil {
				t.Errorf("%s:%d: bad line in the spool: %v", seg, start, err)
				continue
			}
			all = append(all, p)
			if seq > pos.Seq || (seq == pos.Seq && start >= pos.Off) {
				unsent++
			}
		}
	}
	return all, unsent
}

func influxArgs(srv *influxtest.Server, spool string) []string {
	return []string{"--influx-url", srv.URL(), "--influx-bucket", influxtest.Bucket, "--influx-spool", spool}
}

// TestCollectKilledMidCollectionLosesNothingFromItsSpool kills a real
// heatsink collect with SIGKILL while InfluxDB is down, then starts it
// again on the same spool: every point that was in the spool arrives.
func TestCollectKilledMidCollectionLosesNothingFromItsSpool(t *testing.T) {
	t.Parallel()
	bin := heatsinkBinary(t)
	srv := influxtest.Start(t)
	spool := filepath.Join(t.TempDir(), "spool")
	args := append([]string{"collect", "--interval", "250ms"}, influxArgs(srv, spool)...)
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // points flow to InfluxDB
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // points pile up in the spool
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	dir, err := influx.SpoolDirOf(influx.Config{URL: srv.URL(), Bucket: influxtest.Bucket, SpoolDir: spool})
	if err != nil {
		t.Fatal(err)
	}
	inSpool, unsent := spoolContent(t, dir)
	if unsent == 0 || len(inSpool) == 0 {
		t.Fatalf("spool holds %d points, %d unsent at the kill; want a backlog\n%s", len(inSpool), unsent, stderr.String())
	}
	t.Logf("at the kill: %d points in the spool, %d of them unsent", len(inSpool), unsent)

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	again := exec.Command(bin, append(append([]string{}, args...), "--duration", "1s")...)
	if out, err := again.CombinedOutput(); err != nil {
		t.Fatalf("second collect: %v\n%s", err, out)
	}
	srv.AssertHolds(t, inSpool, false)
}

// An InfluxDB that does not answer at start (an outage at boot) is no
// reason to lose the boot's readings: collect starts, warns loudly and keeps
// the points in the spool; --influx-optional does the same for a refused token.
func TestCollectStartsWhileInfluxDBDoesNotAnswer(t *testing.T) {
	t.Parallel()
	bin := heatsinkBinary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	out, err := exec.Command(bin, "collect", "--duration", "2s", "--influx-spool", t.TempDir(), "--out", filepath.Join(t.TempDir(), "run"),
		"--influx-url", closed, "--influx-bucket", influxtest.Bucket).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "not answering at start: collecting anyway") {
		t.Fatalf("collect with InfluxDB down: %v\n%s", err, out)
	}
}

func TestCollectRefusesToStartWithAnUnusableInflux(t *testing.T) {
	t.Parallel()
	bin := heatsinkBinary(t)
	srv := influxtest.Start(t, influxtest.Options{Auth: true})
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("admin:wrong-password\n"), 0o600)

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unauthorised", []string{"--influx-url", srv.URL(), "--influx-bucket", influxtest.Bucket, "--influx-token-file", tokenFile}, "401"},
		{"no bucket", []string{"--influx-url", srv.URL()}, "influx-bucket"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"collect", "--duration", "30s", "--influx-spool", t.TempDir()}, tc.args...)
			start := time.Now()
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err == nil {
				t.Fatalf("collect started: %s", out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output %q does not mention %q", out, tc.want)
			}
			if strings.Contains(string(out), "wrong-password") {
				t.Errorf("output shows the token: %s", out)
			}
			if d := time.Since(start); d > 25*time.Second {
				t.Errorf("took %v to fail", d)
			}
		})
	}
}
