// Command hungsource measures the collector under a source that hangs
// (issue 28, item 1): it serves a tank API that stops answering for a
// while, loads an agent's /metrics with scrapes, and tabulates from a run
// directory how many readings every source gave per tick before, during
// and after the hang. bench/hung-source.sh drives it.
//
//	hungsource serve  -listen ADDR [-hang-at 5s -hang-for 3s|forever]
//	hungsource scrape -url URL -rate 50 -duration 10m
//	hungsource table  -run DIR [-hung SOURCE -hang-start T -hang-end T]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/rundir"
	"github.com/heatsink-hpc/heatsink/sensors/tank/sim"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(ctx, os.Args[2:])
	case "scrape":
		err = scrape(ctx, os.Args[2:])
	case "table":
		err = table(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hungsource:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: hungsource serve|scrape|table [flags] (see the package doc)")
	os.Exit(2)
}

// serve answers GET /api/realTime as a Submer pod (heatsink's tank model)
// except between hang-at and hang-at+hang-for after its start, when every
// request waits without an answer until the hang ends or its client gives
// up: a controller whose web server is stuck. It prints the hang's start
// and end (RFC 3339, "never" for a hang that does not end) on stdout.
func serve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to serve on")
	hangAt := fs.Duration("hang-at", 0, "start hanging this long after start (0: never hang)")
	hangFor := fs.String("hang-for", "3s", "how long the hang lasts: a duration or forever")
	fs.Parse(args)
	m, err := sim.New(sim.DefaultParams(), 1)
	if err != nil {
		return err
	}
	model, err := sim.NewServer(m, 60)
	if err != nil {
		return err
	}
	start := time.Now()
	var from, until time.Time // zero: no hang
	if *hangAt > 0 {
		from = start.Add(*hangAt)
		if *hangFor != "forever" {
			d, err := time.ParseDuration(*hangFor)
			if err != nil || d <= 0 {
				return fmt.Errorf("-hang-for %q: want a positive duration or forever", *hangFor)
			}
			until = from.Add(d)
		}
		end := "never"
		if !until.IsZero() {
			end = until.Format(time.RFC3339Nano)
		}
		fmt.Printf("hang_start %s\nhang_end %s\n", from.Format(time.RFC3339Nano), end)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		if !from.IsZero() && !now.Before(from) && (until.IsZero() || now.Before(until)) {
			var over <-chan time.Time
			if !until.IsZero() {
				t := time.NewTimer(until.Sub(now))
				defer t.Stop()
				over = t.C
			}
			select {
			case <-r.Context().Done():
				return
			case <-over:
			}
		}
		model.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *listen, err)
	}
	fmt.Fprintf(os.Stderr, "hungsource: serving http://%s/api/realTime\n", ln.Addr())
	srv := &http.Server{Handler: h}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// scrape GETs url rate times a second for duration, each request on its
// own so that a slow answer does not lower the rate, and prints how many
// answered 200, failed, and the latency quantiles.
func scrape(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("scrape", flag.ExitOnError)
	url := fs.String("url", "", "URL to scrape (the agent's /metrics)")
	rate := fs.Float64("rate", 50, "scrapes a second")
	dur := fs.Duration("duration", 10*time.Minute, "how long to scrape")
	fs.Parse(args)
	if *url == "" || !(*rate > 0) {
		return errors.New("scrape needs -url and a positive -rate")
	}
	ctx, cancel := context.WithTimeout(ctx, *dur)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second}
	var ok, failed atomic.Int64
	var mu sync.Mutex
	var lat []float64
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Duration(float64(time.Second) / *rate))
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			wg.Go(func() {
				t0 := time.Now()
				resp, err := client.Get(*url)
				if err != nil {
					failed.Add(1)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
					return
				}
				ok.Add(1)
				mu.Lock()
				lat = append(lat, time.Since(t0).Seconds())
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	slices.Sort(lat)
	fmt.Printf("scrapes_ok\t%d\nscrapes_failed\t%d\nscrape_latency_ms\tp50 %.1f\tp99 %.1f\tmax %.1f\n",
		ok.Load(), failed.Load(), 1e3*quantile(lat, 0.5), 1e3*quantile(lat, 0.99), 1e3*quantile(lat, 1))
	return nil
}

// table reads a run directory's collector_tick and collector_source points
// and prints, per source, the ticks in which it gave readings (the points
// field of its collector_source point; a tick without one, or one without
// points, gave none) before, during and after the hang, and for the hung
// source how long after the hang's end its first reading came. Without a
// hang it prints the stalled ticks: ticks in which some source gave none.
func table(args []string) error {
	fs := flag.NewFlagSet("table", flag.ExitOnError)
	run := fs.String("run", "", "run directory")
	hung := fs.String("hung", "", "the source that hangs (tank:pod1)")
	startS := fs.String("hang-start", "", "when the hang started (RFC 3339)")
	endS := fs.String("hang-end", "", "when it ended (RFC 3339; never)")
	fs.Parse(args)
	if *run == "" {
		return errors.New("table needs -run")
	}
	var start, end time.Time
	var err error
	if *startS != "" {
		if start, err = time.Parse(time.RFC3339Nano, *startS); err != nil {
			return fmt.Errorf("-hang-start: %w", err)
		}
	}
	if *endS != "" && *endS != "never" {
		if end, err = time.Parse(time.RFC3339Nano, *endS); err != nil {
			return fmt.Errorf("-hang-end: %w", err)
		}
	}
	var ticks []time.Time
	got := map[string]map[time.Time]int{} // source -> tick -> readings
	err = rundir.ForEachPoint(*run, func(p *point.Point) error {
		switch p.Measurement {
		case schema.CollectorTick:
			ticks = append(ticks, p.Time)
		case schema.CollectorSource:
			src := p.Tag(schema.TagSource)
			if got[src] == nil {
				got[src] = map[time.Time]int{}
			}
			n, _ := p.Float(schema.FieldPoints)
			got[src][p.Time] = int(n)
		}
		return nil
	}, func(e *point.LineError) { fmt.Fprintln(os.Stderr, "hungsource: skipped:", e) })
	if err != nil {
		return err
	}
	if len(ticks) == 0 {
		return fmt.Errorf("%s: no collector_tick points", *run)
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Before(ticks[j]) })
	sources := make([]string, 0, len(got))
	for s := range got {
		sources = append(sources, s)
	}
	slices.Sort(sources)
	if start.IsZero() {
		return stalled(ticks, sources, got)
	}
	phase := func(t time.Time) int {
		switch {
		case t.Before(start):
			return 0
		case end.IsZero() || t.Before(end):
			return 1
		}
		return 2
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "source\tbefore hang\tduring hang\tafter hang\treadings/tick during (median)\tfirst reading after the end")
	for _, s := range sources {
		var with, all [3]int
		var during []float64
		first := "—"
		for _, t := range ticks {
			ph, n := phase(t), got[s][t]
			all[ph]++
			if n > 0 {
				with[ph]++
			}
			if ph == 1 {
				during = append(during, float64(n))
			}
			if ph == 2 && n > 0 && first == "—" {
				first = fmt.Sprintf("%.1f s", t.Sub(end).Seconds())
			}
		}
		slices.Sort(during)
		name := s
		if s == *hung {
			name += " (hung)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f\t%s\n", name, frac(with[0], all[0]), frac(with[1], all[1]),
			frac(with[2], all[2]), quantile(during, 0.5), first)
	}
	tw.Flush()
	fmt.Printf("ticks %d (%s to %s)\n", len(ticks), ticks[0].Format(time.TimeOnly), ticks[len(ticks)-1].Format(time.TimeOnly))
	return nil
}

// stalled prints, per source, the ticks without its readings and the
// longest run of them, and the ticks in which any source gave none.
func stalled(ticks []time.Time, sources []string, got map[string]map[time.Time]int) error {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "source\tticks\tticks without readings\tlongest run without\treadings/tick (median)")
	stalledAt := map[time.Time]bool{}
	for _, s := range sources {
		var missing, run, longest int
		var per []float64
		for _, t := range ticks {
			n := got[s][t]
			per = append(per, float64(n))
			if n > 0 {
				run = 0
				continue
			}
			stalledAt[t] = true
			missing++
			run++
			longest = max(longest, run)
		}
		slices.Sort(per)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\n", s, len(ticks), missing, longest, quantile(per, 0.5))
	}
	tw.Flush()
	fmt.Printf("stalled ticks (some source gave no reading): %d of %d\n", len(stalledAt), len(ticks))
	fmt.Printf("sources: %s\n", strings.Join(sources, ", "))
	return nil
}

func frac(a, b int) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d", a, b)
}

// quantile of sorted xs (0 for none).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}
