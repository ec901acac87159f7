package pdu

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/registry/keypath"
	"github.com/heatsink-hpc/heatsink/sensors/units"
)

// Defaults applied by New to a Config's zero fields.
const (
	DefaultPort     = 161
	DefaultTimeout  = 200 * time.Millisecond
	DefaultRetries  = 1
	DefaultMaxOIDs  = 60 // gosnmp's limit for one Get; many agents take more
	DefaultVoltageV = 208.0
)

// Config describes one PDU, as written in the `pdus:` list of a heatsink
// configuration:
//
//	pdus:
//	  - name: rack1
//	    target: 10.0.0.20
//	    version: 2c
//	    community: {env: PDU_COMMUNITY}
//	    preset: apc-rpdu2
//	    phases: 1
//	    banks: 2
//	    voltage_v: 208
//	    oids:
//	      - {oid: .1.3.6.1.4.1.318.1.1.26.9.4.3.1.6.3, field: current_a, unit: A, scale: 0.1, outlet: 3}
type Config struct {
	// Name tags every point (pdu=NAME) and names the source ("pdu:NAME").
	Name string `yaml:"name"`
	// Target is the agent's host name or address; Port defaults to 161.
	Target string `yaml:"target"`
	Port   uint16 `yaml:"port"`
	// Version is the SNMP version: 1, 2c (default) or 3.
	Version string `yaml:"version"`
	// Community is the v1/v2c community; default "public".
	Community secret.Value `yaml:"community"`
	// V3 holds the user-based security parameters for version 3.
	V3 V3 `yaml:"v3"`
	// Timeout bounds one request (default 200ms); Retries are extra attempts
	// (default 1). The defaults keep Timeout*(Retries+1) under the
	// collector's default 500ms deadline; keep it so when changing them.
	Timeout time.Duration `yaml:"timeout"`
	Retries *int          `yaml:"retries"`
	// MaxOIDs is how many OIDs go in one Get request; more are split into
	// several requests (default 60).
	MaxOIDs int `yaml:"max_oids"`
	// Preset adds the OIDs of a known MIB: "apc-rpdu2" (PowerNet-MIB rPDU2,
	// current Switched/Metered PDUs) or "apc-rpdu" (legacy rPDULoadStatusLoad,
	// AP78xx-era units that report current only).
	Preset string `yaml:"preset"`
	// Phases and Banks are how many phase and bank rows the preset reads
	// (indices 1..N); Phases defaults to 1, Banks to 0.
	Phases int `yaml:"phases"`
	Banks  int `yaml:"banks"`
	// Device turns the apc-rpdu2 device-wide power and energy readings off
	// when false (for units whose firmware lacks them); default true.
	Device *bool `yaml:"device"`
	// VoltageV is the supply voltage used to derive power where the PDU
	// reports only current; default 208 V (single phase, the reference site).
	VoltageV float64 `yaml:"voltage_v"`
	// OIDs are readings beyond (or instead of) the preset.
	OIDs []OID `yaml:"oids"`
}

// V3 holds SNMPv3 user-based security model settings.
type V3 struct {
	User string `yaml:"user"`
	// Level is noAuthNoPriv, authNoPriv or authPriv (default: the strongest
	// the given passwords allow).
	Level string `yaml:"level"`
	// AuthProtocol: MD5, SHA (default), SHA-224, SHA-256, SHA-384, SHA-512.
	AuthProtocol string       `yaml:"auth_protocol"`
	AuthPassword secret.Value `yaml:"auth_password"`
	// PrivProtocol: DES, AES (default, AES-128), AES-192, AES-256 (Blumenthal),
	// AES-192C, AES-256C (Reeder, as Cisco does it).
	PrivProtocol string       `yaml:"priv_protocol"`
	PrivPassword secret.Value `yaml:"priv_password"`
	ContextName  string       `yaml:"context_name"`
}

// OID is one generic reading: the value is raw*scale in Unit, converted to
// the unit of Field's suffix. Phase, Bank or Outlet tag the reading when set.
type OID struct {
	OID    string  `yaml:"oid"`
	Field  string  `yaml:"field"`
	Unit   string  `yaml:"unit"`
	Scale  float64 `yaml:"scale"`
	Phase  int     `yaml:"phase"`
	Bank   int     `yaml:"bank"`
	Outlet int     `yaml:"outlet"`
	// Name labels the OID in errors; default the OID itself.
	Name string `yaml:"name"`
}

// ConfigError is a configuration value that makes no sense; Path locates it
// inside one PDU's entry so the configuration loader can name its line.
type ConfigError = keypath.Error

func cfgErr(msg string, path ...string) error { return keypath.New(msg, path...) }

var (
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	oidRE   = regexp.MustCompile(`^\.?[0-9]+(\.[0-9]+)+$`)
	fieldRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

var (
	authProtocols = []string{"MD5", "SHA", "SHA-224", "SHA-256", "SHA-384", "SHA-512"}
	privProtocols = []string{"DES", "AES", "AES-192", "AES-256", "AES-192C", "AES-256C"}
)

// Validate checks the configuration. It does not read the secrets, so a
// configuration can be checked where they are not available; New does.
func (c *Config) Validate() error {
	if !nameRE.MatchString(c.Name) {
		return cfgErr(fmt.Sprintf("%q is not a PDU name (letters, digits, _ . -)", c.Name), "name")
	}
	if c.Target == "" {
		return cfgErr("missing: the PDU's host name or address", "target")
	}
	if c.Timeout < 0 {
		return cfgErr("must be positive", "timeout")
	}
	if c.Retries != nil && (*c.Retries < 0 || *c.Retries > 10) {
		return cfgErr(fmt.Sprintf("%d is not between 0 and 10", *c.Retries), "retries")
	}
	if c.MaxOIDs < 0 {
		return cfgErr("must be positive", "max_oids")
	}
	if c.VoltageV < 0 || c.VoltageV > 1000 {
		return cfgErr(fmt.Sprintf("%g V is not a supply voltage", c.VoltageV), "voltage_v")
	}
	switch c.Version {
	case "", "1", "2c":
		if c.V3 != (V3{}) {
			return cfgErr("v3 settings given but version is not 3", "v3")
		}
	case "3":
		if err := c.V3.validate(); err != nil {
			return err
		}
		if c.Community.IsSet() {
			return cfgErr("SNMPv3 has no community; give v3.user and passwords", "community")
		}
	default:
		return cfgErr(fmt.Sprintf("%q is not an SNMP version (1, 2c, 3)", c.Version), "version")
	}
	switch c.Preset {
	case "", PresetAPCRPDU2, PresetAPCRPDU:
	default:
		return cfgErr(fmt.Sprintf("unknown preset %q (known: %s, %s)", c.Preset, PresetAPCRPDU2, PresetAPCRPDU), "preset")
	}
	if c.Phases < 0 || c.Phases > 64 {
		return cfgErr(fmt.Sprintf("%d phases", c.Phases), "phases")
	}
	if c.Banks < 0 || c.Banks > 64 {
		return cfgErr(fmt.Sprintf("%d banks", c.Banks), "banks")
	}
	if c.Preset == "" && len(c.OIDs) == 0 {
		return cfgErr("nothing to read: give a preset or oids", "oids")
	}
	for i, o := range c.OIDs {
		at := func(key string) []string { return []string{"oids", strconv.Itoa(i), key} }
		if !oidRE.MatchString(o.OID) {
			return cfgErr(fmt.Sprintf("%q is not a numeric OID (.1.3.6.1...)", o.OID), at("oid")...)
		}
		if !fieldRE.MatchString(o.Field) {
			return cfgErr(fmt.Sprintf("%q is not a snake_case field name with a unit suffix (current_a, power_w)", o.Field), at("field")...)
		}
		if _, err := units.Converter(o.Unit, o.Field, o.Scale); err != nil {
			return cfgErr(err.Error(), at("unit")...)
		}
		if o.Phase < 0 || o.Bank < 0 || o.Outlet < 0 {
			return cfgErr("phase, bank and outlet numbers start at 1", at("oid")...)
		}
		if n := btoi(o.Phase > 0) + btoi(o.Bank > 0) + btoi(o.Outlet > 0); n > 1 {
			return cfgErr("give at most one of phase, bank, outlet", at("oid")...)
		}
	}
	return nil
}

func (v *V3) validate() error {
	if v.User == "" {
		return cfgErr("missing: SNMPv3 needs a user", "v3", "user")
	}
	if v.AuthProtocol != "" && !oneOf(v.AuthProtocol, authProtocols) {
		return cfgErr(fmt.Sprintf("%q is not one of %s", v.AuthProtocol, strings.Join(authProtocols, ", ")), "v3", "auth_protocol")
	}
	if v.PrivProtocol != "" && !oneOf(v.PrivProtocol, privProtocols) {
		return cfgErr(fmt.Sprintf("%q is not one of %s", v.PrivProtocol, strings.Join(privProtocols, ", ")), "v3", "priv_protocol")
	}
	level := v.level()
	switch level {
	case "noAuthNoPriv":
	case "authNoPriv", "authPriv":
		if !v.AuthPassword.IsSet() {
			return cfgErr(level+" needs an auth_password", "v3", "auth_password")
		}
		if level == "authPriv" && !v.PrivPassword.IsSet() {
			return cfgErr("authPriv needs a priv_password", "v3", "priv_password")
		}
	default:
		return cfgErr(fmt.Sprintf("%q is not noAuthNoPriv, authNoPriv or authPriv", v.Level), "v3", "level")
	}
	return nil
}

// level returns the configured security level, or the strongest the given
// passwords allow.
func (v *V3) level() string {
	if v.Level != "" {
		return v.Level
	}
	switch {
	case v.AuthPassword.IsSet() && v.PrivPassword.IsSet():
		return "authPriv"
	case v.AuthPassword.IsSet():
		return "authNoPriv"
	}
	return "noAuthNoPriv"
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func oneOf(s string, list []string) bool {
	for _, l := range list {
		if strings.EqualFold(s, l) {
			return true
		}
	}
	return false
}

// resolve reads the secrets from their environment variables or files.
func (c *Config) resolve() error {
	if err := c.Community.Resolve(); err != nil {
		return cfgErr(err.Error(), "community")
	}
	for _, p := range []struct {
		v   *secret.Value
		key string
	}{{&c.V3.AuthPassword, "auth_password"}, {&c.V3.PrivPassword, "priv_password"}} {
		if err := p.v.Resolve(); err != nil {
			return cfgErr(err.Error(), "v3", p.key)
		}
		// net-snmp and RFC 3414 refuse passphrases under 8 characters.
		if p.v.IsSet() && len(p.v.Reveal()) < 8 {
			return cfgErr("must be at least 8 characters (RFC 3414)", "v3", p.key)
		}
	}
	return nil
}

// withDefaults returns a copy of c with every zero option set to its default.
func (c Config) withDefaults() Config {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Version == "" {
		c.Version = "2c"
	}
	if c.Version != "3" && !c.Community.IsSet() {
		c.Community = secret.Literal("public")
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Retries == nil {
		r := DefaultRetries
		c.Retries = &r
	}
	if c.MaxOIDs == 0 {
		c.MaxOIDs = DefaultMaxOIDs
	}
	if c.Preset != "" && c.Phases == 0 {
		c.Phases = 1
	}
	if c.Device == nil {
		t := true
		c.Device = &t
	}
	if c.VoltageV == 0 {
		c.VoltageV = DefaultVoltageV
	}
	return c
}
