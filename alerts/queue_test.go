package alerts_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/point"
)

// countingServer is a healthy receiver that takes delay to answer, as a
// real one on a network does, and counts the alerts it received: one per
// request, or the length of the array for Alertmanager.
type countingServer struct {
	*httptest.Server
	mu     sync.Mutex
	alerts int
	posts  int
	gpus   map[string]int // gpu tag -> deliveries (generic format)
}

func newCountingServer(t *testing.T, delay time.Duration) *countingServer {
	c := &countingServer{gpus: map[string]int{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		time.Sleep(delay)
		n := 1
		var arr []json.RawMessage
		if json.Unmarshal(b, &arr) == nil {
			n = len(arr)
		}
		var g struct{ Tags map[string]string }
		_ = json.Unmarshal(b, &g)
		c.mu.Lock()
		c.alerts += n
		c.posts++
		if g.Tags != nil {
			c.gpus[g.Tags["gpu"]]++
		}
		c.mu.Unlock()
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *countingServer) counts() (alerts, posts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.alerts, c.posts
}

// hotGPUs is one tick in which n GPUs are over the rule's threshold.
func hotGPUs(n int, at time.Time) []point.Point {
	pts := make([]point.Point, n)
	for i := range pts {
		pts[i] = gpu(i, f{"temp_c", 88.0})
		pts[i].Time = at
	}
	return pts
}

// A burst of alerts in one tick (a whole rack overheating) must reach a
// healthy receiver in full, whatever the format: issue 28 saw 69 fire and
// only 32 arrive, the rest dropped by a cap on deliveries in flight.
func TestBurstOfAlertsAllReachAHealthyReceiver(t *testing.T) {
	for _, tc := range []struct {
		format string
		n      int
	}{
		{"generic", 69},
		{"slack", 69},
		{"alertmanager", 69},
		{"generic", 200},
		{"alertmanager", 200},
	} {
		t.Run(tc.format+"/"+strconv.Itoa(tc.n), func(t *testing.T) {
			srv := newCountingServer(t, 20*time.Millisecond)
			cfg := parseRules(t, `
alerts:
  webhooks:
    ops: {url: "`+srv.URL+`", format: `+tc.format+`}
  rules:
    - {name: hot, measurement: gpu, field: temp_c, threshold: {op: ">", value: 85}, actions: ["webhook:ops"]}`)
			e, err := alerts.NewEngine(cfg, alerts.Options{Logger: quietLogger(), Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Write(hotGPUs(tc.n, t0)); err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if got, posts := srv.counts(); got != tc.n {
				t.Errorf("receiver got %d alerts in %d posts, want %d", got, posts, tc.n)
			}
		})
	}
}

func hookRule(url, extra string) string {
	return `
alerts:
  webhooks:
    ops: {url: "` + url + `"` + extra + `}
  rules:
    - {name: hot, measurement: gpu, field: temp_c, threshold: {op: ">", value: 85}, actions: ["webhook:ops"]}`
}

// A receiver that hangs must not hold the tick: Write only queues.
func TestSlowReceiverDoesNotBlockTheTick(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	e, err := alerts.NewEngine(parseRules(t, hookRule(srv.URL, ", timeout: 1m")),
		alerts.Options{Logger: quietLogger(), CloseTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := e.Write(hotGPUs(200, t0)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Write took %v with a hung receiver", d)
	}
	// 4 workers hold 4 alerts; the rest wait, none dropped.
	waitFor(t, "the workers to take their alerts", func() bool { return e.Deliveries()[0].InFlight == 4 })
	if d := e.Deliveries()[0]; d.Queued != 196 || d.Dropped != 0 {
		t.Errorf("deliveries %+v, want 196 queued and none dropped", d)
	}
	err = e.Close()
	if err == nil || !strings.Contains(err.Error(), "4 webhook deliveries or commands still running") ||
		!strings.Contains(err.Error(), "196 queued not sent") {
		t.Errorf("Close: %v", err)
	}
}

// Alerts queued while the receiver is down reach it once it is back.
func TestDownThenUpReceiverGetsTheQueuedAlerts(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	srv := newCountingServer(t, 0)
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer flaky.Close()
	e, err := alerts.NewEngine(parseRules(t, hookRule(flaky.URL, ", retries: 20, backoff: 20ms")),
		alerts.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(hotGPUs(30, t0)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if got, _ := srv.counts(); got != 0 {
		t.Fatalf("%d alerts got through a receiver that was down", got)
	}
	down.Store(false)
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got, _ := srv.counts(); got != 30 {
		t.Errorf("receiver got %d alerts once back, want 30", got)
	}
	if d := e.Deliveries()[0]; d.Sent != 30 || d.Failed != 0 || d.Dropped != 0 {
		t.Errorf("deliveries %+v, want 30 sent", d)
	}
}

// At the queue's bound the oldest alert gives way, and the drop is logged
// and counted, never silent.
func TestFullQueueDropsTheOldestAndCountsIt(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := newCountingServer(t, 0)
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
			<-release
		default:
		}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer gate.Close()
	var logs syncBuffer
	e, err := alerts.NewEngine(parseRules(t, hookRule(gate.URL, "")), alerts.Options{
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), MaxInFlight: 1, QueueSize: 5})
	if err != nil {
		t.Fatal(err)
	}
	// gpu 0 fires first and holds the only worker at the receiver.
	if err := e.Write(hotGPUs(1, t0)); err != nil {
		t.Fatal(err)
	}
	<-entered
	// gpus 1..19 fire while it hangs: 5 fit, the 14 oldest give way.
	if err := e.Write(hotGPUs(20, t0.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	if d := e.Deliveries()[0]; d.Queued != 5 || d.InFlight != 1 || d.Dropped != 14 || time.Since(d.LastDropped) > time.Minute {
		t.Errorf("deliveries %+v, want 5 queued, 1 in flight, 14 dropped, the last just now", d)
	}
	close(release)
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	srv.mu.Lock()
	got := srv.gpus
	srv.mu.Unlock()
	want := map[string]int{"0": 1, "15": 1, "16": 1, "17": 1, "18": 1, "19": 1}
	if len(got) != len(want) {
		t.Errorf("receiver got gpus %v, want %v", got, want)
	}
	for k := range want {
		if got[k] != 1 {
			t.Errorf("receiver got gpus %v, want %v", got, want)
			break
		}
	}
	if d := e.Deliveries()[0]; d.Sent != 6 || d.Dropped != 14 {
		t.Errorf("deliveries %+v, want 6 sent and 14 dropped", d)
	}
	if l := logs.String(); strings.Count(l, "queue full") != 14 || !strings.Contains(l, "dropped_total=14") ||
		!strings.Contains(l, `series="gpu,gpu=1,`) {
		t.Errorf("drops not logged one by one with the total and the oldest first:\n%s", l)
	}
}

// Commands get the same queue: a burst runs every one of them.
func TestBurstOfCommandsAllRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ran")
	e, err := alerts.NewEngine(parseRules(t, `
alerts:
  commands:
    note: {argv: [sh, -c, 'echo "$HEATSINK_ALERT_TAG_GPU" >> "$1"', sh, `+out+`]}
  rules:
    - {name: hot, measurement: gpu, field: temp_c, threshold: {op: ">", value: 85}, actions: ["command:note"]}`),
		alerts.Options{Logger: quietLogger(), CloseTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(hotGPUs(69, t0)); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 69 {
		t.Errorf("%d commands ran, want 69", n)
	}
	if d := e.Deliveries(); len(d) != 1 || d[0].Action != "command note" || d[0].Sent != 69 {
		t.Errorf("deliveries %+v", d)
	}
}

func TestNegativeQueueOptionsAreRejected(t *testing.T) {
	for _, o := range []alerts.Options{{MaxInFlight: -1}, {QueueSize: -1}} {
		if _, err := alerts.NewEngine(alerts.Config{}, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// While a receiver hangs, reminders of alerts still queued are not queued
// again: they say nothing new and would crowd out real firings.
func TestRemindersDoNotPileUpBehindAHungReceiver(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := newCountingServer(t, 0)
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
			<-release
		default:
		}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	defer gate.Close()
	var now time.Time
	e, err := alerts.NewEngine(parseRules(t, hookRule(gate.URL, ", format: alertmanager, repeat: 10s")),
		alerts.Options{Logger: quietLogger(), MaxInFlight: 1, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= 100; i++ {
		now = t0.Add(time.Duration(i) * time.Second)
		n := 2 // gpu 1 fires a second after gpu 0, once gpu 0 holds the worker
		if i == 0 {
			n = 1
		}
		if err := e.Write(hotGPUs(n, now)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			<-entered
		}
	}
	// gpu 1's firing and one reminder of gpu 0; ten of each without.
	if d := e.Deliveries()[0]; d.Queued != 2 || d.Dropped != 0 || d.Coalesced < 9 || !d.LastDropped.IsZero() {
		t.Errorf("deliveries %+v, want 2 queued, the other reminders coalesced (counted), none dropped", d)
	}
	close(release)
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got, _ := srv.counts(); got != 3 {
		t.Errorf("receiver got %d alerts, want 3", got)
	}
}
