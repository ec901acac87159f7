package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/spool"
	"github.com/heatsink-hpc/heatsink/internal/smalldisk"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
)

// spoolDiskFull: only the spool's disk fills, 8 s into a 40 s collection,
// for 20 s, while influxd answers throughout: what the spool refuses must
// go to InfluxDB directly, so no point is lost (issue 28, item 8).
func (b *bench) spoolDiskFull() []row {
	const secs = 40
	spoolFS := b.mount("spoolonlyfs")
	defer smalldisk.Unmount(spoolFS)
	host := "fault-spool-full"
	run := filepath.Join(b.work, host+"-run")
	cfg := b.config(host, b.sysCopy(host), "")
	cmd, log := b.start(host, append([]string{"collect", "--config", cfg, "--duration", strconv.Itoa(secs) + "s", "--out", run}, b.influxFlags(filepath.Join(spoolFS, "spool"))...)...)
	time.Sleep(8 * time.Second)
	free, err := smalldisk.FillDir(spoolFS)
	check(err)
	time.Sleep(20 * time.Second)
	check(free())
	freed := time.Now()
	wait(cmd, log, host)
	local := localTicks(run)
	delivered := b.waitDelivered(host, len(local), 30*time.Second)
	recorded, landed := hostPoints(run, host), b.influxPoints(host)
	direct, dropped := lastSinkReport(run)
	return []row{{fault: "spool disk full 20 s, influxd up", expected: secs, local: len(local), delivered: len(delivered),
		lostLocalS: float64(secs - len(local)), lostDeliveredS: float64(secs - len(delivered)), recoverLocalS: -1,
		recoverInfluxS: firstAfter(delivered, freed), orphans: -1,
		note: fmt.Sprintf("points lost: %d (%d recorded locally, %d in InfluxDB); the sink's last report: %d sent directly, %d dropped",
			recorded-landed, recorded, landed, direct, dropped)}}
}

// foreignSpool: the spool root holds points of another destination (the
// same server, another bucket) and points an older heatsink left in the
// root itself; a collect to this bucket must send none of them (issue 28,
// item 9).
func (b *bench) foreignSpool() []row {
	const secs = 10
	host := "fault-foreign-spool"
	root := filepath.Join(b.work, host+"-spool")
	other := influx.Config{URL: b.srv.URL(), Bucket: "fixtures/autogen", SpoolDir: root}
	dir, err := influx.SpoolDirOf(other)
	check(err)
	dest, err := influx.DestinationOf(other)
	check(err)
	left := leaveSpool(dir, dest.String(), host+"-fixture", 1060) + leaveSpool(root, "", host+"-older", 500)
	cfg := b.config(host, b.sysCopy(host), "")
	run := filepath.Join(b.work, host+"-run")
	cmd, log := b.start(host, append([]string{"collect", "--config", cfg, "--duration", strconv.Itoa(secs) + "s", "--out", run}, b.influxFlags(root)...)...)
	wait(cmd, log, host)
	local := localTicks(run)
	delivered := b.waitDelivered(host, len(local), 30*time.Second)
	foreign := b.influxPoints(host+"-fixture") + b.influxPoints(host+"-older")
	return []row{{fault: "spool of another destination", expected: secs, local: len(local), delivered: len(delivered),
		lostLocalS: float64(secs - len(local)), lostDeliveredS: float64(secs - len(delivered)), recoverLocalS: -1, recoverInfluxS: -1, orphans: -1,
		note: fmt.Sprintf("points that reached this database from the %d left in the spool root (1060 for another bucket, 500 in the older layout): %d", left, foreign)}}
}

// leaveSpool leaves n points of host in the spool dir, recorded for dest
// ("" for an older heatsink's spool, which records none).
func leaveSpool(dir, dest, host string, n int) int {
	s, err := spool.Open(dir, spool.Options{Destination: dest, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	check(err)
	var enc point.Encoder
	t0 := time.Now().Add(-time.Hour)
	for i := range n {
		p := point.New("cpu", t0.Add(time.Duration(i)*time.Millisecond))
		p.AddTag(schema.TagHost, host).AddFloat("usage_pct", float64(i%100))
		check(enc.Encode(&p))
	}
	check(s.Append(enc.Bytes(), n))
	check(s.Close())
	return n
}

// hostPoints counts the points of host in a run directory.
func hostPoints(dir, host string) int {
	n := 0
	rundir.ForEachPoint(dir, func(p *point.Point) error {
		if p.Tag(schema.TagHost) == host {
			n++
		}
		return nil
	}, func(*point.LineError) {})
	return n
}

// influxPoints counts the points of host InfluxDB holds.
func (b *bench) influxPoints(host string) int {
	pts, err := b.srv.Points()
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultmatrix: read InfluxDB:", err)
		return -1
	}
	n := 0
	for _, p := range pts {
		if p.Tag(schema.TagHost) == host {
			n++
		}
	}
	return n
}

// lastSinkReport reads the InfluxDB sink's last self-report in a run
// directory: points sent directly and points dropped.
func lastSinkReport(dir string) (direct, dropped int64) {
	rundir.ForEachPoint(dir, func(p *point.Point) error {
		if p.Measurement == schema.InfluxSink {
			if v, ok := p.Float(schema.FieldDirectPointsTotal); ok {
				direct = int64(v)
			}
			if v, ok := p.Float(schema.FieldDroppedPointsTotal); ok {
				dropped = int64(v)
			}
		}
		return nil
	}, func(*point.LineError) {})
	return direct, dropped
}
