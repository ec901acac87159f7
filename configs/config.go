// Package configs loads heatsink's YAML configuration and holds the example
// configurations shipped with it (embedded, so `heatsink` can print them).
//
// Loading is strict: an unknown key or a value of the wrong type is an error
// naming the file, the line and the key. Every option has a default, so a
// single node needs no configuration at all.
//
// Besides the core (host, interval, roots, labels), the file's sections
// belong to the packages that registered them (package registry): a source
// under sources:, a sink under sinks: (InfluxDB, stdout), the alert rules, the
// runner. The loader asks the registry for their types and imports none of
// those packages; Config.Section returns a section, and each owner has a
// typed accessor (alerts.ConfigOf, influx.ConfigOf...).
package configs

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/configs/secret"
	"github.com/heatsink-hpc/heatsink/registry"
	"github.com/heatsink-hpc/heatsink/registry/keypath"
	"gopkg.in/yaml.v3"
)

// Examples holds the example configurations of this folder.
//
//go:embed *.yaml
var Examples embed.FS

// Core is the part of the configuration that is the node's own, whatever
// sources and sinks are compiled in.
type Core struct {
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
	Labels map[string]string `yaml:"labels"`
	// Removes names, as dotted key paths ("sinks.influx",
	// "alerts.rules.NAME", "sources.pdus.NAME.community"), what this file
	// drops on purpose from the one a running agent applied: a reload
	// refuses a file that merely no longer mentions a key the running one
	// wrote, since a file cut short by a write in progress looks exactly
	// like that (docs/configuration.md).
	Removes []string `yaml:"removes,omitempty"`
}

// SourcesCore is what sources: holds besides the registered sources' sections.
type SourcesCore struct {
	// FacilityHosts names the hosts that poll the PDUs and tanks, so that
	// one configuration can be shared by every node of a site and the
	// shared devices are still polled once. Empty: every host whose
	// configuration lists them polls them.
	FacilityHosts []string `yaml:"facility_hosts"`
}

// PollsFacility reports whether host polls the PDUs and tanks.
func (s *SourcesCore) PollsFacility(host string) bool {
	return len(s.FacilityHosts) == 0 || slices.Contains(s.FacilityHosts, host)
}

// Config is the whole configuration: the core, and a section for every
// registered source (under sources:) and section (alerts, runner,
// sinks.influx...), found with Section. A Config is one document: the
// core's fields and the sections are the document's, so what a command
// changes (a flag) is what JSON shows.
type Config struct {
	*Core
	Sources *SourcesCore

	doc      reflect.Value // *struct{...} built by documentType
	sections map[string]any
	root     *yaml.Node // the file as parsed; nil for Default
}

// Section returns the section at key ("alerts", "sinks.influx", or
// "sources." and a source kind's name) as the pointer its New returned,
// holding what the file said (the defaults when it said nothing). It is nil
// for a key nothing registered.
func (c *Config) Section(key string) any { return c.sections[key] }

// Default returns the configuration used when no file is given.
func Default() *Config {
	c := newConfig()
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
	for _, s := range c.sections {
		if f, ok := s.(interface{ Fill() }); ok {
			f.Fill()
		}
	}
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
	c := newConfig()
	var root yaml.Node
	rootErr := yaml.Unmarshal(b, &root)
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c.doc.Interface()); err != nil && !errors.Is(err, io.EOF) {
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
	c.root = &root
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
	unknownKey  = regexp.MustCompile("^field (\\S+) not found in type .+$")
	wrongType   = regexp.MustCompile("^cannot unmarshal !!\\w+ `(.*)` into (\\S+)$")
	typeAsWords = map[string]string{
		"time.Duration": "a duration (such as 500ms or 2m)", "bool": "true or false",
		"int": "an integer", "int32": "an integer", "int64": "an integer", "uint": "an integer",
		"uint8": "an integer", "uint16": "an integer", "uint32": "an integer", "uint64": "an integer",
		"float32": "a number", "float64": "a number", "string": "a string",
	}
)

// keyError names the key of each decoding error yamlError located: yaml.v3
// says "field X not found in type struct { ... }" or "cannot unmarshal
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

// KeyPaths returns every key the file wrote, as dotted paths
// ("sinks.influx.spool_dir"), an item of a list of mappings known by its
// name ("alerts.rules.cpu_hot.for"; by its index without one), and, apart,
// those whose value it wrote as an explicitly empty list or mapping
// (`rules: []`): a deliberate "none", which a file cut short cannot say.
// A reload compares them with the running file's (node): what a file cut
// short by a write in progress loses is exactly its last keys.
func (c *Config) KeyPaths() (paths, empty []string) {
	if c.root == nil {
		return nil, nil
	}
	n := c.root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		join := func(k string) string {
			if prefix == "" {
				return k
			}
			return prefix + "." + k
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p, v := join(n.Content[i].Value), n.Content[i+1]
				paths = append(paths, p)
				if (v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode) && len(v.Content) == 0 {
					empty = append(empty, p)
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, item := range n.Content {
				if item.Kind != yaml.MappingNode {
					continue // a list of plain values is one setting
				}
				id := strconv.Itoa(i)
				for j := 0; j+1 < len(item.Content); j += 2 {
					if item.Content[j].Value == "name" && item.Content[j+1].Kind == yaml.ScalarNode {
						id = item.Content[j+1].Value
					}
				}
				p := join(id)
				paths = append(paths, p)
				walk(item, p)
			}
		case yaml.AliasNode:
			if n.Alias != nil {
				walk(n.Alias, prefix)
			}
		}
	}
	walk(n, "")
	return paths, empty
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
	for _, s := range registry.Sections() {
		if s.Validate == nil {
			continue
		}
		if err := s.Validate(c.sections[s.Key], c.Interval); err != nil {
			return InSection(err, strings.Split(s.Key, ".")...)
		}
	}
	for i, r := range c.Removes {
		if r == "" || strings.ContainsAny(r, " \t") || strings.HasPrefix(r, ".") || strings.HasSuffix(r, ".") || strings.Contains(r, "..") {
			return &ValueError{Path: []string{"removes", strconv.Itoa(i)}, Msg: fmt.Sprintf("%q is not a dotted key path such as sinks.influx or alerts.rules.NAME", r)}
		}
	}
	for i, h := range c.Sources.FacilityHosts {
		if strings.TrimSpace(h) == "" || strings.ContainsAny(h, " ,") {
			return &ValueError{Path: []string{"sources", "facility_hosts", strconv.Itoa(i)}, Msg: fmt.Sprintf("%q is not a host name", h)}
		}
	}
	// Facility devices first, then the node's own sources, each in the
	// registry's order, so that of two bad values the same one is named
	// on every run.
	kinds := registry.SourceKinds()
	slices.SortStableFunc(kinds, func(a, b registry.SourceKind) int {
		return cmp.Compare(btoi(!a.Facility), btoi(!b.Facility))
	})
	for _, k := range kinds {
		if k.Validate == nil {
			continue
		}
		if err := k.Validate(c.sections["sources."+k.Name]); err != nil {
			return InSection(err, "sources", k.Name)
		}
	}
	// Last, so a section's own, more particular message wins.
	return checkRanges(c)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// JSON renders the configuration as JSON with its YAML keys (so run.json
// shows what a user would write), durations as strings and secrets redacted.
func JSON(c *Config) ([]byte, error) {
	y, err := yaml.Marshal(c.doc.Interface())
	if err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	var m any
	if err := yaml.Unmarshal(y, &m); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return json.Marshal(m)
}

// SecretEnv names the environment variables the configuration's {env: NAME}
// secrets come from, for children to be started without them.
func (c *Config) SecretEnv() []string { return secret.EnvNames(c) }
