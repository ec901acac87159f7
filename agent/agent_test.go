package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/collectors/prom"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

type source struct {
	name string
	fail bool
}

func (s *source) Name() string                       { return s.name }
func (s *source) Discover(ctx context.Context) error { return nil }
func (s *source) Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error) {
	if s.fail {
		return buf, errors.New("sensor unplugged")
	}
	p := point.New("gpu", t)
	p.AddTag("gpu", "0").AddFloat("temp_c", 55)
	return append(buf, p), nil
}

func get(t *testing.T, url string, into any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %v: %s", url, err, b)
		}
	}
	return resp.StatusCode
}

func TestHealthzMetricsAndAlertsFromARunningCollector(t *testing.T) {
	metrics := prom.New(prom.Options{})
	c := collectors.New(collectors.Options{Interval: 100 * time.Millisecond, Host: "n1",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		[]collectors.Source{&source{name: "nvml"}, &source{name: "pdu:rack1", fail: true}}, []collectors.Sink{metrics})
	var clock struct {
		sync.Mutex
		skew time.Duration
	}
	srv := httptest.NewServer(Handler(Options{
		Collector: c, Metrics: metrics,
		Alerts: func() []Rule {
			v := 91.0
			return []Rule{{Name: "hot", Severity: "critical", Alerts: []Alert{{Measurement: "gpu", Tags: map[string]string{"gpu": "0"}, Firing: true, Value: &v}}}}
		},
		Jobs: func() []string { return []string{"4242"} },
		Now: func() time.Time {
			clock.Lock()
			defer clock.Unlock()
			return time.Now().Add(clock.skew)
		},
	}))
	defer srv.Close()

	var h Health
	if code := get(t, srv.URL+"/healthz", &h); code != http.StatusServiceUnavailable || h.Status != "starting" {
		t.Errorf("before the first tick: %d %q, want 503 starting", code, h.Status)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for h.Ticks < 3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		get(t, srv.URL+"/healthz", &h)
	}
	if code := get(t, srv.URL+"/healthz", &h); code != http.StatusOK || h.Status != "degraded" {
		t.Errorf("one source failing: %d %q, want 200 degraded", code, h.Status)
	}
	if len(h.Sources) != 2 || !h.Sources[0].OK || h.Sources[0].LastOK == nil || h.Sources[1].OK || !strings.Contains(h.Sources[1].LastError, "unplugged") {
		t.Errorf("sources %+v", h.Sources)
	}
	if len(h.Jobs) != 1 || h.Jobs[0] != "4242" || h.IntervalS != 0.1 {
		t.Errorf("jobs %v, interval %v", h.Jobs, h.IntervalS)
	}

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"heatsink_gpu_temperature_celsius", "heatsink_collector_source_ok", "heatsink_collector_tick_lag_seconds",
		"heatsink_collector_last_tick_timestamp_seconds", "heatsink_agent_process_cpu_seconds_total", "go_goroutines"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if v := fams["heatsink_collector_last_tick_timestamp_seconds"].GetMetric()[0].GetGauge().GetValue(); time.Since(time.Unix(int64(v), 0)) > time.Minute {
		t.Errorf("last tick timestamp %v is not recent", v)
	}

	var rules []Rule
	if code := get(t, srv.URL+"/alerts", &rules); code != http.StatusOK || len(rules) != 1 || !rules[0].Alerts[0].Firing || *rules[0].Alerts[0].Value != 91 {
		t.Errorf("/alerts %d %+v", code, rules)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	clock.Lock()
	clock.skew = time.Second
	clock.Unlock()
	if code := get(t, srv.URL+"/healthz", &h); code != http.StatusServiceUnavailable || h.Status != "stalled" {
		t.Errorf("a second after the last tick at 100ms: %d %q, want 503 stalled", code, h.Status)
	}
}

// memSink records what reaches it, and can be slow to close.
type memSink struct {
	mu         sync.Mutex
	points     []point.Point
	closeDelay time.Duration
	closed     bool
}

func (m *memSink) Write(ps []point.Point) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errors.New("write after close")
	}
	m.points = append(m.points, ps...)
	return nil
}
func (m *memSink) Flush() error { return nil }
func (m *memSink) Close() error {
	time.Sleep(m.closeDelay)
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return nil
}
func (m *memSink) n() int { m.mu.Lock(); defer m.mu.Unlock(); return len(m.points) }

func TestHandoffHoldsWritesWhileTheSinkIsReplaced(t *testing.T) {
	oldSink := &memSink{closeDelay: 200 * time.Millisecond}
	newSink := &memSink{}
	h := NewHandoff(oldSink)
	stop := make(chan struct{})
	var written int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the collector's ticks go on during the replacement
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			p := point.New("gpu", time.Now())
			p.AddFloat("temp_c", float64(written))
			if err := h.Write([]point.Point{p}); err != nil {
				t.Error(err)
				return
			}
			written++
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(20 * time.Millisecond)
	if err := h.Replace(func() (collectors.Sink, error) { return newSink, nil }, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	if got := oldSink.n() + newSink.n(); got != written || oldSink.n() == 0 || newSink.n() == 0 {
		t.Fatalf("old %d + new %d points, %d written", oldSink.n(), newSink.n(), written)
	}
	if h.Sink() != collectors.Sink(newSink) {
		t.Error("the new sink is not in use")
	}
}

func TestHandoffFallsBackWhenTheNewSinkCannotOpen(t *testing.T) {
	h := NewHandoff(&memSink{})
	again := &memSink{}
	err := h.Replace(func() (collectors.Sink, error) { return nil, errors.New("bucket not found") },
		func() (collectors.Sink, error) { return again, nil })
	if err == nil || !strings.Contains(err.Error(), "bucket not found") {
		t.Errorf("error %v, want the reason the new sink failed", err)
	}
	p := point.New("gpu", time.Now())
	p.AddFloat("temp_c", 1)
	h.Write([]point.Point{p})
	if again.n() != 1 {
		t.Error("writes do not reach the reopened sink")
	}
}

// A handoff standing for no sink yet (a sink a reload turned on) holds
// what is written until a Replace opens one, keeps holding when the open
// fails (there is no old sink to fall back to), and says when it has
// closed; a sink opened after it closed is closed, not leaked.
func TestHandoffWithoutASinkHoldsUntilOneOpens(t *testing.T) {
	h := NewHandoff(nil)
	p := point.New("gpu", time.Now())
	p.AddFloat("temp_c", 1)
	h.Write([]point.Point{p, p})
	if err := h.Replace(func() (collectors.Sink, error) { return nil, errors.New("spool in use") }, nil); err == nil || !strings.Contains(err.Error(), "spool in use") {
		t.Errorf("error %v, want the reason the sink failed to open", err)
	}
	h.Write([]point.Point{p})
	s := &memSink{}
	if err := h.Replace(func() (collectors.Sink, error) { return s, nil }, nil); err != nil {
		t.Fatal(err)
	}
	if s.n() != 3 {
		t.Errorf("the sink got %d points once open, want the 3 held", s.n())
	}
	select {
	case <-h.Closed():
		t.Fatal("Closed before Close")
	default:
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	<-h.Closed()
	late := &memSink{}
	if err := h.Replace(func() (collectors.Sink, error) { return late, nil }, nil); err == nil || late.n() != 0 {
		t.Errorf("a Replace after Close: err %v; want an error and nothing opened", err)
	}

	// Closed while its Replace opens: what opened is closed.
	h = NewHandoff(nil)
	opened := &memSink{}
	h.Replace(func() (collectors.Sink, error) { h.Close(); return opened, nil }, nil)
	if !opened.closed {
		t.Error("a sink opened by a Replace the Close overtook was left open")
	}
}
