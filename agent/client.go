package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"gopkg.in/yaml.v3"
)

// DefaultSocket is where the node agent's local socket lives (collect
// --socket): in the agent's runtime directory, which only root can write.
const DefaultSocket = "/run/heatsink/agent.sock"

// ClientOptions say how a local client, the Slurm health check run as root,
// reaches the node agent and how it tells the agent from an impostor.
type ClientOptions struct {
	// Socket is the agent's Unix socket; when something exists at this
	// path it is used instead of URL, and trusted only when it is a socket
	// owned by root (or by this process's user) whose peer is too.
	Socket string
	// URL is the agent's --listen address as a URL (http://127.0.0.1:9109).
	URL string
	// WebConfig is the agent's own --web.config.file. With TLS the agent
	// must present exactly the certificate of its cert_file (a pin: the
	// web configuration names no CA for the server); with basic_auth_users
	// AuthFile must hold a user's password.
	WebConfig string
	// AuthFile holds "user:password" for the agent's basic auth, readable
	// by its owner only.
	AuthFile string
	// Timeout bounds one question; default 10 s.
	Timeout time.Duration
}

// Client asks the node agent for its alerts and trusts only an answer from
// the agent itself. Over plain HTTP it checks that the peer socket of its
// connection belongs to root (the kernel's record of who listens, read
// from /proc/net/tcp): a user process that took the port while the agent
// restarted is refused, not believed.
type Client struct {
	o        ClientOptions
	pin      []byte // DER of the agent's certificate; nil without TLS
	user     string
	password string
	trusted  func(uid uint32) bool
	proc     string // the proc filesystem's root
}

// NewClient checks the options and reads the web configuration and the
// credentials. Its errors are the caller's configuration, not the agent's.
func NewClient(o ClientOptions) (*Client, error) {
	if o.Socket == "" && o.URL == "" {
		return nil, errors.New("agent client: a socket or a URL is required")
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	euid := uint32(os.Geteuid())
	c := &Client{o: o, proc: "/proc", trusted: func(uid uint32) bool { return uid == 0 || uid == euid }}
	if o.WebConfig != "" {
		if err := c.readWebConfig(); err != nil {
			return nil, err
		}
	}
	if o.AuthFile != "" && c.user == "" {
		if err := c.readAuth(); err != nil {
			return nil, err
		}
	}
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return nil, fmt.Errorf("agent URL %q: want http://HOST:PORT or https://HOST:PORT", o.URL)
		case u.Scheme == "http" && c.pin != nil:
			return nil, fmt.Errorf("agent URL %s: the web config %s serves TLS, use https://", o.URL, o.WebConfig)
		case u.Scheme == "https" && c.pin == nil:
			return nil, fmt.Errorf("agent URL %s: https needs the agent's web config with TLS (--web.config.file), whose certificate is the one trusted", o.URL)
		}
	}
	return c, nil
}

func readWebConfig(path string) (*web.Config, error) {
	if err := CheckWebConfig(path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("web config %s: %w", path, err)
	}
	var wc web.Config
	if err := yaml.Unmarshal(b, &wc); err != nil {
		return nil, fmt.Errorf("web config %s: %w", path, err)
	}
	wc.TLSConfig.SetDirectory(filepath.Dir(path))
	return &wc, nil
}

// readWebConfig takes the pin from the agent's certificate and learns
// whether basic auth is on.
func (c *Client) readWebConfig() error {
	path := c.o.WebConfig
	wc, err := readWebConfig(path)
	if err != nil {
		return err
	}
	t := wc.TLSConfig
	switch t.ClientAuth {
	case "", "NoClientCert", "RequestClientCert":
	default:
		return fmt.Errorf("web config %s: client_auth_type %s asks clients for a certificate, which the health check has none of: give the agent --socket and the check --agent-socket", path, t.ClientAuth)
	}
	if t.IsEnabled() {
		pemBytes := []byte(t.TLSCert)
		if t.TLSCertPath != "" {
			if pemBytes, err = os.ReadFile(t.TLSCertPath); err != nil {
				return fmt.Errorf("web config %s: the agent's certificate: %w", path, err)
			}
		}
		block, _ := pem.Decode(pemBytes)
		if block == nil || block.Type != "CERTIFICATE" {
			return fmt.Errorf("web config %s: the agent's certificate %s holds no PEM certificate", path, t.TLSCertPath)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("web config %s: the agent's certificate %s: %w", path, t.TLSCertPath, err)
		}
		c.pin = block.Bytes
	}
	if len(wc.Users) > 0 {
		if c.o.AuthFile == "" {
			return fmt.Errorf("web config %s sets basic_auth_users: give the health check a password file (--agent-auth, \"user:password\")", path)
		}
		if err := c.readAuth(); err != nil {
			return err
		}
		if _, ok := wc.Users[c.user]; !ok {
			return fmt.Errorf("%s: user %q is not among the basic_auth_users of %s", c.o.AuthFile, c.user, path)
		}
	}
	return nil
}

// readAuth reads "user:password" from a file only its owner may read: a
// password others can read is no credential.
func (c *Client) readAuth() error {
	path := c.o.AuthFile
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("agent auth file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("agent auth file %s: mode %v lets others read the password; chmod 600 it", path, st.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("agent auth file: %w", err)
	}
	user, pass, ok := strings.Cut(strings.TrimRight(string(b), "\r\n"), ":")
	if !ok || user == "" || pass == "" || strings.ContainsAny(user+pass, "\r\n") {
		return fmt.Errorf("agent auth file %s: want one line \"user:password\"", path)
	}
	c.user, c.password = user, pass
	return nil
}

// Alerts asks the agent for /alerts. Every error means the answer cannot be
// trusted to come from the agent: it could not be reached, its certificate,
// socket or listening socket is not the agent's, it refused the
// credentials, or it answered something that is not heatsink's /alerts.
func (c *Client) Alerts(ctx context.Context) ([]Rule, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	if c.o.Socket != "" {
		if _, err := os.Lstat(c.o.Socket); err == nil {
			return c.viaSocket(ctx)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("agent socket: %w", err)
		}
		if c.o.URL == "" {
			return nil, fmt.Errorf("agent socket %s: no such socket (the agent is not running or has no --socket)", c.o.Socket)
		}
	}
	u, _ := url.Parse(c.o.URL)
	if u.Scheme == "https" {
		return c.viaTLS(ctx)
	}
	return c.viaTCP(ctx)
}

// viaSocket trusts the socket file's owner and, through SO_PEERCRED, the
// process that answers on it.
func (c *Client) viaSocket(ctx context.Context) ([]Rule, error) {
	path := c.o.Socket
	st, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("agent socket: %w", err)
	}
	if st.Mode().Type() != fs.ModeSocket {
		return nil, fmt.Errorf("agent socket %s: not a socket but %v", path, st.Mode().Type())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); !ok || !c.trusted(sys.Uid) {
		return nil, fmt.Errorf("agent socket %s: owned by uid %d, not root", path, ownerUID(st))
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		cn, err := (&net.Dialer{}).DialContext(ctx, "unix", path)
		if err != nil {
			return nil, err
		}
		uid, err := unixPeerUID(cn)
		if err != nil {
			cn.Close()
			return nil, fmt.Errorf("peer of %s: %w", path, err)
		}
		if !c.trusted(uid) {
			cn.Close()
			return nil, fmt.Errorf("agent socket %s: answered by a process of uid %d, not root", path, uid)
		}
		return cn, nil
	}}
	defer tr.CloseIdleConnections()
	rules, err := c.get(ctx, tr, "http://agent/alerts")
	if err != nil {
		return nil, fmt.Errorf("agent socket %s: %w", path, err)
	}
	return rules, nil
}

// viaTLS trusts only the agent's own certificate.
func (c *Client) viaTLS(ctx context.Context) ([]Rule, error) {
	pin := c.pin
	tr := &http.Transport{TLSClientConfig: &tls.Config{
		// The pin replaces the chain and name check: the web configuration
		// names the agent's certificate, not a CA for it.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, pin) {
				return errors.New("the certificate presented is not the agent's (cert_file of its web config)")
			}
			return nil
		},
	}}
	defer tr.CloseIdleConnections()
	rules, err := c.get(ctx, tr, strings.TrimRight(c.o.URL, "/")+"/alerts")
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", c.o.URL, err)
	}
	return rules, nil
}

// viaTCP trusts a plain HTTP answer only when the socket that answered
// belongs to root. It checks after the answer, on the same connection, so
// nothing can take the port between the check and the question; a peer
// that sent its answer and closed is not trusted either.
func (c *Client) viaTCP(ctx context.Context) ([]Rule, error) {
	var conn net.Conn
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		cn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		conn = cn
		return cn, err
	}}
	defer tr.CloseIdleConnections()
	rules, err := c.get(ctx, tr, strings.TrimRight(c.o.URL, "/")+"/alerts")
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", c.o.URL, err)
	}
	uid, err := tcpPeerUID(c.proc, conn.LocalAddr(), conn.RemoteAddr())
	if err != nil {
		return nil, fmt.Errorf("agent %s: who answered: %w", c.o.URL, err)
	}
	if !c.trusted(uid) {
		return nil, fmt.Errorf("agent %s: port %s is held by a process of uid %d, not root (an impostor, or the agent runs as that user)", c.o.URL, portOf(conn.RemoteAddr()), uid)
	}
	return rules, nil
}

// get asks for /alerts and decodes it strictly: heatsink's rules, nothing else.
func (c *Client) get(ctx context.Context, tr *http.Transport, u string) ([]Rule, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return errors.New("redirected: the agent does not redirect")
	}}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/alerts answered %s", resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil, fmt.Errorf("/alerts answered %q, not heatsink's JSON", resp.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("/alerts: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	// "null" is an agent of an earlier heatsink without rules.
	var rules []Rule
	if err := dec.Decode(&rules); err != nil {
		return nil, fmt.Errorf("/alerts answered something other than heatsink's alert rules: %.80q", body)
	}
	return rules, nil
}

func ownerUID(st fs.FileInfo) int64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int64(sys.Uid)
	}
	return -1
}

func portOf(a net.Addr) string {
	_, p, _ := net.SplitHostPort(a.String())
	return p
}
