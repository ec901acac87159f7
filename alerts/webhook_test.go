package alerts_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/point"
)

// hookServer is a real HTTP server that records what it receives and
// answers with the statuses queued in fail first.
type hookServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	hdrs   []http.Header
	fail   []int
}

func newHookServer(t *testing.T, fail ...int) *hookServer {
	h := &hookServer{fail: fail}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, b)
		h.hdrs = append(h.hdrs, r.Header.Clone())
		code := http.StatusOK
		if len(h.fail) > 0 {
			code, h.fail = h.fail[0], h.fail[1:]
		}
		h.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookServer) received() ([][]byte, []http.Header) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]byte(nil), h.bodies...), append([]http.Header(nil), h.hdrs...)
}

// fireAndClear runs a rule with the webhook through one firing and one
// clearing, then closes the engine, which waits for the deliveries. The
// clearing is written once the server has seen afterFire requests, so the
// two arrive in order.
func fireAndClear(t *testing.T, srv *hookServer, afterFire int, hook string) {
	t.Helper()
	cfg := parseRules(t, `
alerts:
  webhooks:
    ops:
`+hook+`
  rules:
    - {name: gpu_hot, severity: critical, measurement: gpu, field: temp_c,
       threshold: {op: ">=", value: slowdown_c - 5}, actions: [log, point, "webhook:ops"]}`)
	var now time.Time
	e, err := alerts.NewEngine(cfg, alerts.Options{Logger: quietLogger(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{88, 80} {
		now = t0.Add(time.Duration(i) * time.Second)
		p := gpu(0, f{"temp_c", v}, f{"slowdown_c", 90.0})
		p.Time = now
		e.Write([]point.Point{p})
		if i == 0 {
			waitFor(t, "the firing's delivery", func() bool { b, _ := srv.received(); return len(b) >= afterFire })
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWebhookIsRetriedAfterA500(t *testing.T) {
	srv := newHookServer(t, 500, 503)
	fireAndClear(t, srv, 3, "      url: "+srv.URL+"/hook\n      backoff: 10ms\n      retries: 3\n      headers: {Authorization: Bearer t0k3n}")
	bodies, hdrs := srv.received()
	// The firing: two failures, then delivered; the clearing at once.
	if len(bodies) != 4 {
		t.Fatalf("%d requests, want 4: %s", len(bodies), bodies)
	}
	if hdrs[0].Get("Authorization") != "Bearer t0k3n" || hdrs[0].Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", hdrs[0])
	}
	var fired, cleared struct {
		Rule, State, Severity, Measurement, Field, Series, Message string
		Tags                                                       map[string]string
		Value, Threshold                                           float64
		StartsAt                                                   time.Time  `json:"starts_at"`
		EndsAt                                                     *time.Time `json:"ends_at"`
	}
	if err := json.Unmarshal(bodies[2], &fired); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(bodies[3], &cleared); err != nil {
		t.Fatal(err)
	}
	if fired.Rule != "gpu_hot" || fired.State != "firing" || fired.Severity != "critical" || fired.Tags["gpu"] != "0" ||
		fired.Value != 88 || fired.Threshold != 85 || !fired.StartsAt.Equal(t0) || fired.EndsAt != nil {
		t.Errorf("firing payload %s", bodies[2])
	}
	if cleared.State != "cleared" || cleared.EndsAt == nil || !cleared.EndsAt.Equal(t0.Add(time.Second)) || !cleared.StartsAt.Equal(t0) {
		t.Errorf("clearing payload %s", bodies[3])
	}
}

func TestWebhookGivesUpOnAClientError(t *testing.T) {
	srv := newHookServer(t, 400, 400)
	fireAndClear(t, srv, 1, "      url: "+srv.URL+"\n      backoff: 10ms")
	if bodies, _ := srv.received(); len(bodies) != 2 {
		t.Errorf("%d requests, want 2 (a 400 is not retried)", len(bodies))
	}
}

func TestSlackPayload(t *testing.T) {
	srv := newHookServer(t)
	fireAndClear(t, srv, 1, "      url: "+srv.URL+"\n      format: slack")
	bodies, _ := srv.received()
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	var m map[string]any
	if err := json.Unmarshal(bodies[0], &m); err != nil {
		t.Fatal(err)
	}
	text, _ := m["text"].(string)
	if len(m) != 1 || !strings.Contains(text, "[CRITICAL] FIRING gpu_hot on n1") || !strings.Contains(text, "temp_c = 88 >= 85") {
		t.Errorf("slack payload %s", bodies[0])
	}
	if !strings.Contains(string(bodies[1]), "cleared gpu_hot") {
		t.Errorf("slack clearing %s", bodies[1])
	}
}

func TestAlertmanagerPayload(t *testing.T) {
	srv := newHookServer(t)
	fireAndClear(t, srv, 1, "      url: "+srv.URL+"/api/v2/alerts\n      format: alertmanager")
	bodies, _ := srv.received()
	if len(bodies) != 2 {
		t.Fatalf("%d requests", len(bodies))
	}
	// Alertmanager's /api/v2/alerts takes an array of postableAlert.
	type postable struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
		StartsAt    *time.Time        `json:"startsAt"`
		EndsAt      *time.Time        `json:"endsAt"`
	}
	var fired, cleared []postable
	if err := json.Unmarshal(bodies[0], &fired); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(bodies[1], &cleared); err != nil {
		t.Fatal(err)
	}
	if len(fired) != 1 || len(cleared) != 1 {
		t.Fatalf("payloads %s %s", bodies[0], bodies[1])
	}
	a := fired[0]
	if a.Labels["alertname"] != "gpu_hot" || a.Labels["severity"] != "critical" || a.Labels["gpu"] != "0" ||
		a.Labels["host"] != "n1" || a.Annotations["value"] != "88" || a.Annotations["summary"] == "" ||
		a.StartsAt == nil || !a.StartsAt.Equal(t0) || a.EndsAt != nil {
		t.Errorf("firing alert %s", bodies[0])
	}
	// The clearing is the same alert (same labels) with endsAt set.
	c := cleared[0]
	if c.EndsAt == nil || !c.EndsAt.Equal(t0.Add(time.Second)) || c.Labels["alertname"] != "gpu_hot" || len(c.Labels) != len(a.Labels) {
		t.Errorf("resolved alert %s", bodies[1])
	}
}

func TestWebhookRepeatsWhileFiring(t *testing.T) {
	srv := newHookServer(t)
	cfg := parseRules(t, `
alerts:
  webhooks:
    am: {url: "`+srv.URL+`", format: alertmanager, repeat: 10s}
  rules:
    - {name: hot, measurement: gpu, field: temp_c, threshold: {op: ">", value: 85}, actions: ["webhook:am"]}`)
	var now time.Time
	e, err := alerts.NewEngine(cfg, alerts.Options{Logger: quietLogger(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= 25; i++ {
		now = t0.Add(time.Duration(i) * time.Second)
		p := gpu(0, f{"temp_c", 88.0})
		p.Time = now
		e.Write([]point.Point{p})
		// Real ticks are a second apart, ample for a loopback post; here,
		// wait for it, or the reminder would find the firing still queued
		// and (rightly) not queue again.
		waitFor(t, "the delivery", func() bool { d := e.Deliveries()[0]; return d.Queued+d.InFlight == 0 })
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Sent at 0 s, repeated at 10 s and 20 s. Count alerts, not requests:
	// Alertmanager's body is a list, and several may share one.
	bodies, _ := srv.received()
	n := 0
	for _, b := range bodies {
		var l []json.RawMessage
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatalf("body %s: %v", b, err)
		}
		n += len(l)
	}
	if n != 3 {
		t.Errorf("%d alerts in %d deliveries in 25 s of firing, want 3", n, len(bodies))
	}
}

func TestCloseWaitsBoundedlyForAHangingWebhook(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	cfg := parseRules(t, `
alerts:
  webhooks:
    slow: {url: "`+srv.URL+`", timeout: 1m}
  rules:
    - {name: hot, measurement: gpu, field: temp_c, threshold: {op: ">", value: 85}, actions: ["webhook:slow"]}`)
	e, err := alerts.NewEngine(cfg, alerts.Options{Logger: quietLogger(), CloseTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := e.Write([]point.Point{gpu(0, f{"temp_c", 88.0})}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Write blocked %v on the webhook", d)
	}
	err = e.Close()
	if err == nil || !strings.Contains(err.Error(), "1 webhook deliveries or commands") {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %v", d)
	}
}
