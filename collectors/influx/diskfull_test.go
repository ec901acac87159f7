package influx

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/internal/smalldisk"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

// With the spool's disk full (a real tmpfs filled to ENOSPC) while a real
// InfluxDB answers, every point still lands: what the spool refuses goes
// to the server directly. Nothing is lost, the self-report counts what
// went direct, and /healthz says the spool refuses points meanwhile.
func TestFullSpoolDiskSendsDirectlyWhileInfluxDBIsUp(t *testing.T) {
	disk := smalldisk.Mount(t, 1<<20)
	srv := influxtest.Start(t)
	o := testOptions(t, srv)
	o.SpoolDir = disk + "/spool"
	o.SpoolSegmentBytes = 16 << 10
	o.MetricsEvery = time.Nanosecond
	var logBuf syncBuffer
	o.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	sink, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	var written []point.Point
	tick := func(i int) {
		batch := make([]point.Point, 50)
		for j := range batch {
			batch[j] = point.New("cpu", time.Unix(1700000000, int64(i*50+j)))
			batch[j].AddTag("host", "n1").AddTag("cpu", "cpu0").AddFloat("usage_pct", float64(i*50+j))
		}
		if err := sink.Write(batch); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		written = append(written, batch...)
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 30 {
		tick(i)
	}
	free := smalldisk.Fill(t, disk)
	for i := 30; i < 70; i++ {
		tick(i)
	}
	ok, problem := sink.Health()
	if ok || !strings.Contains(problem, "refuses points") {
		t.Errorf("health with the spool's disk full: ok %v, %q; want not ok, saying the spool refuses points", ok, problem)
	}
	report := sink.SelfMetrics(time.Now(), nil)
	free()
	for i := 70; i < 100; i++ {
		tick(i)
	}
	if err := sink.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	st := sink.Stats()
	t.Logf("stats: %d bypassed the spool, %d sent directly, %d lost, %d sent in all", st.BypassedPoints, st.DirectPoints, st.LostPoints, st.SentPoints)
	if st.BypassedPoints == 0 {
		t.Fatal("the spool refused nothing: the test did not fill its disk")
	}
	if st.LostPoints != 0 || st.DirectPoints == 0 {
		t.Errorf("%d points lost and %d sent directly; want none lost, some direct", st.LostPoints, st.DirectPoints)
	}
	srv.AssertHolds(t, written, true)
	// The shipper cannot commit its position while the disk is full: that
	// is said once for the episode, not once a batch.
	if n := strings.Count(logBuf.String(), "commit spool position"); n > 1 {
		t.Errorf("the failing position commit was logged %d times during one full-disk episode; want once", n)
	}
	var sawDirect, sawAlert bool
	for _, p := range report {
		if p.Measurement == schema.InfluxSink {
			if v, _ := p.Field(schema.FieldDirectPointsTotal); v.UintV() > 0 {
				sawDirect = true
			}
			if v, _ := p.Field(schema.FieldDroppedPointsTotal); v.UintV() != 0 {
				t.Errorf("influx_sink reports %d points lost", v.UintV())
			}
		}
		sawAlert = sawAlert || p.Tag("rule") == "influx_spool_full"
	}
	if !sawDirect || !sawAlert {
		t.Errorf("self-report while the disk was full: direct points reported %v, influx_spool_full alert %v; want both", sawDirect, sawAlert)
	}
}
