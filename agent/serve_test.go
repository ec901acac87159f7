package agent

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "heatsink-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// --listen with a web configuration serves TLS only, and only to a client
// with the basic-auth password; the file is node_exporter's format.
func TestServeWithAWebConfigRequiresTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(dir, "web.yml")
	os.WriteFile(webConfig, []byte("tls_server_config:\n  cert_file: "+certFile+"\n  key_file: "+keyFile+"\nbasic_auth_users:\n  prometheus: "+string(hash)+"\n"), 0o600)
	if err := CheckWebConfig(webConfig); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	go Serve(l, srv, webConfig, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer srv.Close()
	url := "https://" + l.Addr().String() + "/healthz"
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	status := func(user, pass string) int {
		req, _ := http.NewRequest("GET", url, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		user, pass string
		want       int
	}{{"", "", 401}, {"prometheus", "wrong", 401}, {"prometheus", "s3cret", 200}} {
		if got := status(tc.user, tc.pass); got != tc.want {
			t.Errorf("user %q password %q: %d, want %d", tc.user, tc.pass, got, tc.want)
		}
	}
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + l.Addr().String() + "/healthz"); err == nil {
		if resp.StatusCode == 200 {
			t.Error("plain HTTP was answered with 200")
		}
		resp.Body.Close()
	}
}

func TestCheckWebConfigRefusesABrokenFile(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "web.yml")
	os.WriteFile(bad, []byte("tls_server_config:\n  cert_file: /nonexistent.pem\n  key_file: /nonexistent-key.pem\n"), 0o600)
	if err := CheckWebConfig(bad); err == nil {
		t.Error("a web config naming missing files was accepted")
	}
	if err := CheckWebConfig(""); err != nil {
		t.Errorf("no web config: %v", err)
	}
}

func TestUnprotectedIsAnyAddressBeyondLoopbackWithoutAWebConfig(t *testing.T) {
	for _, tc := range []struct {
		addr, web string
		want      bool
	}{
		{":9109", "", true}, {"0.0.0.0:9109", "", true}, {"10.1.2.3:9109", "", true}, {"[::]:9109", "", true},
		{"127.0.0.1:9109", "", false}, {"[::1]:9109", "", false}, {"localhost:9109", "", false},
		{":9109", "/etc/heatsink/web.yml", false},
	} {
		if got := Unprotected(tc.addr, tc.web); got != tc.want {
			t.Errorf("Unprotected(%q, %q) = %v, want %v", tc.addr, tc.web, got, tc.want)
		}
	}
}
