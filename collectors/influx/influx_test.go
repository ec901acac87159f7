package influx

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/collectors/influx/influxtest"
	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/point"
)

// genSource is a test source: every tick, three devices with values that
// encode the tick, so a lost or altered point shows.
type genSource struct{ n int }

func (g *genSource) Name() string                       { return "gen" }
func (g *genSource) Discover(ctx context.Context) error { return nil }
func (g *genSource) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	g.n++
	for dev := 0; dev < 3; dev++ {
		p := point.New("gpu", t)
		p.AddTag("gpu", fmt.Sprint(dev)).AddTag("uuid", fmt.Sprintf("GPU-%d", dev))
		p.AddFloat("temp_c", 30+float64(g.n)+float64(dev)/10)
		p.AddInt("pstate", int64(dev))
		p.AddUint("energy_j", uint64(1000*g.n+dev))
		p.AddBool("throttle_thermal", g.n%2 == 0)
		buf = append(buf, p)
	}
	return buf, nil
}

// memSink keeps a deep copy of every point the collector wrote.
type memSink struct {
	mu     sync.Mutex
	points []point.Point
}

func (m *memSink) Write(points []point.Point) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range points {
		p.Tags = slices.Clone(p.Tags)
		p.Fields = slices.Clone(p.Fields)
		m.points = append(m.points, p)
	}
	return nil
}
func (m *memSink) Flush() error { return nil }
func (m *memSink) Close() error { return nil }

func (m *memSink) all() []point.Point {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.points)
}

func quietLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tWriter{t}, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

func testOptions(t *testing.T, srv *influxtest.Server) Options {
	o := Options{
		Config: Config{
			URL:              srv.URL(),
			Bucket:           influxtest.Bucket,
			SpoolDir:         t.TempDir(),
			MaxRetryInterval: time.Second,
			FlushInterval:    200 * time.Millisecond,
		},
		Logger:           quietLogger(t),
		MinRetryInterval: 100 * time.Millisecond,
		DrainTimeout:     60 * time.Second,
	}
	if srv.Token != "" {
		o.Token = secret.Literal(srv.Token)
	}
	return o
}

// assertLanded checks that every point written is stored, with its values,
// and that nothing else is.
func assertLanded(t *testing.T, srv *influxtest.Server, written []point.Point) {
	t.Helper()
	srv.AssertHolds(t, written, true)
}

func TestCollectionLandsPointForPoint(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t)
	o := testOptions(t, srv)
	o.BatchSize = 7 // several requests per tick
	sink, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	mem := &memSink{}
	c := collectors.New(collectors.Options{Interval: 100 * time.Millisecond, Ticks: 30, Host: "node1", Logger: quietLogger(t)},
		[]collectors.Source{&genSource{}}, []collectors.Sink{mem, sink})
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	written := mem.all()
	// 30 ticks of 3 gpu points, a collector_source and a collector_tick.
	if len(written) != 30*5 {
		t.Fatalf("collector wrote %d points, want 150", len(written))
	}
	assertLanded(t, srv, written)
	if st := sink.Stats(); st.SentPoints != int64(len(written)) || st.Spool.UnsentPoints != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestOutageLosesNothing(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t)
	o := testOptions(t, srv)
	o.MetricsEvery = 200 * time.Millisecond
	sink, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	mem := &memSink{}
	c := collectors.New(collectors.Options{Interval: 100 * time.Millisecond, Host: "node1", Logger: quietLogger(t)},
		[]collectors.Source{&genSource{}}, []collectors.Sink{mem, sink})
	// The sink reports itself through the collector's self-metric path.
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx) }()

	time.Sleep(time.Second)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	// A real stop: the server is gone, writes fail, the spool grows.
	time.Sleep(6 * time.Second)
	if st := sink.Stats(); st.Retries == 0 || st.Spool.UnsentPoints < 100 {
		t.Errorf("during the outage: %+v; want retries and a backlog", st)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	cancel()
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	written := mem.all()
	assertLanded(t, srv, written)

	// The sink's own reports saw the outage: a backlog and a failed write.
	var sawBacklog, sawFailure bool
	for _, p := range written {
		if p.Measurement != "influx_sink" {
			continue
		}
		if v, _ := p.Float("spool_points"); v > 0 {
			if _, ok := p.Float("oldest_unsent_s"); ok {
				sawBacklog = true
			}
		}
		if ok, _ := p.Float("ok"); ok == 0 {
			sawFailure = true
		}
	}
	if !sawBacklog || !sawFailure {
		t.Errorf("influx_sink reports: backlog seen %v, failure seen %v", sawBacklog, sawFailure)
	}
}

// What a sink could not send while its server was down is sent by the
// next sink for the same destination.
func TestSpoolLeftByOneSinkIsSentByTheNext(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t)
	o := testOptions(t, srv)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	down := o
	down.DrainTimeout = 300 * time.Millisecond
	first, err := New(down)
	if err != nil {
		t.Fatal(err)
	}
	var pts []point.Point
	for i := 0; i < 500; i++ {
		p := point.New("cpu", time.Unix(1700000000, int64(i)))
		p.AddTag("host", "n1").AddFloat("usage_pct", float64(i))
		pts = append(pts, p)
	}
	if err := first.Write(pts); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if n, _ := srv.Count(); n != 0 {
		t.Fatalf("%d points reached a server the sink could not reach", n)
	}
	second, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	assertLanded(t, srv, pts)
}

func TestRejectedPointsAreCountedAndDoNotBlock(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t)
	sink, err := New(testOptions(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int64) time.Time { return time.Unix(1700000000+s, 0) }
	a := point.New("tank", at(0))
	a.AddTag("host", "n1").AddFloat("mode", 1)
	// Same field as a string: InfluxDB refuses it (field type conflict).
	b := point.New("tank", at(1))
	b.AddTag("host", "n1").AddString("mode", "normal")
	c := point.New("tank", at(2))
	c.AddTag("host", "n1").AddFloat("mode", 3)
	for _, batch := range [][]point.Point{{a}, {b}, {c}} {
		if err := sink.Write(batch); err != nil {
			t.Fatal(err)
		}
		if err := sink.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	sink.Close()
	if st := sink.Stats(); st.RejectedPoints != 1 || st.SentPoints != 2 {
		t.Errorf("stats %+v; want 1 rejected, 2 sent", st)
	}
	assertLanded(t, srv, []point.Point{a, c})
}

// With the spool full and the server down, points wait in memory while
// they fit and are lost after that: counted, and alerted on.
func TestFullSpoolWithTheServerDownIsACountedLossAndAnAlert(t *testing.T) {
	t.Parallel()
	o := Options{
		Config: Config{
			URL: "http://" + closedPort(t), Bucket: "db", SpoolDir: t.TempDir(),
			SpoolMaxBytes: 1 << 20, MaxRetryInterval: time.Second,
		},
		Logger:         quietLogger(t),
		MetricsEvery:   50 * time.Millisecond,
		DrainTimeout:   100 * time.Millisecond,
		DirectMaxBytes: 64 << 10,
	}
	sink, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]point.Point, 100)
	for i := range batch {
		batch[i] = point.New("cpu", time.Unix(1700000000, int64(i)))
		batch[i].AddTag("host", "n1").AddTag("cpu", fmt.Sprintf("cpu%d", i)).AddFloat("usage_pct", float64(i))
	}
	for i := 0; i < 400; i++ { // ~2.5 MB into a 1 MiB spool
		if err := sink.Write(batch); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	st := sink.Stats()
	if st.LostPoints == 0 || st.DirectPoints != 0 || st.LostPoints+st.Spool.UnsentPoints+st.WaitingPoints != 40000 {
		t.Fatalf("stats %+v: want losses, none sent directly, and lost + unsent + waiting = 40000", st)
	}
	// The collector asks on every tick; here the test asks.
	deadline := time.Now().Add(10 * time.Second)
	var reports []point.Point
	for {
		reports = sink.SelfMetrics(time.Now(), reports)
		var firing *point.Point
		for i := range reports {
			if reports[i].Measurement == "alert" && reports[i].Tag("rule") == "influx_spool_full" {
				firing = &reports[i]
			}
		}
		if firing != nil {
			if v, _ := firing.Field("state"); v.StringV() != "firing" {
				t.Errorf("alert %s", firing)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no influx_spool_full alert reported")
		}
		time.Sleep(20 * time.Millisecond)
	}
	sink.Close()
}

func TestCheckNamesWhatIsWrong(t *testing.T) {
	t.Parallel()
	srv := influxtest.Start(t, influxtest.Options{Auth: true})
	cases := []struct {
		name, url, bucket, token, want string
	}{
		{"unreachable", "http://" + closedPort(t), influxtest.Bucket, srv.Token, "unreachable"},
		{"wrong token", srv.URL(), influxtest.Bucket, "admin:wrong", "401"},
		{"missing bucket", srv.URL(), "nosuchdb/autogen", srv.Token, `bucket "nosuchdb/autogen" not found`},
		{"all good", srv.URL(), influxtest.Bucket, srv.Token, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sink, err := New(Options{Config: Config{URL: tc.url, Bucket: tc.bucket, Token: secret.Literal(tc.token), SpoolDir: t.TempDir()},
				Logger: quietLogger(t), DrainTimeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer sink.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err = sink.Check(ctx)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Check: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Check: %v, want an error mentioning %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "heatsink-test"):
				t.Errorf("error shows the token: %v", err)
			}
		})
	}
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
