package pdu_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/sensors/pdu"
)

// A PDU section in a heatsink configuration file: errors name the file, the
// line and the key, as for every other section.
func TestConfigFileErrorsNameLineAndKey(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"sources:\n  pdus:\n    - name: rack1\n      target: 10.0.0.2\n      preset: eaton\n", "c.yaml:5: sources.pdus.0.preset: unknown preset"},
		{"sources:\n  pdus:\n    - name: a\n      target: h\n      preset: apc-rpdu2\n    - name: b\n      target: h\n      version: 3\n      v3:\n        user: u\n        level: loud\n",
			"c.yaml:11: sources.pdus.1.v3.level"},
		{"sources:\n  pdus:\n    - name: a\n      target: h\n      oids:\n        - {oid: .1.3.6.1.4, field: power_w, unit: A}\n", "c.yaml:6: sources.pdus.0.oids.0.unit"},
		{"sources:\n  pdus:\n    - name: a\n      target: h\n      preset: apc-rpdu2\n      comunity: x\n", "c.yaml:6"},
		{"sources:\n  pdus:\n    - name: a\n      target: h\n      preset: apc-rpdu2\n    - name: a\n      target: h2\n      preset: apc-rpdu2\n", "c.yaml:6: sources.pdus.1.name: a second PDU"},
	}
	for _, tt := range tests {
		_, err := configs.Parse("c.yaml", []byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse:\n%s\nerr = %v\nwant %q", tt.yaml, err, tt.want)
		}
	}
}

// The commented SNMPv3 PDU of configs/air-node.yaml is valid as written, and
// its secrets are read when the source is built.
func TestAirNodeExampleV3EntryParses(t *testing.T) {
	b, err := configs.Examples.ReadFile("air-node.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := regexp.MustCompile(`(?m)^    # `).ReplaceAllString(string(b), "    ")
	cfg, err := configs.Parse("air-node.yaml (uncommented)", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	pdus := *cfg.Section("sources.pdus").(*[]pdu.Config)
	if len(pdus) != 2 {
		t.Fatalf("%d PDUs, want 2", len(pdus))
	}
	v3 := pdus[1]
	if v3.Version != "3" || v3.V3.AuthProtocol != "SHA-256" || len(v3.OIDs) != 1 {
		t.Errorf("v3 entry: %+v", v3)
	}
	t.Setenv("PDU_AUTH_PASSWORD", "auth-secret-1")
	if _, err := pdu.New(v3); err == nil || !strings.Contains(err.Error(), "v3.priv_password") {
		t.Errorf("New with the priv file missing = %v, want a priv_password error", err)
	}
	priv := t.TempDir() + "/priv"
	os.WriteFile(priv, []byte("priv-secret-1\n"), 0o600)
	v3.V3.PrivPassword.File = priv
	s, err := pdu.New(v3)
	if err != nil {
		t.Fatal(err)
	}
	if d := strings.Join(s.Describe(), " "); strings.Contains(d, "secret") {
		t.Errorf("Describe shows a secret: %s", d)
	}
}
