package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/sensors/tank/sim"
)

// hwmonFIFO: one hwmon attribute of the Intel node (coretemp temp3_input)
// is a FIFO without a writer, whose open blocks as a driver stuck on its
// I2C bus blocks read(2), from the start of a 20 s collection; a writer
// answers every open from 10 s on. Recorded = ticks with all 14 other
// hwmon readings; back after = the stuck channel's first reading after the
// writer came (issue 28, item 6).
func (b *bench) hwmonFIFO() []row {
	const secs = 20
	host := "fault-hwmon-fifo"
	sys := b.sysCopy(host)
	fifo := filepath.Join(sys, "devices/platform/coretemp.0/hwmon/hwmon1/temp3_input")
	check(os.Remove(fifo))
	check(syscall.Mkfifo(fifo, 0o644))
	cfg := b.config(host, sys, "")
	run := filepath.Join(b.work, host+"-run")
	cmd, log := b.start(host, "collect", "--config", cfg, "--duration", strconv.Itoa(secs)+"s", "--out", run)
	time.Sleep(10 * time.Second)
	var stop atomic.Bool
	served := make(chan struct{})
	go func() { // answers every open of the FIFO until stopped
		defer close(served)
		for !stop.Load() {
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.WriteString("51000\n")
			f.Close()
			// Let the reader take it and close before the next open,
			// which would otherwise join the same reader and write twice.
			time.Sleep(100 * time.Millisecond)
		}
	}()
	back := time.Now()
	wait(cmd, log, host)
	stop.Store(true)
	if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		<-served // the writer's last open, released by this reader
		f.Close()
	}
	others := map[time.Time]int{}
	var stuck []time.Time
	rundir.ForEachPoint(run, func(p *point.Point) error {
		if p.Measurement != "hwmon" {
			return nil
		}
		if p.Tag("chip") == "platform_coretemp_0" && p.Tag("sensor") == "temp3" {
			stuck = append(stuck, p.Time)
		} else {
			others[p.Time]++
		}
		return nil
	}, func(*point.LineError) {})
	full := 0
	for _, n := range others {
		if n == 14 {
			full++
		}
	}
	return []row{{fault: "hwmon attribute blocked 10 s (FIFO)", expected: secs, local: full, delivered: -1,
		lostLocalS: float64(secs - full), lostDeliveredS: -1, recoverLocalS: firstAfter(stuck, back), recoverInfluxS: -1, orphans: -1,
		note: fmt.Sprintf("recorded = ticks with all 14 other hwmon readings; the blocked channel read in %d ticks, after its writer came", len(stuck))}}
}

// tankHung: the tank's API (heatsink's tank model over HTTP) stops
// answering 5 s into a 30 s collection beside the Intel node's sources and
// answers again 10 s later. Recorded = ticks with a tank reading; back
// after = its first reading after the API answers again (issue 28, item 1).
func (b *bench) tankHung() []row {
	const secs = 30
	host := "fault-tank-hung"
	m, err := sim.New(sim.DefaultParams(), 1)
	check(err)
	model, err := sim.NewServer(m, 60)
	check(err)
	var hangUntil atomic.Int64 // Unix ns; requests before it wait for it
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := time.Until(time.Unix(0, hangUntil.Load())); d > 0 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(d):
			}
		}
		model.ServeHTTP(w, r)
	})}
	ln, err := net.Listen("tcp", freeAddr())
	check(err)
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	cfg := filepath.Join(b.work, host+".yaml")
	check(os.WriteFile(cfg, []byte(fmt.Sprintf("host: %s\ninterval: 1s\nsysfs_root: %s\nsources:\n  nvml: {disabled: true}\n  tanks: [{name: pod1, kind: submer, url: 'http://%s'}]\n",
		host, b.sysCopy(host), ln.Addr())), 0o644))
	run := filepath.Join(b.work, host+"-run")
	cmd, log := b.start(host, "collect", "--config", cfg, "--duration", strconv.Itoa(secs)+"s", "--out", run)
	time.Sleep(5 * time.Second)
	back := time.Now().Add(10 * time.Second)
	hangUntil.Store(back.UnixNano())
	wait(cmd, log, host)
	var tank []time.Time
	rundir.ForEachPoint(run, func(p *point.Point) error {
		if p.Measurement == "tank" {
			tank = append(tank, p.Time)
		}
		return nil
	}, func(*point.LineError) {})
	note := "recorded = ticks with a tank reading; 10 s of them are the API's own silence"
	if len(tank) == 0 {
		note = errors.New("no tank reading at all: see " + filepath.Join(os.TempDir(), "heatsink-faults-"+host+".log")).Error()
	}
	return []row{{fault: "tank API hung 10 s", expected: secs, local: len(tank), delivered: -1,
		lostLocalS: float64(secs - len(tank)), lostDeliveredS: -1, recoverLocalS: firstAfter(tank, back), recoverInfluxS: -1, orphans: -1,
		note: note}}
}
