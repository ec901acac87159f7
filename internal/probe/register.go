package probe

import (
	"path/filepath"

	"github.com/heatsink-hpc/heatsink/registry"
	"github.com/heatsink-hpc/heatsink/registry/keypath"
)

// Section is sources.probe.
type Section struct {
	Disabled bool `yaml:"disabled"`
	// File holds the probes; relative to the sysfs root when not absolute.
	File string `yaml:"file"`
}

func init() {
	registry.RegisterSource(registry.SourceKind{
		Name:  "probe",
		Order: 70,
		New:   func() any { return &Section{File: "class/probe/temps"} },
		Validate: func(sec any) error {
			if sec.(*Section).File == "" {
				return keypath.New("missing: the probes file", "file")
			}
			return nil
		},
		Build: func(env registry.Env, sec any) ([]registry.Source, error) {
			s := sec.(*Section)
			if s.Disabled {
				return nil, nil
			}
			path := s.File
			if !filepath.IsAbs(path) {
				path = filepath.Join(env.SysfsRoot, path)
			}
			return []registry.Source{New(path)}, nil
		},
	})
}
