// Package influxtest starts a real InfluxDB OSS 1.8 server (influxd) for
// tests: on 127.0.0.1, on free ports, with its data in a temporary
// directory, Flux enabled and one database created. Tests that need InfluxDB
// talk to the real thing rather than to a mock, so what they assert holds
// against the server sites run.
//
// influxd must be installed (scripts/deps.sh builds it with
// `go install github.com/influxdata/influxdb/cmd/influxd@v1.8.10`); when it
// is missing, Start fails the test with that instruction rather than skip.
package influxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Database is the database every server is created with; Bucket is its v2
// name (database/retention policy).
const (
	Database = "heatsink"
	Bucket   = Database + "/autogen"
)

// Options configure a server.
type Options struct {
	// Auth turns authentication on and creates an admin user; Server.Token
	// is then "admin:PASSWORD", the form InfluxDB 1.8 accepts as a v2 token.
	Auth bool
}

// Server is a running (or stopped) influxd.
type Server struct {
	// Token authorises writes and queries; "" when Auth is off.
	Token string

	bin      string
	dir      string
	httpAddr string
	conf     string
	logPath  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start launches influxd for the test and stops it at cleanup. It fails the
// test, with the reason, when influxd is not installed or does not start.
func Start(t testing.TB, opts ...Options) *Server {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	s, err := Launch(t.TempDir(), o)
	if err != nil {
		t.Fatalf("influxtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Logf("influxtest: stop: %v", err)
		}
	})
	return s
}

// Binary returns the path of influxd: from PATH, else GOPATH/bin, where
// `go install` puts it.
func Binary() (string, error) {
	if p, err := exec.LookPath("influxd"); err == nil {
		return p, nil
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "influxd")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", errors.New("influxd not found in PATH or GOPATH/bin: run scripts/deps.sh " +
		"(go install github.com/influxdata/influxdb/cmd/influxd@v1.8.10)")
}

// Launch starts influxd with its configuration and data under dir, for
// programs (benchmarks) that have no testing.T. Stop it with Stop.
func Launch(dir string, o Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("influxtest: %w", err)
	}
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	rpcPort, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{
		bin:      bin,
		dir:      dir,
		httpAddr: fmt.Sprintf("127.0.0.1:%d", httpPort),
		conf:     filepath.Join(dir, "influxdb.conf"),
		logPath:  filepath.Join(dir, "influxd.log"),
	}
	conf := fmt.Sprintf(`reporting-disabled = true
bind-address = "127.0.0.1:%d"

[meta]
  dir = %q

[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false

[http]
  enabled = true
  bind-address = %q
  auth-enabled = %v
  flux-enabled = true
  log-enabled = false

[logging]
  level = "warn"

[monitor]
  store-enabled = false

[continuous_queries]
  enabled = false
`, rpcPort, filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), s.httpAddr, o.Auth)
	if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
		return nil, fmt.Errorf("write influxd config: %w", err)
	}
	if err := s.Restart(); err != nil {
		return nil, err
	}
	if o.Auth {
		// With no user yet, InfluxDB 1.8 lets anyone create the first admin.
		if err := s.influxQL("", "CREATE USER admin WITH PASSWORD 'heatsink-test' WITH ALL PRIVILEGES"); err != nil {
			s.Stop()
			return nil, err
		}
		s.Token = "admin:heatsink-test"
	}
	if err := s.influxQL(s.Token, "CREATE DATABASE "+Database); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// URL is the server's HTTP address, e.g. http://127.0.0.1:40123.
func (s *Server) URL() string { return "http://" + s.httpAddr }

// Dir is the directory holding the server's configuration, data and log.
func (s *Server) Dir() string { return s.dir }

// Restart starts influxd again after Stop or Kill, on the same ports and
// data, and waits until it answers /ping.
func (s *Server) Restart() error {
	done, err := s.launch()
	if err != nil {
		return err
	}
	// A loaded 2-core CI machine can take a while to open the store.
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-done:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			return fmt.Errorf("influxd exited during start-up: %s", s.logTail())
		default:
		}
		resp, err := http.Get(s.URL() + "/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return nil
			}
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("influxd did not answer /ping within 90 s: %s", s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) launch() (chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil, errors.New("influxd is already running")
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open influxd log: %w", err)
	}
	cmd := exec.Command(s.bin, "-config", s.conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the test binary dies, influxd must not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start influxd: %w", err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	return done, nil
}

// Stop shuts influxd down with SIGTERM (SIGKILL after 30 s) and waits for
// it to exit. Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	return s.signal(syscall.SIGTERM, 30*time.Second)
}

// Kill stops influxd with SIGKILL, as a crash or power loss would.
func (s *Server) Kill() error {
	return s.signal(syscall.SIGKILL, 30*time.Second)
}

func (s *Server) signal(sig syscall.Signal, grace time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(grace):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
	// The port must be free again before Restart binds it.
	for i := 0; i < 100; i++ {
		c, err := net.DialTimeout("tcp", s.httpAddr, 100*time.Millisecond)
		if err != nil {
			return nil
		}
		c.Close()
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("influxd still listens on %s after stopping", s.httpAddr)
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// influxQL runs a statement through the 1.x /query endpoint.
func (s *Server) influxQL(token, q string) error {
	_, err := s.query(token, q)
	return err
}

func (s *Server) query(token, q string) ([]byte, error) {
	form := url.Values{"q": {q}, "db": {Database}, "epoch": {"ns"}}
	req, err := http.NewRequest(http.MethodPost, s.URL()+"/query", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if token != "" {
		req.Header.Set("Authorization", "Token "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("influxql %q: %w", q, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("influxql %q: %w", q, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("influxql %q: %s: %s", q, resp.Status, bytes.TrimSpace(b))
	}
	var r struct {
		Results []struct {
			Error string `json:"error"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &r); err == nil {
		for _, res := range r.Results {
			if res.Error != "" {
				return nil, fmt.Errorf("influxql %q: %s", q, res.Error)
			}
		}
	}
	return b, nil
}
