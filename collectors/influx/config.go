package influx

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/heatsink-hpc/heatsink/collectors/spool"
	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/registry/keypath"
)

// Defaults for Config.
const (
	DefaultBatchSize        = 5000
	DefaultFlushInterval    = time.Second
	DefaultTimeout          = 10 * time.Second
	DefaultMaxRetryInterval = 4 * time.Second
)

// Config is the `sinks.influx` section of the configuration. The sink is
// on when URL is set.
//
// For InfluxDB 1.8 (through its v2 API) the bucket is "database" or
// "database/retention-policy", the token "user:password" (or empty without
// authentication), and the organisation is ignored.
type Config struct {
	URL    string       `yaml:"url"`
	Org    string       `yaml:"org"`
	Bucket string       `yaml:"bucket"`
	Token  secret.Value `yaml:"token"`
	TLS    TLS          `yaml:"tls"`
	// BatchSize is the most points sent in one request; default 5000.
	BatchSize int `yaml:"batch_size"`
	// FlushInterval is the longest a point waits for a fuller batch; default 1s.
	FlushInterval time.Duration `yaml:"flush_interval"`
	// Timeout bounds one write request; default 10s.
	Timeout time.Duration `yaml:"timeout"`
	// MaxRetryInterval caps the backoff between retries of a failed write;
	// default 4s, so a server that comes back is written to within that.
	// Retries go on for as long as it takes.
	MaxRetryInterval time.Duration `yaml:"max_retry_interval"`
	// SpoolDir is the spool root: each destination (URL, org, bucket) has
	// its own spool in a subdirectory (SpoolDirOf), so points recorded for
	// one never go to another. Default DefaultSpoolDir().
	SpoolDir string `yaml:"spool_dir"`
	// SpoolMaxBytes caps the unsent data of the spool; default 1 GiB.
	// Beyond it points go to the server directly; those it does not take
	// either are a counted, logged loss and an alert.
	SpoolMaxBytes int64 `yaml:"spool_max_bytes"`
	// Gzip compresses write requests.
	Gzip bool `yaml:"gzip"`
	// Optional starts collecting even when the server refuses the token or
	// has no such bucket (a server that does not answer never stops a
	// start): the spool keeps the points meanwhile.
	Optional bool `yaml:"optional"`
}

// TLS configures the connection to an https URL.
type TLS struct {
	// CAFile is a PEM bundle of authorities to trust instead of the system's.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are a client certificate, for servers that ask for one.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ServerName overrides the name checked in the server's certificate.
	ServerName string `yaml:"server_name"`
	// InsecureSkipVerify turns certificate checks off (testing only).
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// Enabled reports whether the sink is configured.
func (c *Config) Enabled() bool { return c.URL != "" }

// ConfigError is a value in the section that makes no sense; it names the
// key, so the configuration loader can point at its line.
type ConfigError = keypath.Error

func configErr(msg string, path ...string) error { return keypath.New(msg, path...) }

// Validate checks the section without touching the network or the files
// it names; paths in errors are relative to the section.
func (c *Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		// url.Error repeats the URL, credentials and all: keep only why.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return configErr(fmt.Sprintf("not a URL: %v", err), "url")
	}
	if u.User != nil {
		// A URL is printed in run.json, logs and errors; a token file is not.
		return configErr(fmt.Sprintf("%s://...@%s: put credentials in token (a {file: PATH} or {env: NAME} secret; flag --influx-token-file; for 1.8 user:password), not in the URL", u.Scheme, u.Host), "url")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return configErr(fmt.Sprintf("%q: want an http:// or https:// URL", c.URL), "url")
	}
	if u.Host == "" {
		return configErr(fmt.Sprintf("%q has no host", c.URL), "url")
	}
	if c.Bucket == "" {
		return configErr("required (for InfluxDB 1.8: database or database/retention-policy)", "bucket")
	}
	if c.BatchSize < 0 || c.BatchSize > 1_000_000 {
		return configErr(fmt.Sprintf("%d is outside 1..1000000", c.BatchSize), "batch_size")
	}
	if c.FlushInterval < 0 {
		return configErr("must not be negative", "flush_interval")
	}
	if c.Timeout < 0 {
		return configErr("must not be negative", "timeout")
	}
	if c.MaxRetryInterval < 0 {
		return configErr("must not be negative", "max_retry_interval")
	}
	if c.SpoolMaxBytes != 0 && c.SpoolMaxBytes < 1<<20 {
		return configErr(fmt.Sprintf("%d is below the 1 MiB minimum", c.SpoolMaxBytes), "spool_max_bytes")
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		return configErr("cert_file and key_file go together", "tls")
	}
	if u.Scheme == "http" && (c.TLS.CAFile != "" || c.TLS.CertFile != "") {
		return configErr("TLS files given for an http:// URL", "tls")
	}
	return nil
}

// withDefaults returns c with every unset option at its default.
func (c Config) withDefaults() Config {
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRetryInterval == 0 {
		c.MaxRetryInterval = DefaultMaxRetryInterval
	}
	if c.SpoolMaxBytes == 0 {
		c.SpoolMaxBytes = spool.DefaultMaxBytes
	}
	if c.SpoolDir == "" {
		c.SpoolDir = DefaultSpoolDir()
	}
	return c
}

// StateDirEnv names the environment variable that moves heatsink's state
// directory (the default spool root's parent, and the run ledger beside it)
// away from its default: a test's runs, or a second heatsink on one
// machine, then neither see nor mark the others' runs.
const StateDirEnv = "HEATSINK_STATE_DIR"

// DefaultSpoolDir is the spool root when the configuration does not say:
// $HEATSINK_STATE_DIR/influx-spool when that is set, else
// /var/lib/heatsink/influx-spool for root, else under the user's state
// directory ($XDG_STATE_HOME or ~/.local/state). It survives reboots, as
// the spools must.
func DefaultSpoolDir() string {
	if d := os.Getenv(StateDirEnv); d != "" {
		return filepath.Join(d, "influx-spool")
	}
	if os.Geteuid() == 0 {
		return "/var/lib/heatsink/influx-spool"
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "heatsink", "influx-spool")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "heatsink", "influx-spool")
	}
	return filepath.Join(os.TempDir(), "heatsink-influx-spool")
}

// tlsConfig builds the client's TLS settings; nil when none are given.
func (t TLS) tlsConfig() (*tls.Config, error) {
	if t == (TLS{}) {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("influx tls: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("influx tls: %s holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("influx tls: load client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
