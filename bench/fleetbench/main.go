// Command fleetbench simulates a fleet of node agents writing to one local
// InfluxDB 1.8 and finds how many it sustains with zero loss. Each agent is
// what `heatsink collect` runs on a node, minus the sysfs reads: a
// collectors.Collector ticking at 1 Hz over a source producing a realistic
// 8-GPU node (about 150 fields), writing through its own real InfluxDB sink
// and durable spool, with a host of its own. For each fleet size it counts
// what arrived in InfluxDB (InfluxQL count per measurement), the agents' CPU
// per tick, influxd's CPU, the largest spool backlog and missed ticks, and
// it stops at the first size that loses anything or whose spools back up.
// Missed ticks and late samples are the agents' own losses: here every
// agent shares this machine's CPUs with the others and with influxd, where
// on a fleet each has a node of its own; they are shown, and do not decide.
// bench/fleet.sh runs it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

func main() {
	sizes := flag.String("agents", "10,25,50,100,200,400", "fleet sizes to try, in order")
	ticks := flag.Int("ticks", 30, "ticks (seconds at 1 Hz) each fleet records")
	interval := flag.Duration("interval", time.Second, "sampling interval")
	drain := flag.Duration("drain", 30*time.Second, "how long the agents may take to send their backlog at the end")
	keepGoing := flag.Bool("keep-going", false, "try every size even after one lost points")
	flag.Parse()

	work, err := os.MkdirTemp("", "fleetbench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	srv, err := influxtest.Launch(filepath.Join(work, "influxd"), influxtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	influxPID := findPID(filepath.Join(work, "influxd", "influxdb.conf"))

	fmt.Printf("fleet of simulated 8-GPU nodes -> one influxd 1.8.10 on this machine (%d CPUs), %d ticks at %v each\n",
		numCPU(), *ticks, *interval)
	fmt.Printf("%6s %7s %9s %9s %12s %11s %7s %8s %8s %8s %15s %s\n",
		"agents", "fields", "points/s", "fields/s", "agent ms/tick", "influxd CPU", "missed", "late", "backlog", "drain s", "delivered", "verdict")
	for step, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("-agents: %q", s)
		}
		r := runFleet(srv, work, step, n, *ticks, *interval, *drain, influxPID)
		// The server sustains the fleet when everything recorded arrived
		// and no agent's spool held more than a few ticks at any time.
		// Missed ticks are counted but do not decide: all agents share this
		// machine's CPUs here, where each would have a node of its own.
		verdict := "sustained"
		switch {
		case r.delivered != r.expected:
			verdict = fmt.Sprintf("LOST %d points", r.expected-r.delivered)
		case r.maxBacklog > int64(5*newNode(0).points()) || r.drainS > 5*interval.Seconds():
			verdict = "backlog: influxd falls behind"
		}
		fmt.Printf("%6d %7d %9.0f %9.0f %12.2f %10.0f%% %7d %8d %8d %8.1f %15s %s\n",
			n, r.fieldsPerTick, r.pointsPerS, r.fieldsPerS, r.agentMsPerTick, r.influxCPU*100, r.missed, r.late, r.maxBacklog, r.drainS,
			fmt.Sprintf("%d/%d", r.delivered, r.expected), verdict)
		if verdict != "sustained" && !*keepGoing {
			break
		}
	}
}

type result struct {
	fieldsPerTick          int
	pointsPerS, fieldsPerS float64
	agentMsPerTick         float64
	influxCPU              float64 // fraction of one CPU
	missed                 int     // ticks an agent skipped, having fallen a whole interval behind
	late                   uint64  // samples that missed their deadline (the source's timeouts)
	maxBacklog             int64   // largest unsent points of one agent
	drainS                 float64
	delivered, expected    int64
}

func runFleet(srv *influxtest.Server, work string, step, n, ticks int, iv, drain time.Duration, influxPID int) result {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	prefix := fmt.Sprintf("f%d-", step)
	type agent struct {
		c    *collectors.Collector
		sink *influx.Sink
	}
	agents := make([]agent, n)
	for i := range agents {
		sink, err := influx.New(influx.Options{Config: influx.Config{URL: srv.URL(), Bucket: influxtest.Bucket,
			SpoolDir: filepath.Join(work, fmt.Sprintf("spool-%d-%d", step, i))}, Logger: quiet})
		if err != nil {
			log.Fatal(err)
		}
		c := collectors.New(collectors.Options{Interval: iv, Ticks: ticks, Host: fmt.Sprintf("%snode%04d", prefix, i), Logger: quiet},
			[]collectors.Source{newNode(uint64(step*100000 + i))}, []collectors.Sink{sink})
		agents[i] = agent{c, sink}
	}
	cpu0, infl0, wall0 := processCPU(), pidCPU(influxPID), time.Now()
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.c.Run(context.Background())
		}()
	}
	var backlog int64
	stop := make(chan struct{})
	var mon sync.WaitGroup
	mon.Add(1)
	go func() {
		defer mon.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			for _, a := range agents {
				backlog = max(backlog, a.sink.Stats().Spool.UnsentPoints)
			}
		}
	}()
	wg.Wait()
	close(stop)
	mon.Wait()
	recordEnd := time.Now()
	cpuRun, inflRun := processCPU()-cpu0, pidCPU(influxPID)-infl0
	runWall := recordEnd.Sub(wall0)

	// Send what is left, as a stopping agent does, and time it.
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	var dw sync.WaitGroup
	for _, a := range agents {
		dw.Add(1)
		go func() {
			defer dw.Done()
			a.sink.Drain(ctx)
		}()
	}
	dw.Wait()
	cancel()
	drainS := time.Since(recordEnd).Seconds()
	var r result
	for _, a := range agents {
		st := a.c.Stats()
		r.expected += int64(st.Points)
		r.missed += st.MissedTicks
		for _, s := range a.c.SourceStatus() {
			r.late += s.Timeouts
		}
		a.sink.Close()
	}
	r.fieldsPerTick = newNode(0).fields()
	r.pointsPerS = float64(r.expected) / runWall.Seconds()
	r.fieldsPerS = r.pointsPerS * float64(r.fieldsPerTick) / float64(newNode(0).points())
	r.agentMsPerTick = cpuRun.Seconds() * 1000 / float64(n*ticks)
	r.influxCPU = inflRun.Seconds() / runWall.Seconds()
	r.maxBacklog = backlog
	r.drainS = drainS
	r.delivered = count(srv, prefix)
	return r
}

// count returns the points of the fleet's hosts in InfluxDB: per
// measurement, the count of a field every one of its points carries.
func count(srv *influxtest.Server, prefix string) int64 {
	fields := map[string]string{schema.GPU: schema.FieldTempC, schema.Hwmon: schema.FieldTempC, schema.CPU: schema.FieldUsagePct,
		schema.Mem: schema.FieldUsedBytes, schema.Load: schema.FieldLoad1, schema.RAPL: schema.FieldEnergyJ, schema.NVMe: schema.FieldTempC,
		schema.CollectorTick: schema.FieldPoints, schema.CollectorSource: schema.FieldErrorsTotal}
	var total int64
	for m, f := range fields {
		q := fmt.Sprintf(`SELECT count(%q) FROM %q WHERE "host" =~ /^%s/`, f, m, prefix)
		resp, err := http.PostForm(srv.URL()+"/query", url.Values{"db": {influxtest.Database}, "q": {q}, "epoch": {"ns"}})
		if err != nil {
			log.Fatal(err)
		}
		var r struct {
			Results []struct {
				Error  string `json:"error"`
				Series []struct {
					Values [][]json.Number `json:"values"`
				} `json:"series"`
			} `json:"results"`
		}
		dec := json.NewDecoder(resp.Body)
		dec.UseNumber()
		err = dec.Decode(&r)
		resp.Body.Close()
		if err != nil || len(r.Results) == 0 || r.Results[0].Error != "" {
			log.Fatalf("%s: %v %+v", q, err, r)
		}
		for _, s := range r.Results[0].Series {
			for _, row := range s.Values {
				v, _ := row[1].Int64()
				total += v
			}
		}
	}
	return total
}

// node is a simulated 8-GPU node: what NVML, hwmon, host, RAPL and NVMe
// give heatsink on a DGX-class machine each second, values wandering.
type node struct {
	rng    *rand.Rand
	temps  []float64
	energy []float64
}

func newNode(seed uint64) *node {
	n := &node{rng: rand.New(rand.NewPCG(seed, 7)), temps: make([]float64, 26), energy: make([]float64, 10)}
	for i := range n.temps {
		n.temps[i] = 40 + 10*n.rng.Float64()
	}
	return n
}

func (n *node) Name() string                       { return "sim" }
func (n *node) Discover(ctx context.Context) error { return nil }

func (n *node) walk(i int) float64 {
	n.temps[i] += n.rng.NormFloat64() * 0.2
	return math.Round(n.temps[i]*100) / 100
}

func (n *node) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	for g := 0; g < 8; g++ {
		p := point.New(schema.GPU, t)
		p.AddTag(schema.TagGPU, strconv.Itoa(g)).AddTag(schema.TagUUID, fmt.Sprintf("GPU-%08x-%d", n.rng.Uint32()&0, g)).AddTag(schema.TagModel, "NVIDIA H100 80GB HBM3")
		n.energy[g] += 400 + 300*n.rng.Float64()
		p.AddFloat(schema.FieldTempC, n.walk(g)).AddFloat(schema.FieldMemTempC, n.walk(8+g)).AddFloat(schema.FieldPowerW, 400+300*n.rng.Float64()).
			AddFloat(schema.FieldEnergyJ, n.energy[g]).AddFloat(schema.FieldPowerLimitW, 700).AddFloat(schema.FieldUtilPct, 100*n.rng.Float64()).
			AddFloat(schema.FieldMemUtilPct, 100*n.rng.Float64()).AddInt(schema.FieldMemUsedBytes, 60<<30+n.rng.Int64N(1<<30)).
			AddInt(schema.FieldMemTotalBytes, 80<<30).AddInt(schema.FieldPState, 0).AddFloat(schema.FieldSMClockMHz, 1980).AddFloat(schema.FieldMemClockMHz, 2619).
			AddInt(schema.FieldClockEventReasons, 0).AddBool(schema.FieldThrottleThermal, false)
		buf = append(buf, p)
	}
	for c := 0; c < 2; c++ {
		p := point.New(schema.Hwmon, t)
		p.AddTag(schema.TagChip, fmt.Sprintf("platform_coretemp_%d", c)).AddTag(schema.TagChipName, "coretemp").AddTag(schema.TagSensor, "temp1").
			AddTag(schema.TagLabel, fmt.Sprintf("Package id %d", c)).AddTag(schema.TagClass, "cpu_package")
		p.AddFloat(schema.FieldTempC, n.walk(16+c))
		buf = append(buf, p)
		for k := 0; k < 4; k++ { // a few cores per package
			p := point.New(schema.Hwmon, t)
			p.AddTag(schema.TagChip, fmt.Sprintf("platform_coretemp_%d", c)).AddTag(schema.TagChipName, "coretemp").AddTag(schema.TagSensor, fmt.Sprintf("temp%d", k+2)).
				AddTag(schema.TagLabel, fmt.Sprintf("Core %d", k)).AddTag(schema.TagClass, "cpu_core")
			p.AddFloat(schema.FieldTempC, n.walk(18+k))
			buf = append(buf, p)
		}
	}
	cpu := point.New(schema.CPU, t)
	cpu.AddTag(schema.TagCPU, "total").AddFloat(schema.FieldUsagePct, 50+10*n.rng.Float64()).AddFloat(schema.FieldUserPct, 40).AddFloat(schema.FieldSystemPct, 5).
		AddFloat(schema.FieldIowaitPct, 0.5).AddFloat(schema.FieldIdlePct, 44.5)
	mem := point.New(schema.Mem, t)
	mem.AddInt(schema.FieldTotalBytes, 2<<40).AddInt(schema.FieldAvailableBytes, 1<<40).AddInt(schema.FieldUsedBytes, 1<<40).AddInt(schema.FieldSwapUsedBytes, 0)
	load := point.New(schema.Load, t)
	load.AddFloat(schema.FieldLoad1, 60).AddFloat(schema.FieldLoad5, 58).AddFloat(schema.FieldLoad15, 55).AddInt(schema.FieldProcsRunning, 64)
	buf = append(buf, cpu, mem, load)
	for z := 0; z < 2; z++ {
		n.energy[8+z] += 250 + 50*n.rng.Float64()
		p := point.New(schema.RAPL, t)
		p.AddTag(schema.TagZone, fmt.Sprintf("package-%d", z)).AddTag(schema.TagZoneID, fmt.Sprintf("intel-rapl:%d", z))
		p.AddFloat(schema.FieldEnergyJ, n.energy[8+z]).AddFloat(schema.FieldPowerW, 250+50*n.rng.Float64())
		buf = append(buf, p)
	}
	for d := 0; d < 2; d++ {
		p := point.New(schema.NVMe, t)
		p.AddTag(schema.TagDevice, fmt.Sprintf("nvme%d", d)).AddTag(schema.TagModel, "SAMSUNG MZ1L23T8HBLA").AddTag(schema.TagSerial, "S6").AddTag(schema.TagSensor, "Composite")
		p.AddFloat(schema.FieldTempC, n.walk(24+d)).AddFloat(schema.FieldWarnC, 80).AddFloat(schema.FieldCritC, 85)
		buf = append(buf, p)
	}
	return buf, nil
}

// points and fields count one tick, the collector's own two points included.
func (n *node) points() int {
	pts, _ := n.Sample(context.Background(), time.Now(), nil)
	return len(pts) + 2
}

func (n *node) fields() int {
	pts, _ := n.Sample(context.Background(), time.Now(), nil)
	f := 3 + 5 // collector_tick, collector_source (with latency and points)
	for _, p := range pts {
		f += len(p.Fields)
	}
	return f
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pidCPU is a process's user+system CPU time from /proc/PID/stat.
func pidCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// findPID finds the influxd started with this configuration file.
func findPID(conf string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(b, []byte(conf)) && bytes.Contains(b, []byte("influxd")) {
			return pid
		}
	}
	return 0
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return bytes.Count(b, []byte("processor\t:"))
}
