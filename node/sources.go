package node

import (
	"errors"
	"fmt"
	"os"

	"github.com/heatsink-hpc/heatsink/collectors"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
)

// built is a source and the kind of source that built it, so a reload can
// tell whether the source's part of the configuration changed.
type built struct {
	src  collectors.Source
	kind registry.SourceKind
}

// HostOf returns the host tag of cfg: its host key, else the machine's name.
func HostOf(cfg *configs.Config) string {
	if cfg.Host != "" {
		return cfg.Host
	}
	h, _ := os.Hostname()
	return h
}

// BuildSources builds every source cfg configures, through the registry,
// in the registry's order: the node's own sources over procfs and sysfs
// (whose roots are options, so tests and benchmarks read fixture trees),
// then the facility devices shared by many nodes (rack PDUs over SNMP,
// immersion tanks over REST), which only the hosts
// sources.facility_hosts names poll (all, when it names none).
func BuildSources(cfg *configs.Config) ([]collectors.Source, error) {
	bs, err := buildSources(cfg)
	if err != nil {
		return nil, err
	}
	out := make([]collectors.Source, len(bs))
	for i, b := range bs {
		out[i] = b.src
	}
	return out, nil
}

func buildSources(cfg *configs.Config) ([]built, error) {
	env := envOf(cfg)
	polls := cfg.Sources.PollsFacility(env.Host)
	var out []built
	for _, k := range registry.SourceKinds() {
		if k.Facility && !polls {
			continue
		}
		srcs, err := k.Build(env, cfg.Section("sources."+k.Name))
		if err != nil {
			closeBuilt(out)
			return nil, err
		}
		for _, s := range srcs {
			out = append(out, built{src: s, kind: k})
		}
	}
	return out, nil
}

// sourcePart is the part of cfg the source named name of kind k was built
// from, roots included.
func sourcePart(cfg *configs.Config, k registry.SourceKind, name string) any {
	sec := cfg.Section("sources." + k.Name)
	if k.Part != nil {
		sec = k.Part(sec, name)
	}
	return []any{cfg.SysfsRoot, cfg.ProcfsRoot, sec}
}

// DisableNodeSources switches off every source of cfg that is the node's
// own (not a facility device) and can be switched off.
func DisableNodeSources(cfg *configs.Config) {
	for _, k := range registry.SourceKinds() {
		if d, ok := cfg.Section("sources." + k.Name).(interface{ Disable() }); ok && !k.Facility {
			d.Disable()
		}
	}
}

func closeBuilt(bs []built) {
	srcs := make([]collectors.Source, len(bs))
	for i, b := range bs {
		srcs[i] = b.src
	}
	CloseSources(srcs)
}

// CloseSources closes the sources holding resources; a failure is printed,
// since nothing more can be done about it.
func CloseSources(srcs []collectors.Source) {
	for _, s := range srcs {
		if c, ok := s.(collectors.Closer); ok {
			if err := c.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
				fmt.Fprintf(os.Stderr, "heatsink: close %s: %v\n", s.Name(), err)
			}
		}
	}
}
