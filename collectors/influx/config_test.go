package influx_test

import (
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
)

func TestConfigErrorsNameTheKeyAndLine(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"sinks:\n  influx:\n    url: ftp://x\n    bucket: b\n", "cfg.yaml:3: sinks.influx.url:"},
		{"sinks:\n  influx:\n    url: http://x:8086\n", "cfg.yaml:2: sinks.influx.bucket: required"},
		{"sinks:\n  influx:\n    url: http://x:8086\n    bucket: b\n    batch_size: -1\n", "cfg.yaml:5: sinks.influx.batch_size:"},
		{"sinks:\n  influx:\n    url: http://x:8086\n    bucket: b\n    spool_max_bytes: 1000\n", "cfg.yaml:5: sinks.influx.spool_max_bytes: 1000 is below"},
		{"sinks:\n  influx:\n    url: https://x\n    bucket: b\n    tls:\n      cert_file: c.pem\n", "cfg.yaml:5: sinks.influx.tls: cert_file and key_file go together"},
		{"sinks:\n  influx:\n    url: http://x\n    bucket: b\n    tokn: abc\n", "cfg.yaml:5: unknown key sinks.influx.tokn"},
	}
	for _, tc := range cases {
		_, err := configs.Parse("cfg.yaml", []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestConfigTokenIsNeverPrinted(t *testing.T) {
	c, err := configs.Parse("cfg.yaml", []byte("sinks:\n  influx:\n    url: http://x:8086\n    bucket: db/rp\n    token: user:hunter2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !influx.ConfigOf(c).Enabled() || influx.ConfigOf(c).Token.Reveal() != "user:hunter2" {
		t.Fatalf("parsed %+v", influx.ConfigOf(c))
	}
	b, err := configs.JSON(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hunter2") {
		t.Errorf("run.json form of the config shows the token: %s", b)
	}
}

// Credentials in the URL would be printed wherever the URL is (run.json,
// logs, errors): they are refused, and the refusal itself keeps them out.
func TestConfigRefusesCredentialsInTheURL(t *testing.T) {
	for _, u := range []string{"http://admin:hunter2@x:8086", "https://hunter2@x", "http://admin:hunter2@x y"} {
		_, err := configs.Parse("cfg.yaml", []byte("sinks:\n  influx:\n    url: \""+u+"\"\n    bucket: b\n"))
		if err == nil {
			t.Errorf("%s accepted", u)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the password: %v", u, err)
		}
		if !strings.Contains(err.Error(), "cfg.yaml:3: sinks.influx.url") {
			t.Errorf("%s: error %v does not name the key", u, err)
		}
	}
}
