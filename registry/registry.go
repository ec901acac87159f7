// Package registry is where sources, sinks and configuration sections
// register themselves, the way node_exporter's collectors and Telegraf's
// inputs and outputs do: a source's or a sink's package says, in an init
// function of its register.go, its name, the type of its configuration
// section and how to build it. The configuration loader asks the registry
// for the section types and the node builds, reloads and reports sources
// and sinks through it, so neither imports one, and adding a source or a
// sink is its package plus one import line (node/registered.go).
//
// The registry imports nothing of heatsink but the point type and its own
// keypath (the error a section returns), so that any package may register
// and the loader stays below every source and sink.
package registry

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// Source is what a source kind builds. It has the method set of
// collectors.Source, so a registered source is a collector's source; it is
// declared again here so that the registry, and the loader that uses it,
// need not import the engine.
type Source interface {
	Name() string
	Discover(ctx context.Context) error
	Sample(ctx context.Context, t time.Time, buf []point.Point) ([]point.Point, error)
}

// Env is what every source is built with besides its own section.
type Env struct {
	// SysfsRoot and ProcfsRoot are the trees the node sources read
	// (fixture trees in tests and benchmarks).
	SysfsRoot, ProcfsRoot string
	// Host is the host tag of the node.
	Host string
}

// SourceKind is one kind of source: a section under `sources:` of the
// configuration and the constructor of its sources.
type SourceKind struct {
	// Name is the key of the section under sources: ("hwmon", "pdus").
	Name string
	// Order places the kind among the others wherever every source is
	// listed (heatsink sensors, run.json, the order in which configuration
	// errors are found); ties go by name. The node's own sources use
	// 10-60, facility devices 100 and up.
	Order int
	// New returns a fresh section, a pointer to a value with yaml tags
	// holding the defaults; the loader decodes the section into it,
	// refusing keys it does not know.
	New func() any
	// Validate checks a decoded section; an error that is a
	// configs.PathError names the key within the section. Optional.
	Validate func(section any) error
	// Build makes the sources a section configures: none when the section
	// disables them, several for a list (one per PDU).
	Build func(env Env, section any) ([]Source, error)
	// Facility marks devices shared by many nodes (PDUs, tanks): only the
	// hosts sources.facility_hosts names poll them.
	Facility bool
	// Part returns the part of the section the named source was built
	// from, so a reload can keep a source whose part did not change while
	// its neighbours in the list did. Optional: the whole section.
	Part func(section any, source string) any
}

// Section is a configuration section owned by a package other than a
// source: alerts, runner; RegisterSink registers a sink's as sinks.NAME.
type Section struct {
	// Key is the section's place in the file: a top-level key ("alerts")
	// or one under sinks ("sinks.influx").
	Key string
	// New and Validate are as in SourceKind; Validate also receives the
	// sampling interval, which some sections are checked against.
	New      func() any
	Validate func(section any, interval time.Duration) error
}

// A registry is filled by init functions and only read afterwards; the
// lock is there for tests that register from several goroutines.
var (
	mu       sync.RWMutex
	kinds    = map[string]SourceKind{}
	sections = map[string]Section{}
)

// RegisterSource adds a kind of source. It panics on a second kind of the
// same name or a kind without New or Build: both are mistakes in the code,
// found by the first test that runs it.
func RegisterSource(k SourceKind) {
	if k.Name == "" || k.New == nil || k.Build == nil {
		panic(fmt.Sprintf("registry: source kind %q needs a name, New and Build", k.Name))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := kinds[k.Name]; dup {
		panic("registry: a second source kind named " + k.Name)
	}
	kinds[k.Name] = k
}

// RegisterSection adds a configuration section; it panics as RegisterSource does.
func RegisterSection(s Section) {
	if s.Key == "" || s.New == nil {
		panic(fmt.Sprintf("registry: section %q needs a key and New", s.Key))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := sections[s.Key]; dup {
		panic("registry: a second section " + s.Key)
	}
	sections[s.Key] = s
}

// SourceKinds returns every registered kind of source, by Order then name.
func SourceKinds() []SourceKind {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]SourceKind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b SourceKind) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// Sections returns every registered section, by key.
func Sections() []Section {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]Section, 0, len(sections))
	for _, s := range sections {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Section) int { return cmp.Compare(a.Key, b.Key) })
	return out
}
