// Package configs loads heatsink's YAML configuration and holds the example
// configurations shipped with it (embedded, so `heatsink` can print them).
//
// Loading is strict: an unknown key or a value of the wrong type is an error
// naming the file, the line and the key. Every option has a default, so a
// single node needs no configuration at all.
package configs

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/alerts"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs/keypath"
	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/sensors/pdu"
	"github.com/heatsink-hpc/heatsink/sensors/tank"
	"github.com/heatsink-hpc/heatsink/workloads"
	"gopkg.in/yaml.v3"
)

// Examples holds the example configurations of this folder.
//
//go:embed *.yaml
var Examples embed.FS

// Config is the whole configuration.
type Config struct {
	// Host overrides the host tag; default the machine's hostname.
	Host string `yaml:"host"`
	// Interval between samples; default 1s.
	Interval time.Duration `yaml:"interval"`
	// Deadline for each source's sample; default half the interval.
	Deadline time.Duration `yaml:"deadline"`
	// SysfsRoot and ProcfsRoot let the node sources read another tree; default /sys and /proc.
	SysfsRoot  string `yaml:"sysfs_root"`
	ProcfsRoot string `yaml:"procfs_root"`
	// Labels are copied into every run's run.json (cooling: immersion|air, site...).
	Labels  map[string]string `yaml:"labels"`
	Sources Sources           `yaml:"sources"`
	Sinks   Sinks             `yaml:"sinks"`
	// Alerts are the rules evaluated on every tick (alerts).
	Alerts alerts.Config `yaml:"alerts"`
	// Runner configures `heatsink run`: the temperatures that gate and end
	// its phases, tolerances, and the grace period of a stopped job.
	Runner workloads.RunnerConfig `yaml:"runner"`
}

// Sources configures the sensor sources. Node sources are on by default.
type Sources struct {
	Host    NodeSource `yaml:"host"`
	Hwmon   NodeSource `yaml:"hwmon"`
	Cpufreq NodeSource `yaml:"cpufreq"`
	Rapl    NodeSource `yaml:"rapl"`
	Nvme    NodeSource `yaml:"nvme"`
	Nvml    NodeSource `yaml:"nvml"`
	// PDUs are rack PDUs read over SNMP (sensors/pdu); facility devices, so
	// usually one collector polls them for many nodes.
	PDUs []pdu.Config `yaml:"pdus"`
	// Tanks are immersion tanks or CDUs read over HTTP (sensors/tank).
	Tanks []tank.Config `yaml:"tanks"`
	// FacilityHosts names the hosts that poll the PDUs and tanks, so that
	// one configuration can be shared by every node of a site and the
	// shared devices are still polled once. Empty: every host whose
	// configuration lists them polls them.
	FacilityHosts []string `yaml:"facility_hosts"`
}

// PollsFacility reports whether host polls the PDUs and tanks.
func (s *Sources) PollsFacility(host string) bool {
	return len(s.FacilityHosts) == 0 || slices.Contains(s.FacilityHosts, host)
}

// NodeSource switches a node source and filters what it reports. Include and
// Exclude are regular expressions on a device ("chip") and on a sensor, so a
// site can silence a broken sensor without code.
type NodeSource struct {
	Disabled      bool   `yaml:"disabled"`
	DeviceInclude string `yaml:"device_include"`
	DeviceExclude string `yaml:"device_exclude"`
	SensorInclude string `yaml:"sensor_include"`
	SensorExclude string `yaml:"sensor_exclude"`
}

// filters lists the expressions under their keys, device ones first.
func (s NodeSource) filters() []struct{ key, re string } {
	return []struct{ key, re string }{
		{"device_include", s.DeviceInclude}, {"device_exclude", s.DeviceExclude},
		{"sensor_include", s.SensorInclude}, {"sensor_exclude", s.SensorExclude},
	}
}

// Sinks configures where points go besides the run directory.
type Sinks struct {
	// Stdout writes every point to standard output: "", "lp" or "json".
	Stdout string `yaml:"stdout"`
	// Influx sends every point to InfluxDB through a durable spool; on when url is set.
	Influx influx.Config `yaml:"influx"`
}

// Default returns the configuration used when no file is given.
func Default() *Config {
	c := &Config{}
	c.fill()
	return c
}

func (c *Config) fill() {
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.Deadline == 0 {
		c.Deadline = c.Interval / 2
	}
	if c.SysfsRoot == "" {
		c.SysfsRoot = "/sys"
	}
	if c.ProcfsRoot == "" {
		c.ProcfsRoot = "/proc"
	}
	c.Runner.Fill()
}

// Load reads and validates the configuration file at path.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, b)
}

// isEmptyDocument reports whether a parsed file holds no value at all.
func isEmptyDocument(root *yaml.Node) bool {
	n := root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return true
		}
		n = n.Content[0]
	}
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") || (n.Kind == yaml.MappingNode && len(n.Content) == 0)
}

// Parse decodes and validates a configuration; name is used in errors.
func Parse(name string, b []byte) (*Config, error) {
	// Decoded twice: into the struct with unknown keys refused (yaml.Node.Decode
	// would not refuse them), and into a node tree to find lines for ValueErrors.
	c := &Config{}
	var root yaml.Node
	rootErr := yaml.Unmarshal(b, &root)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, keyError(yamlError(name, err), &root)
	}
	if rootErr != nil {
		return nil, yamlError(name, rootErr)
	}
	if isEmptyDocument(&root) {
		// A file emptied or cut short by a deploy mid-write would otherwise
		// mean "all defaults": on SIGHUP, no InfluxDB and no alert rules.
		return nil, fmt.Errorf("%s: holds no settings (empty, or only comments): refused; for the defaults give no configuration file", name)
	}
	c.fill()
	if err := c.validate(); err != nil {
		var pe PathError
		if errors.As(err, &pe) {
			path := pe.ConfigPath()
			return nil, fmt.Errorf("%s:%d: %s: %s", name, LineOf(&root, path...), strings.Join(path, "."), pe.ConfigMessage())
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

var yamlLine = regexp.MustCompile(`(?m)^(\s*)(?:yaml: )?line (\d+): `)

// yamlError rewrites yaml.v3's "line N: ..." into "FILE:N: ...".
func yamlError(name string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
	msg = yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		sub := yamlLine.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		// yaml.v3 numbers parser errors from 0 and scanner errors from 1; the
		// parser's messages are the "did not find expected ..." family.
		rest := msg[strings.Index(msg, m)+len(m):]
		if strings.HasPrefix(rest, "did not find expected") {
			n++
		}
		return sub[1] + name + ":" + strconv.Itoa(n) + ": "
	})
	if !strings.Contains(msg, name+":") {
		msg = name + ": " + msg
	}
	return errors.New(strings.TrimSpace(msg))
}

var (
	fileLine    = regexp.MustCompile(`(?m)^(\s*)(\S+?):(\d+): (.*)$`)
	unknownKey  = regexp.MustCompile("^field (\\S+) not found in type \\S+$")
	wrongType   = regexp.MustCompile("^cannot unmarshal !!\\w+ `(.*)` into (\\S+)$")
	typeAsWords = map[string]string{
		"time.Duration": "a duration (such as 500ms or 2m)", "bool": "true or false",
		"int": "an integer", "int32": "an integer", "int64": "an integer", "uint": "an integer",
		"uint8": "an integer", "uint16": "an integer", "uint32": "an integer", "uint64": "an integer",
		"float32": "a number", "float64": "a number", "string": "a string",
	}
)

// keyError names the key of each decoding error yamlError located: yaml.v3
// says "field X not found in type configs.NodeSource" or "cannot unmarshal
// !!str `soon` into time.Duration", which name a Go type, not the key.
func keyError(err error, root *yaml.Node) error {
	msg := fileLine.ReplaceAllStringFunc(err.Error(), func(l string) string {
		m := fileLine.FindStringSubmatch(l)
		line, _ := strconv.Atoi(m[3])
		prefix, text := m[1]+m[2]+":"+m[3]+": ", m[4]
		if u := unknownKey.FindStringSubmatch(text); u != nil {
			if p := keyAt(root, line, u[1], nil); p != nil {
				return prefix + "unknown key " + strings.Join(p, ".")
			}
			return prefix + "unknown key " + u[1]
		}
		if w := wrongType.FindStringSubmatch(text); w != nil {
			if p := keyAt(root, line, "", nil); p != nil {
				if words, ok := typeAsWords[w[2]]; ok {
					return fmt.Sprintf("%s%s: %q is not %s", prefix, strings.Join(p, "."), w[1], words)
				}
				return prefix + strings.Join(p, ".") + ": " + text
			}
		}
		return l
	})
	return errors.New(msg)
}

// keyAt returns the path of the key written on line (the one named name,
// if given; else the deepest), nil when there is none.
func keyAt(n *yaml.Node, line int, name string, path []string) []string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if p := keyAt(c, line, name, path); p != nil {
				return p
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := append(append([]string{}, path...), k.Value)
			if deeper := keyAt(v, line, name, p); deeper != nil {
				return deeper
			}
			if k.Line == line && (name == "" || k.Value == name) {
				return p
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if p := keyAt(c, line, name, append(append([]string{}, path...), strconv.Itoa(i))); p != nil {
				return p
			}
		}
	}
	return nil
}

// ValueError is a configuration value that decoded but makes no sense; Path
// is the chain of keys leading to it, so the loader can name its line.
type ValueError = keypath.Error

// PathError is a validation error that knows which key is wrong. Packages
// with their own configuration sections (sensors/pdu, alerts...)
// return one (a *keypath.Error) from their Validate methods, with the path
// inside their section (e.g. ["rules", "3", "threshold"]); the loader
// prefixes the section's key and names the file and line. Sequence indices
// are written as decimal strings.
type PathError interface {
	error
	ConfigPath() []string
	ConfigMessage() string
}

// InSection returns err located under the section key prefix: a PathError
// keeps its inner path, any other error points at the section itself.
func InSection(err error, prefix ...string) error {
	if err == nil {
		return nil
	}
	var pe PathError
	if errors.As(err, &pe) {
		return &ValueError{Path: append(append([]string{}, prefix...), pe.ConfigPath()...), Msg: pe.ConfigMessage()}
	}
	return &ValueError{Path: prefix, Msg: err.Error()}
}

// LineOf returns the line of the key at path in a decoded YAML document, or
// the nearest enclosing key's line when the path goes deeper than the document.
func LineOf(root *yaml.Node, path ...string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, key := range path {
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					line = n.Content[i].Line
					n = n.Content[i+1]
					found = true
					break
				}
			}
			if !found {
				return line
			}
		case yaml.SequenceNode:
			var idx int
			if _, err := fmt.Sscan(key, &idx); err != nil || idx < 0 || idx >= len(n.Content) {
				return line
			}
			n = n.Content[idx]
			line = n.Line
		default:
			return line
		}
	}
	return line
}

func (c *Config) validate() error {
	if c.Interval < 10*time.Millisecond {
		return &ValueError{Path: []string{"interval"}, Msg: fmt.Sprintf("%v is below the 10ms minimum", c.Interval)}
	}
	if c.Deadline <= 0 || c.Deadline > c.Interval {
		return &ValueError{Path: []string{"deadline"}, Msg: fmt.Sprintf("%v must be positive and at most the interval (%v)", c.Deadline, c.Interval)}
	}
	if err := c.Alerts.Validate(c.Interval); err != nil {
		return InSection(err, "alerts")
	}
	if err := c.Runner.Validate(); err != nil {
		return InSection(err, "runner")
	}
	if err := c.Sinks.Influx.Validate(); err != nil {
		return InSection(err, "sinks", "influx")
	}
	if err := c.Sources.validateFacility(); err != nil {
		return err
	}
	switch c.Sinks.Stdout {
	case "", "lp", "json":
	default:
		return &ValueError{Path: []string{"sinks", "stdout"}, Msg: fmt.Sprintf("%q is not one of lp, json", c.Sinks.Stdout)}
	}
	// In a fixed order, that of Sources, so that of two bad values the
	// same one is named on every run (ranging over a map was random).
	nodes := []struct {
		name string
		src  NodeSource
		// sensors is false for sources whose devices (cpuN, zones,
		// mem/load) have no sensors of their own: a sensor filter there
		// would be silently ignored.
		sensors bool
	}{
		{"host", c.Sources.Host, false}, {"hwmon", c.Sources.Hwmon, true}, {"cpufreq", c.Sources.Cpufreq, false},
		{"rapl", c.Sources.Rapl, false}, {"nvme", c.Sources.Nvme, true}, {"nvml", c.Sources.Nvml, true},
	}
	for _, n := range nodes {
		for _, e := range n.src.filters() {
			if _, err := regexp.Compile(e.re); err != nil {
				return &ValueError{Path: []string{"sources", n.name, e.key}, Msg: fmt.Sprintf("bad regular expression: %v", err)}
			}
		}
	}
	for _, n := range nodes {
		for _, e := range n.src.filters() {
			if !n.sensors && strings.HasPrefix(e.key, "sensor_") && e.re != "" {
				return &ValueError{Path: []string{"sources", n.name, e.key}, Msg: n.name + " has no sensors to filter; use device_include or device_exclude"}
			}
		}
	}
	// Last, so a section's own, more particular message wins.
	return checkRanges(c)
}

// JSON renders the configuration as JSON with its YAML keys (so run.json
// shows what a user would write), durations as strings and secrets redacted.
func JSON(c *Config) ([]byte, error) {
	y, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	var m any
	if err := yaml.Unmarshal(y, &m); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return json.Marshal(m)
}

// validateFacility checks the PDU and tank entries; each must have a name of
// its own, since the name tags its points and names its source.
func (s *Sources) validateFacility() error {
	for i, h := range s.FacilityHosts {
		if strings.TrimSpace(h) == "" || strings.ContainsAny(h, " ,") {
			return &ValueError{Path: []string{"sources", "facility_hosts", strconv.Itoa(i)}, Msg: fmt.Sprintf("%q is not a host name", h)}
		}
	}
	names := map[string]bool{}
	for i := range s.PDUs {
		at := []string{"sources", "pdus", strconv.Itoa(i)}
		if err := s.PDUs[i].Validate(); err != nil {
			return InSection(err, at...)
		}
		if names["pdu:"+s.PDUs[i].Name] {
			return &ValueError{Path: append(at, "name"), Msg: fmt.Sprintf("a second PDU named %q", s.PDUs[i].Name)}
		}
		names["pdu:"+s.PDUs[i].Name] = true
	}
	for i := range s.Tanks {
		at := []string{"sources", "tanks", strconv.Itoa(i)}
		if err := s.Tanks[i].Validate(); err != nil {
			return InSection(err, at...)
		}
		if names["tank:"+s.Tanks[i].Name] {
			return &ValueError{Path: append(at, "name"), Msg: fmt.Sprintf("a second tank named %q", s.Tanks[i].Name)}
		}
		names["tank:"+s.Tanks[i].Name] = true
	}
	return nil
}

// SecretEnv names the environment variables the configuration's {env: NAME}
// secrets come from, for children to be started without them.
func (c *Config) SecretEnv() []string { return secret.EnvNames(c) }
