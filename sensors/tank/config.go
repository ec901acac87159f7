package tank

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/registry/keypath"
	"github.com/heatsink-hpc/heatsink/sensors/units"
)

// Kinds of tank API.
const (
	// KindSubmer is the Submer SmartPod's GET /api/realTime.
	KindSubmer = "submer"
	// KindHTTPJSON is any HTTP endpoint answering JSON, mapped by Fields.
	KindHTTPJSON = "http-json"
)

// Defaults applied by New to a Config's zero fields.
const (
	DefaultTimeout      = 500 * time.Millisecond
	DefaultMaxBodyBytes = 1 << 20
	submerPath          = "/api/realTime"
)

// Config describes one tank (or CDU), as written in the `tanks:` list of a
// heatsink configuration:
//
//	tanks:
//	  - name: pod1
//	    kind: submer
//	    url: http://10.0.0.30         # /api/realTime is added
//	    water_flow_unit: m3/h         # what this firmware reports wf in
//	  - name: cdu1
//	    kind: http-json
//	    url: https://cdu1.example/api/v1/status
//	    vendor: acme
//	    tls: {ca_file: /etc/heatsink/cdu-ca.pem}
//	    headers: {Authorization: {env: CDU_TOKEN}}
//	    fields:
//	      - {path: status.supply.temp, field: coolant_in_c}
//	      - {path: status.flow, field: coolant_flow_lpm, unit: m3/h}
type Config struct {
	// Name tags every point (tank=NAME) and names the source ("tank:NAME").
	Name string `yaml:"name"`
	// Kind is submer (default) or http-json.
	Kind string `yaml:"kind"`
	// URL of the API. For submer a URL with no path gets /api/realTime.
	URL string `yaml:"url"`
	// Vendor tags every point; default "submer" for kind submer, else "generic".
	Vendor string `yaml:"vendor"`
	// Timeout bounds one request, connection included (default 500ms).
	Timeout time.Duration `yaml:"timeout"`
	// MaxBodyBytes bounds the answer (default 1 MiB); a longer one is an error.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// WaterFlowUnit is the unit of the Submer wf field: L/min (default) or
	// m3/h, as firmware versions differ. It is recorded as water_flow_lpm.
	WaterFlowUnit string `yaml:"water_flow_unit"`
	// TLS configures https URLs.
	TLS TLS `yaml:"tls"`
	// Headers are sent with every request (e.g. Authorization: Bearer ...).
	Headers map[string]secret.Value `yaml:"headers"`
	// BasicAuth sends HTTP basic authentication.
	BasicAuth *BasicAuth `yaml:"basic_auth"`
	// Fields map an http-json answer to tank fields.
	Fields []Field `yaml:"fields"`
}

// TLS configures the client side of an https connection.
type TLS struct {
	// CAFile holds PEM certificates to trust besides the system's.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are a client certificate, for servers that ask.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`
	// ServerName overrides the name checked in the server's certificate.
	ServerName string `yaml:"server_name"`
	// InsecureSkipVerify accepts any certificate: for lab devices with
	// self-signed certificates only.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// BasicAuth is HTTP basic authentication.
type BasicAuth struct {
	Username string       `yaml:"username"`
	Password secret.Value `yaml:"password"`
}

// Field maps one value of an http-json answer to a tank field.
type Field struct {
	// Path walks the JSON answer: keys separated by dots, array elements by
	// their index ("data.pumps.0.rpm").
	Path string `yaml:"path"`
	// Field is the recorded name, with its unit suffix (coolant_in_c).
	Field string `yaml:"field"`
	// Type is number (default), bool (true/false or 0/1) or string.
	Type string `yaml:"type"`
	// Unit is the unit the device reports the (scaled) value in; it is
	// converted to the unit of Field's suffix. Empty: already in it.
	Unit string `yaml:"unit"`
	// Scale multiplies the raw number first (default 1).
	Scale float64 `yaml:"scale"`
	// Optional fields may be missing from an answer; a required one that is
	// missing makes the whole answer an error.
	Optional bool `yaml:"optional"`
}

// ConfigError is a configuration value that makes no sense; Path locates it
// inside one tank's entry so the configuration loader can name its line.
type ConfigError = keypath.Error

func cfgErr(msg string, path ...string) error { return keypath.New(msg, path...) }

var (
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	fieldRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// Validate checks the configuration. It does not read the secrets, so a
// configuration can be checked where they are not available; New does.
func (c *Config) Validate() error {
	if !nameRE.MatchString(c.Name) {
		return cfgErr(fmt.Sprintf("%q is not a tank name (letters, digits, _ . -)", c.Name), "name")
	}
	if c.Kind != "" && c.Kind != KindSubmer && c.Kind != KindHTTPJSON {
		return cfgErr(fmt.Sprintf("%q is not %s or %s", c.Kind, KindSubmer, KindHTTPJSON), "kind")
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cfgErr(fmt.Sprintf("%q is not an http:// or https:// URL", c.URL), "url")
	}
	if u.User != nil {
		return cfgErr("put credentials in basic_auth (with a secret), not in the URL", "url")
	}
	if c.Vendor != "" && !nameRE.MatchString(c.Vendor) {
		return cfgErr(fmt.Sprintf("%q is not a vendor name", c.Vendor), "vendor")
	}
	if c.Timeout < 0 {
		return cfgErr("must be positive", "timeout")
	}
	if c.MaxBodyBytes < 0 {
		return cfgErr("must be positive", "max_body_bytes")
	}
	switch c.WaterFlowUnit {
	case "", "L/min", "lpm", "m3/h", "m3h":
	default:
		return cfgErr(fmt.Sprintf("%q is not L/min or m3/h", c.WaterFlowUnit), "water_flow_unit")
	}
	for name := range c.Headers {
		if name == "" || strings.ContainsAny(name, " :\r\n") {
			return cfgErr(fmt.Sprintf("%q is not a header name", name), "headers")
		}
	}
	if c.BasicAuth != nil && c.BasicAuth.Username == "" {
		return cfgErr("missing", "basic_auth", "username")
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		return cfgErr("give both cert_file and key_file, or neither", "tls")
	}
	if c.TLS.CAFile != "" {
		if _, err := os.Stat(c.TLS.CAFile); err != nil {
			return cfgErr(err.Error(), "tls", "ca_file")
		}
	}
	kind := c.Kind
	if kind == "" {
		kind = KindSubmer
	}
	switch {
	case kind == KindHTTPJSON && len(c.Fields) == 0:
		return cfgErr("an http-json tank needs fields", "fields")
	case kind == KindSubmer && len(c.Fields) > 0:
		return cfgErr("fields are for kind http-json; the submer kind knows its fields", "fields")
	}
	seen := map[string]bool{}
	for i, f := range c.Fields {
		at := func(key string) []string { return []string{"fields", strconv.Itoa(i), key} }
		if _, err := splitPath(f.Path); err != nil {
			return cfgErr(err.Error(), at("path")...)
		}
		if !fieldRE.MatchString(f.Field) {
			return cfgErr(fmt.Sprintf("%q is not a snake_case field name", f.Field), at("field")...)
		}
		if seen[f.Field] {
			return cfgErr(fmt.Sprintf("field %s is mapped twice", f.Field), at("field")...)
		}
		seen[f.Field] = true
		switch f.Type {
		case "", "number":
			if _, err := units.Converter(f.Unit, f.Field, f.Scale); err != nil {
				return cfgErr(err.Error(), at("unit")...)
			}
		case "bool", "string":
			if f.Unit != "" || f.Scale != 0 {
				return cfgErr("unit and scale are for numbers", at("type")...)
			}
		default:
			return cfgErr(fmt.Sprintf("%q is not number, bool or string", f.Type), at("type")...)
		}
	}
	return nil
}

// resolve reads the secrets from their environment variables or files, into
// copies so the caller's configuration is left as it was.
func (c *Config) resolve() error {
	headers := make(map[string]secret.Value, len(c.Headers))
	for name, v := range c.Headers {
		if err := v.Resolve(); err != nil {
			return cfgErr(err.Error(), "headers", name)
		}
		headers[name] = v
	}
	c.Headers = headers
	if c.BasicAuth != nil {
		b := *c.BasicAuth
		if err := b.Password.Resolve(); err != nil {
			return cfgErr(err.Error(), "basic_auth", "password")
		}
		c.BasicAuth = &b
	}
	return nil
}

// withDefaults returns a copy of c with every zero option set to its default.
func (c Config) withDefaults() Config {
	if c.Kind == "" {
		c.Kind = KindSubmer
	}
	if c.Vendor == "" {
		c.Vendor = "generic"
		if c.Kind == KindSubmer {
			c.Vendor = "submer"
		}
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Kind == KindSubmer {
		if u, err := url.Parse(c.URL); err == nil && (u.Path == "" || u.Path == "/") {
			u.Path = submerPath
			c.URL = u.String()
		}
	}
	return c
}

// httpClient builds the client for c: TLS as configured, the request timeout
// applied per request by the caller, and one kept-alive connection, since a
// tank is polled once a second. Proxies from the environment are ignored: a
// tank sits on the facility network, and a proxy on the path would only add
// latency and a point of failure.
func (c Config) httpClient() (*http.Client, error) {
	tc := &tls.Config{ServerName: c.TLS.ServerName, InsecureSkipVerify: c.TLS.InsecureSkipVerify} //nolint:gosec // opt-in, documented
	if c.TLS.CAFile != "" {
		pem, err := os.ReadFile(c.TLS.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tls ca_file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls ca_file %s: no PEM certificate in it", c.TLS.CAFile)
		}
		tc.RootCAs = pool
	}
	if c.TLS.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.TLS.CertFile, c.TLS.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	tr := &http.Transport{
		TLSClientConfig:     tc,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     90 * time.Second,
	}
	// CheckRedirect keeps credentials from following a redirect elsewhere.
	return &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		return fmt.Errorf("redirected to %s: point url at the final address", req.URL.Redacted())
	}}, nil
}
