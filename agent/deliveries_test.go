package agent

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// An alert action that dropped alerts (its receiver down or too slow for a
// burst) shows on /metrics as counters per action and makes /healthz
// degraded, saying which action lost how many and when, until
// DeliveryLossWindow has passed; one that only delivered leaves it ok.
func TestAlertDeliveriesOnMetricsAndHealthz(t *testing.T) {
	c := collectors.New(collectors.Options{Interval: 50 * time.Millisecond, Host: "n1",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, []collectors.Source{&source{name: "nvml"}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()

	var mu sync.Mutex
	var lastDrop *time.Time
	now := time.Now()
	srv := httptest.NewServer(Handler(Options{Collector: c, Deliveries: func() []Delivery {
		mu.Lock()
		defer mu.Unlock()
		return []Delivery{
			{Action: "command", Name: "drain", Sent: 3},
			{Action: "webhook", Name: "ops", Queued: 5, InFlight: 1, Sent: 6, Coalesced: 2, Dropped: 14, LastDropped: lastDrop},
		}
	}, Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}}))
	defer srv.Close()
	var h Health
	for deadline := time.Now().Add(30 * time.Second); h.Ticks < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		now = time.Now()
		mu.Unlock()
		get(t, srv.URL+"/healthz", &h)
	}

	for _, tc := range []struct {
		name     string
		dropAgo  time.Duration // 0: never dropped
		degraded bool
	}{
		{"dropped a minute ago", time.Minute, true},
		{"dropped longer ago than the window", DeliveryLossWindow + time.Minute, false},
		{"never dropped", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			now = time.Now()
			lastDrop = nil
			if tc.dropAgo > 0 {
				d := now.Add(-tc.dropAgo)
				lastDrop = &d
			}
			mu.Unlock()
			var h Health
			get(t, srv.URL+"/healthz", &h)
			problem := strings.Join(h.Problems, "; ")
			if got := h.Status == "degraded"; got != tc.degraded || tc.degraded != strings.Contains(problem, "alert webhook ops: 14 alerts dropped") {
				t.Errorf("status %q, problems %q; want degraded %v, naming the webhook and its 14 drops", h.Status, problem, tc.degraded)
			}
			if len(h.AlertDeliveries) != 2 || h.AlertDeliveries[1].Dropped != 14 || h.AlertDeliveries[1].Name != "ops" {
				t.Errorf("alert_deliveries %+v", h.AlertDeliveries)
			}
		})
	}

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		family  string
		counter bool
		want    float64 // for webhook ops
	}{
		{"heatsink_alert_action_sent_total", true, 6},
		{"heatsink_alert_action_coalesced_total", true, 2},
		{"heatsink_alert_action_failed_total", true, 0},
		{"heatsink_alert_action_dropped_total", true, 14},
		{"heatsink_alert_action_queued", false, 5},
		{"heatsink_alert_action_in_flight", false, 1},
	} {
		f, ok := fams[tc.family]
		if !ok {
			t.Errorf("/metrics lacks %s", tc.family)
			continue
		}
		if isCounter := f.GetType().String() == "COUNTER"; isCounter != tc.counter || len(f.GetMetric()) != 2 {
			t.Errorf("%s: type %v with %d series; want counter %v, one series per action", tc.family, f.GetType(), len(f.GetMetric()), tc.counter)
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["action"] != "webhook" || labels["name"] != "ops" {
				continue
			}
			v := m.GetGauge().GetValue()
			if tc.counter {
				v = m.GetCounter().GetValue()
			}
			if v != tc.want {
				t.Errorf("%s{action=webhook,name=ops} = %v, want %v", tc.family, v, tc.want)
			}
		}
	}
}
