package alerts_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
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
