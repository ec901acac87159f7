// Command influxbench measures the InfluxDB sink against a real local
// influxd 1.8 (started on free ports in a temporary directory): the
// sustained rate at which a full spool is shipped with the default batch,
// and the catch-up after an outage while points keep arriving.
// bench/influx.sh runs it and prints the table.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/collectors/spool"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
)

func main() {
	points := flag.Int("points", 200_000, "points in the spool for the sustained rate")
	reps := flag.Int("reps", 3, "repetitions of the sustained measurement (the median is reported)")
	outage := flag.Duration("outage", 30*time.Second, "how long influxd is stopped in the catch-up measurement")
	rate := flag.Int("rate", 1000, "points per second written during the catch-up measurement")
	flag.Parse()

	work, err := os.MkdirTemp("", "influxbench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	srv, err := influxtest.Launch(work+"/influxd", influxtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := influx.Config{URL: srv.URL(), Bucket: influxtest.Bucket}

	// Sustained: a spool filled while the sink could not send, then shipped.
	var rates []float64
	var batch int
	for r := 0; r < *reps; r++ {
		c := cfg
		c.SpoolDir = fmt.Sprintf("%s/spool-sustained-%d", work, r)
		fill(c, *points, time.Unix(1_700_000_000+int64(r)*100_000, 0))
		s, err := influx.New(influx.Options{Config: c, Logger: quiet})
		if err != nil {
			log.Fatal(err)
		}
		start := time.Now()
		if err := s.Drain(context.Background()); err != nil {
			log.Fatal(err)
		}
		el := time.Since(start)
		st := s.Stats()
		s.Close()
		if st.SentPoints != int64(*points) {
			log.Fatalf("sent %d of %d", st.SentPoints, *points)
		}
		rates = append(rates, float64(*points)/el.Seconds())
		batch = influx.DefaultBatchSize
	}
	slices.Sort(rates)

	// Catch-up: rate points/s throughout; influxd stopped for the outage.
	c := cfg
	c.SpoolDir = work + "/spool-catchup"
	s, err := influx.New(influx.Options{Config: c, Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	genDone := make(chan struct{})
	go generate(ctx, s, *rate, genDone)
	time.Sleep(5 * time.Second)
	if err := srv.Stop(); err != nil {
		log.Fatal(err)
	}
	time.Sleep(*outage)
	restartAt := time.Now()
	if err := srv.Restart(); err != nil {
		log.Fatal(err)
	}
	up := time.Now()
	backlog := s.Stats().Spool.UnsentPoints
	sentAtUp := s.Stats().SentPoints
	// Caught up: the backlog is down to what one second of traffic leaves.
	var firstWrite time.Time
	for {
		st := s.Stats()
		if firstWrite.IsZero() && st.SentPoints > sentAtUp {
			firstWrite = time.Now()
		}
		if st.Spool.UnsentPoints <= int64(*rate) && !firstWrite.IsZero() {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	caught := time.Now()
	sentDuring := s.Stats().SentPoints - sentAtUp
	cancel()
	<-genDone
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
	st := s.Stats()

	fmt.Printf("%-46s %s\n", "measure", "value")
	fmt.Printf("%-46s %d points/request (default)\n", "batch size", batch)
	fmt.Printf("%-46s %.0f points/s (median of %d; min %.0f, max %.0f; %d points each)\n", "sustained spool -> influxd",
		rates[len(rates)/2], len(rates), rates[0], rates[len(rates)-1], *points)
	fmt.Printf("%-46s %v at %d points/s -> backlog %d points\n", "outage (influxd stopped)", *outage, *rate, backlog)
	fmt.Printf("%-46s %v\n", "influxd restart (until /ping answers)", up.Sub(restartAt).Round(time.Millisecond))
	fmt.Printf("%-46s %v\n", "server up -> first write accepted (backoff)", firstWrite.Sub(up).Round(time.Millisecond))
	fmt.Printf("%-46s %v (from first write)\n", "backlog drained", caught.Sub(firstWrite).Round(time.Millisecond))
	fmt.Printf("%-46s %.0f points/s\n", "catch-up send rate", float64(sentDuring)/caught.Sub(firstWrite).Seconds())
	fmt.Printf("%-46s %d written, %d sent, %d unsent at close, %d dropped\n", "catch-up run totals",
		st.Spool.AppendedPoints, st.SentPoints, st.Spool.UnsentPoints, st.LostPoints)
}

// gpuPoint is a reading of typical size (~170 bytes of line protocol).
func gpuPoint(t time.Time, i int) point.Point {
	p := point.New(schema.GPU, t)
	p.AddTag(schema.TagHost, "bench-node").AddTag(schema.TagGPU, fmt.Sprint(i%8)).AddTag(schema.TagUUID, fmt.Sprintf("GPU-%08d", i%8)).AddTag(schema.TagModel, "NVIDIA H100 80GB HBM3")
	p.AddFloat(schema.FieldTempC, 40+float64(i%50)).AddFloat(schema.FieldPowerW, 300.5).AddInt(schema.FieldPState, 0).AddFloat(schema.FieldUtilPct, 99)
	return p
}

// fill writes n points into the spool of c's destination, as a sink that
// could not send would have left them (the spool belongs to its
// destination, so a sink for another server cannot fill it).
func fill(c influx.Config, n int, t0 time.Time) {
	dir, err := influx.SpoolDirOf(c)
	if err != nil {
		log.Fatal(err)
	}
	dest, err := influx.DestinationOf(c)
	if err != nil {
		log.Fatal(err)
	}
	s, err := spool.Open(dir, spool.Options{Destination: dest.String(), SyncEvery: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	var enc point.Encoder
	for i := 0; i < n; i++ {
		p := gpuPoint(t0.Add(time.Duration(i/8)*time.Millisecond), i)
		if err := enc.Encode(&p); err != nil {
			log.Fatal(err)
		}
		if (i+1)%1000 == 0 || i == n-1 {
			if err := s.Append(enc.Bytes(), (i%1000)+1); err != nil {
				log.Fatal(err)
			}
			enc.Reset()
		}
	}
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
}

// generate writes rate points/s in ten writes a second, as a collector of
// many sensors at 10 Hz would, until ctx ends.
func generate(ctx context.Context, s *influx.Sink, rate int, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	per := rate / 10
	n := 0
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-tick.C:
			batch := make([]point.Point, per)
			for i := range batch {
				batch[i] = gpuPoint(t.Add(time.Duration(i)*time.Microsecond), n)
				n++
			}
			if err := s.Write(batch); err != nil {
				log.Fatal(err)
			}
		}
	}
}
