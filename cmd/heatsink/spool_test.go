package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/collectors/spool"
	"github.com/heatsink-hpc/heatsink/point"
)

// The new user, end to end with the real binary: points an older
// heatsink left in the machine-wide spool do not reach the database the
// first collect sends to; collect says where they are and how to send
// them, spool list shows them, and spool send delivers them.
func TestCollectLeavesAnOlderSpoolAloneUntilSpoolSend(t *testing.T) {
	t.Parallel()
	bin := heatsinkBinary(t)
	srv := influxtest.Start(t)
	root := filepath.Join(t.TempDir(), "influx-spool")
	old, err := spool.Open(root, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var enc point.Encoder
	var older []point.Point
	for i := range 20 {
		p := point.New("cpu", time.Unix(1700000000, int64(i)))
		p.AddTag("host", "older-fixture").AddFloat("usage_pct", float64(i))
		enc.Encode(&p)
		older = append(older, p)
	}
	if err := old.Append(enc.Bytes(), len(older)); err != nil {
		t.Fatal(err)
	}
	old.Close()

	out, err := exec.Command(bin, append([]string{"collect", "--duration", "2s", "--out", filepath.Join(t.TempDir(), "run")}, influxArgs(srv, root)...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("collect: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "heatsink spool send "+root) {
		t.Errorf("collect does not say how to send the older spool's points:\n%s", out)
	}
	pts, err := srv.Points("cpu")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		if p.Tag("host") == "older-fixture" {
			t.Fatalf("a point of the older spool reached the database: %s", &p)
		}
	}

	out, err = exec.Command(bin, "spool", "list", root).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "none recorded") || !strings.Contains(string(out), srv.URL()[len("http://"):]) {
		t.Errorf("spool list: %v; want the older spool and the collect's own:\n%s", err, out)
	}
	out, err = exec.Command(bin, "spool", "send", root, "--to", srv.URL(), "--bucket", influxtest.Bucket).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "20 points sent") {
		t.Fatalf("spool send: %v; want 20 points sent:\n%s", err, out)
	}
	srv.AssertHolds(t, older, false)
}
