package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a real-time clock the test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestServer(t *testing.T, p Params, speed float64) (*httptest.Server, *fakeClock) {
	t.Helper()
	m := newModel(t, p, 1)
	s, err := NewServer(m, speed)
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Unix(1700000000, 0)}
	s.now = clk.now
	s.t0 = clk.now()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts, clk
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func send(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// --speed 3600: one real second is an hour of the tank's life.
func TestSpeedRunsSimulatedTimeFaster(t *testing.T) {
	ts, clk := newTestServer(t, DefaultParams(), 3600)
	clk.add(2 * time.Second)
	var tr Truth
	getJSON(t, ts.URL+"/sim/state", &tr)
	if tr.TimeS != 7200 {
		t.Errorf("simulated time %v s after 2 real seconds at speed 3600, want 7200", tr.TimeS)
	}
}

func TestRealTimeHasThePodsShape(t *testing.T) {
	ts, _ := newTestServer(t, DefaultParams(), 1)
	resp, err := http.Get(ts.URL + "/api/realTime")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Meta []any          `json:"meta"`
		Data map[string]any `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile("../testdata/submer_realtime.json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(fixture, &want); err != nil {
		t.Fatal(err)
	}
	for k, wv := range want.Data {
		gv, ok := got.Data[k]
		if !ok {
			t.Errorf("key %s missing", k)
			continue
		}
		if wt, gt := jsonType(wv), jsonType(gv); wt != gt {
			t.Errorf("key %s is %s, the real pod's is %s", k, gt, wt)
		}
	}
	if len(got.Data) != len(want.Data) {
		t.Errorf("%d keys, the real pod has %d", len(got.Data), len(want.Data))
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	case []any:
		return "list"
	case nil:
		return "null"
	}
	return "object"
}

func TestControlEndpoints(t *testing.T) {
	ts, clk := newTestServer(t, DefaultParams(), 60)
	code, body := send(t, "POST", ts.URL+"/sim/control", `{"load_w": 2400, "chilled_water": false, "demo": true, "mode": "maintenance", "setpoint_c": 35}`)
	if code != 200 {
		t.Fatalf("control: %d %s", code, body)
	}
	clk.add(10 * time.Second)
	var rt RealTime
	getJSON(t, ts.URL+"/api/realTime", &rt)
	if !rt.Data.Demo || rt.Data.Mode != "maintenance" || rt.Data.Setpoint != 35 || rt.Data.WF != 0 || len(rt.Data.Warnings) != 1 {
		t.Errorf("after control: %+v", rt.Data)
	}
	var tr Truth
	getJSON(t, ts.URL+"/sim/state", &tr)
	if tr.LoadW != 2400 || tr.WaterConnected || !tr.Demo {
		t.Errorf("truth after control: %+v", tr)
	}

	code, body = send(t, "PUT", ts.URL+"/sim/profile", "0 100\n1m 900\n")
	if code != 200 {
		t.Fatalf("profile: %d %s", code, body)
	}
	clk.add(2 * time.Second) // 120 simulated seconds
	getJSON(t, ts.URL+"/sim/state", &tr)
	if tr.LoadW != 900 || !tr.FollowsProfile {
		t.Errorf("following the profile 2 min in: %+v", tr)
	}
	if code, _ = send(t, "DELETE", ts.URL+"/sim/profile", ""); code != 200 {
		t.Fatalf("delete profile: %d", code)
	}
	getJSON(t, ts.URL+"/sim/state", &tr)
	if tr.LoadW != 900 || tr.FollowsProfile {
		t.Errorf("after leaving the profile: %+v", tr)
	}

	for _, bad := range []struct{ method, path, body, want string }{
		{"POST", "/sim/control", `{"load_w": -5}`, "load_w"},
		{"POST", "/sim/control", `{"load": 5}`, "unknown field"},
		{"POST", "/sim/control", `{"setpoint_c": 500}`, "setpoint_c"},
		{"POST", "/sim/control", `not json`, "control body"},
		{"PUT", "/sim/profile", "10 500\n", "first step must be at offset 0"},
	} {
		code, body := send(t, bad.method, ts.URL+bad.path, bad.body)
		if code != 400 || !strings.Contains(body, bad.want) {
			t.Errorf("%s %s %q: %d %s, want 400 naming %q", bad.method, bad.path, bad.body, code, body, bad.want)
		}
	}
	// A refused control changed nothing.
	getJSON(t, ts.URL+"/sim/state", &tr)
	if tr.LoadW != 900 || tr.SetpointC != 35 {
		t.Errorf("a refused control changed the model: %+v", tr)
	}
}

func TestNewServerRefusesBadSpeed(t *testing.T) {
	m := newModel(t, DefaultParams(), 1)
	for _, s := range []float64{0, -1, 1e9} {
		if _, err := NewServer(m, s); err == nil {
			t.Errorf("speed %g accepted", s)
		}
	}
}
