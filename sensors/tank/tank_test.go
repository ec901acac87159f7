package tank

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/sensors/tank/sim"
)

func newSource(t *testing.T, cfg Config) *Source {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sampleOnce(t *testing.T, s *Source) ([]point.Point, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.Sample(ctx, time.Unix(1700000000, 0), nil)
}

func startSim(t *testing.T, p sim.Params) (*httptest.Server, *sim.Server) {
	t.Helper()
	m, err := sim.New(p, 1)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.NewServer(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts, srv
}

// The source against heatsink's own tank simulator over real HTTP: it reads
// every field, and sees demo mode and a mode other than normal when the
// simulator's controller is switched into them.
func TestSubmerSourceAgainstTheSimulator(t *testing.T) {
	p := sim.DefaultParams()
	p.WaterFlowUnit = "m3/h"
	ts, srv := startSim(t, p)
	s := newSource(t, Config{Name: "pod1", URL: ts.URL, WaterFlowUnit: "m3/h"})
	if err := s.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := s.Describe()[0]; !strings.Contains(d, "pod1 submer "+ts.URL+"/api/realTime (mode normal, setpoint 40 °C") {
		t.Errorf("Describe = %q", d)
	}
	pts, err := sampleOnce(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 1 || pts[0].Measurement != "tank" || pts[0].Tag("tank") != "pod1" || pts[0].Tag("vendor") != "submer" {
		t.Fatalf("points %v", pts)
	}
	p0 := pts[0]
	if len(p0.Fields) != 25 {
		t.Errorf("%d fields, want 25: %s", len(p0.Fields), p0.String())
	}
	if v, _ := p0.Float("water_flow_lpm"); v < 28 || v > 32 {
		t.Errorf("water flow %v L/min (served in m³/h), want about 30", v)
	}
	if v, _ := p0.Float("coolant_temp_c"); v < 24.5 || v > 25.5 {
		t.Errorf("coolant %v °C, want about 25", v)
	}

	srv.Do(func(m *sim.Model) {
		if err := (sim.Control{Demo: ptr(true), Mode: ptr("maintenance")}).Apply(m); err != nil {
			t.Fatal(err)
		}
	})
	pts, err = sampleOnce(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := pts[0].Field("demo"); !v.BoolV() {
		t.Errorf("demo mode not seen: %s", pts[0].String())
	}
	if v, _ := pts[0].Field("mode"); v.StringV() != "maintenance" {
		t.Errorf("mode %v, want maintenance", v)
	}
}

func ptr[T any](v T) *T { return &v }

// A pod that answers badly costs the tick, with an error that says how,
// and never takes longer than the timeout.
func TestErrorPaths(t *testing.T) {
	good, err := os.ReadFile("testdata/submer_realtime.json")
	if err != nil {
		t.Fatal(err)
	}
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"500", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "controller busy", http.StatusInternalServerError)
		}, "HTTP 500 Internal Server Error: \"controller busy\""},
		{"hangs", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}, "no complete answer after"},
		{"hangs mid-body", func(w http.ResponseWriter, r *http.Request) {
			w.Write(good[:40])
			w.(http.Flusher).Flush()
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}, "no complete answer after"},
		{"garbage", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("\x00\x01garbage{{{"))
		}, "not JSON"},
		{"100 MB body, chunked", func(w http.ResponseWriter, r *http.Request) {
			streamZeros(w, 100<<20)
		}, "over the 1048576-byte limit"},
		{"100 MB body, with length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(100<<20))
			streamZeros(w, 100<<20)
		}, "answer of 104857600 bytes is over the 1048576-byte limit"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://example.invalid/", http.StatusFound)
		}, "redirected to http://example.invalid/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(tt.handler)
			defer ts.Close()
			s := newSource(t, Config{Name: "pod1", URL: ts.URL})
			t0 := time.Now()
			pts, err := sampleOnce(t, s)
			el := time.Since(t0)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "tank pod1: ") {
				t.Errorf("error %q does not name the tank", err)
			}
			if len(pts) != 0 {
				t.Errorf("points from a bad answer: %v", pts)
			}
			if el > 3*time.Second {
				t.Errorf("took %v with a 500ms timeout", el)
			}
			if strings.HasPrefix(tt.name, "hangs") && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("timeout error %v does not wrap DeadlineExceeded", err)
			}
		})
	}
	t.Run("nothing listening", func(t *testing.T) {
		ts := httptest.NewServer(http.NotFoundHandler())
		url := ts.URL
		ts.Close()
		s := newSource(t, Config{Name: "pod1", URL: url})
		err := s.Discover(context.Background())
		if err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("Discover = %v, want connection refused", err)
		}
	})
}

func streamZeros(w http.ResponseWriter, n int) {
	chunk := make([]byte, 64<<10)
	for sent := 0; sent < n; sent += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// A generic CDU behind https with its own CA, basic auth and a token header.
func TestHTTPJSONWithTLSAndAuth(t *testing.T) {
	body := `{"status":{"supply":{"temp":95.0},"return_temp":30.25,"pumps":[{"rpm":2900,"on":1},{"rpm":0,"on":false}],
		"flow_m3h":6,"state":"RUN","alarm":null}}`
	var sawAuth, sawToken string
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		sawAuth, sawToken = u+":"+p, r.Header.Get("X-Token")
		if p != "cdu-password" {
			http.Error(w, "unauthorised", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, body)
	}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused-certificate case is expected
	ts.StartTLS()
	defer ts.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HEATSINK_TEST_CDU_TOKEN", "tok-123")
	cfg := Config{Name: "cdu1", Kind: KindHTTPJSON, URL: ts.URL + "/status", Vendor: "acme",
		TLS:       TLS{CAFile: ca},
		BasicAuth: &BasicAuth{Username: "heatsink", Password: secret.Literal("cdu-password")},
		Headers:   map[string]secret.Value{"X-Token": {Env: "HEATSINK_TEST_CDU_TOKEN"}},
		Fields: []Field{
			{Path: "status.supply.temp", Field: "coolant_in_c", Unit: "F"},
			{Path: "status.return_temp", Field: "coolant_out_c"},
			{Path: "status.pumps.0.rpm", Field: "pump1_rpm"},
			{Path: "status.pumps.0.on", Field: "pump1_on", Type: "bool"},
			{Path: "status.pumps.1.on", Field: "pump2_on", Type: "bool"},
			{Path: "status.flow_m3h", Field: "coolant_flow_lpm", Unit: "m3/h"},
			{Path: "status.state", Field: "mode", Type: "string"},
			{Path: "status.alarm", Field: "alarm_c"},
			{Path: "status.level", Field: "level_pct", Optional: true},
		}}
	s := newSource(t, cfg)
	if err := s.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sawAuth != "heatsink:cdu-password" || sawToken != "tok-123" {
		t.Errorf("server saw auth %q token %q", sawAuth, sawToken)
	}
	pts, err := sampleOnce(t, s)
	if err != nil {
		t.Fatal(err)
	}
	got := pts[0].String()
	for _, want := range []string{"tank,tank=cdu1,vendor=acme ", "coolant_in_c=35", "coolant_out_c=30.25", "pump1_rpm=2900",
		"pump1_on=true", "pump2_on=false", "coolant_flow_lpm=100", `mode="RUN"`} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %s", got, want)
		}
	}
	if strings.Contains(got, "alarm_c") || strings.Contains(got, "level_pct") {
		t.Errorf("null or missing optional value written: %s", got)
	}

	t.Run("without the CA the certificate is refused", func(t *testing.T) {
		c := cfg
		c.TLS = TLS{}
		err := newSource(t, c).Discover(context.Background())
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("Discover = %v, want a certificate error", err)
		}
	})
	t.Run("insecure_skip_verify accepts it", func(t *testing.T) {
		c := cfg
		c.TLS = TLS{InsecureSkipVerify: true}
		if err := newSource(t, c).Discover(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a wrong password is refused without showing it", func(t *testing.T) {
		c := cfg
		c.BasicAuth = &BasicAuth{Username: "heatsink", Password: secret.Literal("s3cret-wrong")}
		err := newSource(t, c).Discover(context.Background())
		if err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "s3cret-wrong") {
			t.Fatalf("Discover = %v", err)
		}
	})
}

func TestHTTPJSONBadAnswers(t *testing.T) {
	fields := []Field{
		{Path: "a.temp", Field: "coolant_temp_c"},
		{Path: "a.on", Field: "pump1_on", Type: "bool"},
		{Path: "a.mode", Field: "mode", Type: "string"},
		{Path: "list.1", Field: "water_in_c"},
	}
	dec, err := jsonDecoder(fields)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ body, want string }{
		{`{"a":{"temp":"20","on":true,"mode":"x"},"list":[1,2]}`, `a.temp: the string "20" is not a number`},
		{`{"a":{"temp":20,"on":2,"mode":"x"},"list":[1,2]}`, "a.on: 2 is not a boolean"},
		{`{"a":{"temp":20,"on":true,"mode":5},"list":[1,2]}`, "a.mode: the number 5 is not a string"},
		{`{"a":{"temp":20,"on":true,"mode":"x"},"list":[1]}`, "partial answer: no list.1"},
		{`{"a":{"temp":20,"on":true,"mode":"x"},"list":{"1":3}}`, ""},
		{`{"a":{"temp":20,"on":true,"mode":"x"},"list":"no"}`, "list is the string \"no\", not an object or list"},
		{`{"a":5,"list":[1,2]}`, "a is the number 5"},
		{`{"a":{}}`, "partial answer: no a.temp, a.on, a.mode, list.1"},
		{`{"a":{"temp":1e300,"on":true,"mode":"x"},"list":[1,2]}`, "a.temp: coolant_temp_c: 1e+300 is outside the physical range -50..150"},
		{`[]`, `the answer is a list, indexed by number, not "a"`},
		{`{"a":{"temp":1e999}}`, "not a representable number"},
		{`{`, "not JSON"},
	}
	for _, tt := range tests {
		var p point.Point
		err := dec([]byte(tt.body), &p)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.body, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.body, err, tt.want)
		}
		if len(p.Fields) != 0 {
			t.Errorf("%s: fields written: %v", tt.body, p.Fields)
		}
	}
}

func FuzzHTTPJSONDecode(f *testing.F) {
	f.Add([]byte(`{"a":{"temp":20,"on":true,"mode":"x"},"list":[1,2]}`))
	f.Add([]byte(`{"a":null}`))
	dec, err := jsonDecoder([]Field{
		{Path: "a.temp", Field: "coolant_temp_c", Unit: "F"},
		{Path: "a.on", Field: "pump1_on", Type: "bool", Optional: true},
		{Path: "a.mode", Field: "mode", Type: "string", Optional: true},
		{Path: "list.1", Field: "water_in_c", Scale: 0.1},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p point.Point
		err := dec(b, &p)
		if err != nil && len(p.Fields) > 0 {
			t.Fatalf("error %v with fields %v", err, p.Fields)
		}
	})
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		path string
		msg  string
	}{
		{"name", Config{URL: "http://x"}, "name", "not a tank name"},
		{"url", Config{Name: "p", URL: "ftp://x"}, "url", "not an http"},
		{"url creds", Config{Name: "p", URL: "http://u:pw@x"}, "url", "basic_auth"},
		{"kind", Config{Name: "p", URL: "http://x", Kind: "asetek"}, "kind", "not submer or http-json"},
		{"flow unit", Config{Name: "p", URL: "http://x", WaterFlowUnit: "gpm"}, "water_flow_unit", "not L/min or m3/h"},
		{"http-json without fields", Config{Name: "p", URL: "http://x", Kind: KindHTTPJSON}, "fields", "needs fields"},
		{"submer with fields", Config{Name: "p", URL: "http://x", Fields: []Field{{Path: "a", Field: "b"}}}, "fields", "kind http-json"},
		{"path", Config{Name: "p", URL: "http://x", Kind: KindHTTPJSON, Fields: []Field{{Path: "a..b", Field: "x_c"}}}, "fields.0.path", "empty step"},
		{"unit", Config{Name: "p", URL: "http://x", Kind: KindHTTPJSON, Fields: []Field{{Path: "a", Field: "x_c", Unit: "W"}}}, "fields.0.unit", "is a power"},
		{"type", Config{Name: "p", URL: "http://x", Kind: KindHTTPJSON, Fields: []Field{{Path: "a", Field: "x", Type: "date"}}}, "fields.0.type", "not number, bool or string"},
		{"dup", Config{Name: "p", URL: "http://x", Kind: KindHTTPJSON, Fields: []Field{{Path: "a", Field: "x_c"}, {Path: "b", Field: "x_c"}}}, "fields.1.field", "mapped twice"},
		{"env (at New)", Config{Name: "p", URL: "http://x", Headers: map[string]secret.Value{"Authorization": {Env: "HEATSINK_TEST_UNSET_TOKEN"}}}, "headers.Authorization", "HEATSINK_TEST_UNSET_TOKEN is not set"},
		{"tls pair", Config{Name: "p", URL: "https://x", TLS: TLS{CertFile: "c.pem"}}, "tls", "both cert_file and key_file"},
		{"ca", Config{Name: "p", URL: "https://x", TLS: TLS{CAFile: "/nonexistent/ca.pem"}}, "tls.ca_file", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if strings.HasSuffix(tt.name, "(at New)") {
				if err != nil {
					t.Fatalf("Validate() = %v; secrets are New's to check", err)
				}
				_, err = New(tt.cfg)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("Validate() = %v, want a ConfigError", err)
			}
			if p := strings.Join(ce.ConfigPath(), "."); p != tt.path || !strings.Contains(ce.ConfigMessage(), tt.msg) {
				t.Errorf("Validate() = %s: %s; want %s: ...%s...", p, ce.ConfigMessage(), tt.path, tt.msg)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	s, err := New(Config{Name: "pod1", URL: "http://10.0.0.30"})
	if err != nil {
		t.Fatal(err)
	}
	c := s.cfg
	if c.URL != "http://10.0.0.30/api/realTime" || c.Timeout != 500*time.Millisecond || c.MaxBodyBytes != 1<<20 || c.Vendor != "submer" || c.Kind != KindSubmer {
		t.Errorf("defaults: %+v", c)
	}
	s, _ = New(Config{Name: "pod1", URL: "http://10.0.0.30/custom/path"})
	if s.cfg.URL != "http://10.0.0.30/custom/path" {
		t.Errorf("explicit path changed: %s", s.cfg.URL)
	}
}

// BenchmarkSampleSimulator measures one tick's read of the simulated pod over
// loopback HTTP (kept-alive connection, JSON decode, 25 fields).
func BenchmarkSampleSimulator(b *testing.B) {
	m, err := sim.New(sim.DefaultParams(), 1)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := sim.NewServer(m, 1)
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	s, err := New(Config{Name: "pod1", URL: ts.URL})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for b.Loop() {
		pts, err := s.Sample(ctx, time.Now(), nil)
		if err != nil || len(pts) != 1 {
			b.Fatalf("%v %v", pts, err)
		}
	}
}
