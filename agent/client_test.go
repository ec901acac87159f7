package agent

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/agent/agenttest"
	"github.com/heatsink-hpc/heatsink/collectors"
	"golang.org/x/crypto/bcrypt"
)

// nobody is the user of the impostors: any user who is not root.
const nobody = 65534

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the impostor runs as another user, as on a node")
	}
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

var oneRule = []Rule{{Name: "gpu_hot", Severity: "critical", Alerts: []Alert{{Measurement: "gpu", Tags: map[string]string{"gpu": "0"}, Firing: true}}}}

// serveAgent serves the agent's handler, one rule firing, on l with the web config.
func serveAgent(t *testing.T, l net.Listener, webConfig string) {
	t.Helper()
	coll := collectors.New(collectors.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, nil, nil)
	srv := &http.Server{Handler: Handler(Options{Collector: coll, Alerts: func() []Rule { return oneRule }})}
	go Serve(l, srv, webConfig, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { srv.Close() })
}

func startImpostor(t *testing.T, network, addr string) *agenttest.Impostor {
	t.Helper()
	im, err := agenttest.StartImpostor(network, addr, nobody, nobody)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { im.Stop() })
	return im
}

func alerts(t *testing.T, o ClientOptions) ([]Rule, error) {
	t.Helper()
	c, err := NewClient(o)
	if err != nil {
		t.Fatalf("NewClient(%+v): %v", o, err)
	}
	return c.Alerts(context.Background())
}

// Over plain HTTP the answer counts only when root holds the port: a user
// process that took it while the agent restarted is refused, whatever it says.
func TestClientOverPlainHTTPTrustsOnlyAPortRootHolds(t *testing.T) {
	needRoot(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveAgent(t, l, "")
	rules, err := alerts(t, ClientOptions{URL: "http://" + l.Addr().String()})
	if err != nil || len(rules) != 1 || rules[0].Name != "gpu_hot" {
		t.Fatalf("the agent's own answer: %v %v", rules, err)
	}
	// --listen :9109 is one IPv6 socket that IPv4 reaches too (tcp6's
	// ::ffff:127.0.0.1).
	any6, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	serveAgent(t, any6, "")
	if rules, err := alerts(t, ClientOptions{URL: "http://127.0.0.1:" + portOf(any6.Addr())}); err != nil || len(rules) != 1 {
		t.Fatalf("the agent on all interfaces: %v %v", rules, err)
	}

	addr := freePort(t)
	startImpostor(t, "tcp", addr)
	rules, err = alerts(t, ClientOptions{URL: "http://" + addr})
	if err == nil || !strings.Contains(err.Error(), "uid 65534") {
		t.Fatalf("impostor's all-cool answer: %v, %v; want refused naming uid 65534", rules, err)
	}
	if _, err := alerts(t, ClientOptions{URL: "http://" + freePort(t)}); err == nil {
		t.Error("nothing listening was trusted")
	}
}

// writeWebConfig writes the docs' recommended web config (TLS and basic
// auth) for cert and key, and the health check's password file.
func writeWebConfig(t *testing.T, dir, certFile, keyFile string) (webConfig, authFile string) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig = filepath.Join(dir, "web.yml")
	os.WriteFile(webConfig, []byte("tls_server_config:\n  cert_file: "+certFile+"\n  key_file: "+keyFile+"\nbasic_auth_users:\n  prometheus: "+string(hash)+"\n"), 0o600)
	authFile = filepath.Join(dir, "agent.auth")
	os.WriteFile(authFile, []byte("prometheus:s3cret\n"), 0o600)
	return webConfig, authFile
}

// With the docs' TLS and basic-auth web config, the client reaches the
// agent, and trusts no other certificate and no refused password.
func TestClientOverTLSTrustsOnlyTheAgentsCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, dir)
	webConfig, authFile := writeWebConfig(t, dir, certFile, keyFile)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveAgent(t, l, webConfig)
	url := "https://" + l.Addr().String()
	rules, err := alerts(t, ClientOptions{URL: url, WebConfig: webConfig, AuthFile: authFile})
	if err != nil || len(rules) != 1 {
		t.Fatalf("the agent over TLS with basic auth: %v %v", rules, err)
	}

	wrong := filepath.Join(dir, "wrong.auth")
	os.WriteFile(wrong, []byte("prometheus:guess\n"), 0o600)
	if _, err := alerts(t, ClientOptions{URL: url, WebConfig: webConfig, AuthFile: wrong}); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a refused password: %v, want 401", err)
	}

	// An impostor with a certificate of its own, answering all cool.
	other := t.TempDir()
	otherCert, otherKey, _ := selfSigned(t, other)
	pair, err := tls.LoadX509KeyPair(otherCert, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	il, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	isrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "[]")
	})}
	go isrv.Serve(il)
	defer isrv.Close()
	if _, err := alerts(t, ClientOptions{URL: "https://" + il.Addr().String(), WebConfig: webConfig, AuthFile: authFile}); err == nil || !strings.Contains(err.Error(), "not the agent's") {
		t.Errorf("an impostor's certificate: %v, want refused", err)
	}
}

// What the check needs but lacks is a configuration error, named, not an
// untrusted agent.
func TestNewClientNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, dir)
	webConfig, authFile := writeWebConfig(t, dir, certFile, keyFile)
	open := filepath.Join(dir, "open.auth")
	os.WriteFile(open, []byte("prometheus:s3cret\n"), 0o644)
	stranger := filepath.Join(dir, "stranger.auth")
	os.WriteFile(stranger, []byte("alice:s3cret\n"), 0o600)
	mutual := filepath.Join(dir, "mutual.yml")
	os.WriteFile(mutual, []byte("tls_server_config:\n  cert_file: "+certFile+"\n  key_file: "+keyFile+"\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: "+certFile+"\n"), 0o600)
	for _, tc := range []struct {
		name string
		o    ClientOptions
		want string
	}{
		{"nothing", ClientOptions{}, "a socket or a URL"},
		{"not a URL", ClientOptions{URL: "127.0.0.1:9109"}, "want http://"},
		{"https without the web config", ClientOptions{URL: "https://127.0.0.1:9109"}, "--web.config.file"},
		{"http to TLS", ClientOptions{URL: "http://127.0.0.1:9109", WebConfig: webConfig, AuthFile: authFile}, "use https://"},
		{"no password", ClientOptions{URL: "https://127.0.0.1:9109", WebConfig: webConfig}, "--agent-auth"},
		{"password others read", ClientOptions{URL: "https://127.0.0.1:9109", WebConfig: webConfig, AuthFile: open}, "chmod 600"},
		{"unknown user", ClientOptions{URL: "https://127.0.0.1:9109", WebConfig: webConfig, AuthFile: stranger}, `user "alice"`},
		{"client certificates", ClientOptions{URL: "https://127.0.0.1:9109", WebConfig: mutual}, "RequireAndVerifyClientCert"},
	} {
		if _, err := NewClient(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// The socket is trusted only when root owns it and answers on it.
func TestClientOverTheSocketTrustsOnlyRoot(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "run", "agent.sock")
	l, err := ListenSocket(sock)
	if err != nil {
		t.Fatal(err)
	}
	serveAgent(t, l, "")
	if st, _ := os.Stat(sock); st.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", st.Mode().Perm())
	}
	// The socket wins over the port, which nothing serves.
	o := ClientOptions{Socket: sock, URL: "http://" + freePort(t)}
	if rules, err := alerts(t, o); err != nil || len(rules) != 1 {
		t.Fatalf("over the root socket: %v %v", rules, err)
	}
	if err := os.Chown(sock, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if _, err := alerts(t, o); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("a socket nobody owns: %v, want refused", err)
	}

	// A user's process answering on a socket root owns (renamed into
	// place, say): SO_PEERCRED names it.
	open, err := os.MkdirTemp("", "heatsink-open-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(open)
	os.Chmod(open, 0o777)
	isock := filepath.Join(open, "agent.sock")
	startImpostor(t, "unix", isock)
	if err := os.Chown(isock, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := alerts(t, ClientOptions{Socket: isock}); err == nil || !strings.Contains(err.Error(), "process of uid 65534") {
		t.Errorf("an impostor behind a root-owned socket: %v, want refused", err)
	}

	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, nil, 0o600)
	if _, err := alerts(t, ClientOptions{Socket: plain}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("a plain file: %v", err)
	}
	if _, err := alerts(t, ClientOptions{Socket: filepath.Join(dir, "none.sock")}); err == nil || !strings.Contains(err.Error(), "no such socket") {
		t.Errorf("no socket and no URL: %v", err)
	}
}

// Root answering something that is not heatsink's /alerts is not the agent.
func TestClientRefusesAnAnswerThatIsNotHeatsinks(t *testing.T) {
	for _, tc := range []struct{ ctype, body string }{
		{"text/html", "<html>all cool</html>"},
		{"application/json", `{"status":"ok"}`},
		{"application/json", `"all cool"`},
		{"application/json", `[{"name":"x","severity":"critical","alerts":[],"healthy":true}]`},
	} {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.ctype)
			io.WriteString(w, tc.body)
		})}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(l)
		if rules, err := alerts(t, ClientOptions{URL: "http://" + l.Addr().String(), Timeout: 5 * time.Second}); err == nil {
			t.Errorf("%s %s was taken for /alerts: %v", tc.ctype, tc.body, rules)
		}
		srv.Close()
	}
}

// An agent whose port is taken says by whom.
func TestListenTCPNamesThePortsHolder(t *testing.T) {
	needRoot(t)
	addr := freePort(t)
	startImpostor(t, "tcp", addr)
	_, err := ListenTCP(addr)
	_, port, _ := net.SplitHostPort(addr)
	want := "port " + port + " is taken by pid "
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "uid 65534") {
		t.Fatalf("listen on the impostor's port: %v, want %q and uid 65534", err, want)
	}
}

// The socket's directory must be the agent's alone; a stale socket is
// replaced, a live one is not taken over.
func TestListenSocketGuardsItsDirectory(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if _, err := ListenSocket(filepath.Join(open, "agent.sock")); err == nil || !strings.Contains(err.Error(), "writable by no one else") {
		t.Errorf("a directory others write: %v", err)
	}
	sock := filepath.Join(dir, "agent.sock")
	l, err := ListenSocket(sock)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ListenSocket(sock); err == nil || !strings.Contains(err.Error(), "another process serves it") {
		t.Errorf("a live socket: %v", err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // a dead agent's socket stays behind
	l, err = ListenSocket(sock)
	if err != nil {
		t.Fatalf("a stale socket: %v", err)
	}
	l.Close()
	notSock := filepath.Join(dir, "file.sock")
	os.WriteFile(notSock, nil, 0o600)
	if _, err := ListenSocket(notSock); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("a plain file: %v", err)
	}
}
