package influx

import (
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// An https server that answers like InfluxDB's /ping and /api/v2/write: it
// checks that the CA file is what makes the certificate trusted.
func TestTLSUsesTheConfiguredCA(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ping":
			w.WriteHeader(http.StatusNoContent)
		case "/api/v2/write":
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, string(b))
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted handshake is expected
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}

	untrusted, err := New(Options{Config: Config{URL: srv.URL, Bucket: "b", SpoolDir: t.TempDir()}, Logger: quietLogger(t), DrainTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	err = untrusted.Check(context.Background())
	untrusted.Abort()
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}

	s, err := New(Options{Config: Config{URL: srv.URL, Bucket: "b", SpoolDir: t.TempDir(), TLS: TLS{CAFile: ca}}, Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	p := point.New("cpu", time.Unix(1700000000, 0))
	p.AddTag("host", "a").AddFloat("usage_pct", 1)
	if err := s.Write([]point.Point{p}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) < 2 || !strings.Contains(bodies[len(bodies)-1], "cpu,host=a usage_pct=1 1700000000000000000") {
		t.Errorf("writes received: %q", bodies)
	}
}

func TestTLSFilesThatCannotBeUsedAreErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o600)
	for _, tc := range []struct {
		tls  TLS
		want string
	}{
		{TLS{CAFile: filepath.Join(dir, "missing.pem")}, "no such file"},
		{TLS{CAFile: notPEM}, "holds no PEM certificate"},
		{TLS{CertFile: notPEM, KeyFile: notPEM}, "client certificate"},
	} {
		_, err := New(Options{Config: Config{URL: "https://127.0.0.1:1", Bucket: "b", SpoolDir: t.TempDir(), TLS: tc.tls}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.tls, err, tc.want)
		}
	}
}
