package pdu

import (
	"errors"
	"strings"
	"testing"

	"github.com/gosnmp/gosnmp"
	"github.com/heatsink-hpc/heatsink/configs/secret"
)

func TestNumeric(t *testing.T) {
	tests := []struct {
		v       gosnmp.SnmpPDU
		want    float64
		wantErr string
	}{
		{gosnmp.SnmpPDU{Type: gosnmp.Integer, Value: -5}, -5, ""},
		{gosnmp.SnmpPDU{Type: gosnmp.Gauge32, Value: uint(84)}, 84, ""},
		{gosnmp.SnmpPDU{Type: gosnmp.Counter32, Value: uint(4294967295)}, 4294967295, ""},
		{gosnmp.SnmpPDU{Type: gosnmp.Counter64, Value: uint64(1 << 40)}, 1 << 40, ""},
		{gosnmp.SnmpPDU{Type: gosnmp.OpaqueFloat, Value: float32(1.5)}, 1.5, ""},
		{gosnmp.SnmpPDU{Type: gosnmp.NoSuchInstance}, 0, "no such object"},
		{gosnmp.SnmpPDU{Type: gosnmp.NoSuchObject}, 0, "no such object"},
		{gosnmp.SnmpPDU{Type: gosnmp.EndOfMibView}, 0, "no such object"},
		{gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte("12.5")}, 0, `wrong type: OctetString "12.5"`},
		{gosnmp.SnmpPDU{Type: gosnmp.IPAddress, Value: "10.0.0.1"}, 0, "wrong type: IPAddress"},
		{gosnmp.SnmpPDU{Type: gosnmp.Null}, 0, "wrong type: Null"},
		{gosnmp.SnmpPDU{Type: gosnmp.Integer, Value: "7"}, 0, "wrong type: Integer (string)"},
	}
	for _, tt := range tests {
		got, err := Numeric(tt.v)
		if tt.wantErr == "" {
			if err != nil || got != tt.want {
				t.Errorf("Numeric(%v %v) = %v, %v; want %v", tt.v.Type, tt.v.Value, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Numeric(%v %v) err = %v, want %q", tt.v.Type, tt.v.Value, err, tt.wantErr)
		}
	}
}

func TestValidateNamesTheBadKey(t *testing.T) {
	base := func() Config {
		return Config{Name: "rack1", Target: "10.0.0.2", Preset: PresetAPCRPDU2}
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		path   string
		msg    string
	}{
		{"no name", func(c *Config) { c.Name = "" }, "name", "not a PDU name"},
		{"no target", func(c *Config) { c.Target = "" }, "target", "missing"},
		{"version", func(c *Config) { c.Version = "2" }, "version", "not an SNMP version"},
		{"preset", func(c *Config) { c.Preset = "eaton" }, "preset", "unknown preset"},
		{"nothing", func(c *Config) { c.Preset = "" }, "oids", "nothing to read"},
		{"retries", func(c *Config) { r := -1; c.Retries = &r }, "retries", "not between"},
		{"v3 without user", func(c *Config) { c.Version = "3" }, "v3.user", "needs a user"},
		{"v3 with community", func(c *Config) {
			c.Version, c.V3, c.Community = "3", V3{User: "u"}, secret.Literal("public")
		}, "community", "no community"},
		{"v3 short password (at New)", func(c *Config) {
			c.Version, c.V3 = "3", V3{User: "u", AuthPassword: secret.Literal("short")}
		}, "v3.auth_password", "8 characters"},
		{"v3 priv without auth", func(c *Config) {
			c.Version, c.V3 = "3", V3{User: "u", Level: "authPriv", AuthPassword: secret.Literal("longenough")}
		}, "v3.priv_password", "needs a priv_password"},
		{"v3 protocol", func(c *Config) {
			c.Version, c.V3 = "3", V3{User: "u", AuthProtocol: "SHA-1024"}
		}, "v3.auth_protocol", "not one of"},
		{"v3 level", func(c *Config) { c.Version, c.V3 = "3", V3{User: "u", Level: "paranoid"} }, "v3.level", "not noAuthNoPriv"},
		{"v3 on v2c", func(c *Config) { c.V3 = V3{User: "u"} }, "v3", "version is not 3"},
		{"community env unset (at New)", func(c *Config) {
			c.Community = secret.Value{Env: "HEATSINK_TEST_UNSET_COMMUNITY"}
		}, "community", "HEATSINK_TEST_UNSET_COMMUNITY is not set"},
		{"bad oid", func(c *Config) { c.OIDs = []OID{{OID: "1.3.x", Field: "current_a"}} }, "oids.0.oid", "not a numeric OID"},
		{"bad field", func(c *Config) { c.OIDs = []OID{{OID: ".1.3.6.1", Field: "Current"}} }, "oids.0.field", "snake_case"},
		{"unit mismatch", func(c *Config) { c.OIDs = []OID{{OID: ".1.3.6.1", Field: "power_w", Unit: "A"}} }, "oids.0.unit", "is a current"},
		{"two tags", func(c *Config) { c.OIDs = []OID{{OID: ".1.3.6.1", Field: "current_a", Phase: 1, Outlet: 2}} }, "oids.0.oid", "at most one"},
		{"voltage", func(c *Config) { c.VoltageV = -1 }, "voltage_v", "not a supply voltage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.mutate(&c)
			err := c.Validate()
			if strings.HasSuffix(tt.name, "(at New)") {
				if err != nil {
					t.Fatalf("Validate() = %v; secrets are New's to check", err)
				}
				_, err = New(c)
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

func TestNewRefusesAnOIDReadTwice(t *testing.T) {
	c := Config{Name: "rack1", Target: "10.0.0.2", Preset: PresetAPCRPDU2,
		OIDs: []OID{{OID: oidRPDU2PhaseStatusCurrent + ".1", Field: "current_a"}}}
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), "read twice") {
		t.Errorf("New = %v, want 'read twice'", err)
	}
	c.OIDs = []OID{{OID: ".1.3.6.1.9.1", Field: "current_a", Phase: 1}}
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), "both give current_a of the same phase 1") {
		t.Errorf("New = %v, want a duplicate-field error", err)
	}
}

func TestDefaults(t *testing.T) {
	s, err := New(Config{Name: "r", Target: "h", Preset: PresetAPCRPDU2})
	if err != nil {
		t.Fatal(err)
	}
	c := s.cfg
	if c.Port != 161 || c.Version != "2c" || c.Community.Reveal() != "public" || c.Timeout != DefaultTimeout ||
		*c.Retries != 1 || c.MaxOIDs != 60 || c.Phases != 1 || c.VoltageV != 208 || !*c.Device {
		t.Errorf("defaults: %+v", c)
	}
	if len(s.readings) != 4 { // device power+energy, phase current+power
		t.Errorf("%d readings, want 4", len(s.readings))
	}
}
