package gpusim

import "github.com/heatsink-hpc/heatsink/registry"

// Section is sources.gpusim: the plant itself, so that each node's
// configuration file is its simulated machine.
type Section struct {
	Disabled bool `yaml:"disabled"`
	Plant    `yaml:",inline"`
}

func init() {
	registry.RegisterSource(registry.SourceKind{
		Name:  "gpusim",
		Order: 61,
		New:   func() any { return &Section{} },
		Validate: func(sec any) error {
			s := sec.(*Section)
			if s.Disabled || len(s.GPUs) == 0 {
				return nil
			}
			return s.Check()
		},
		Build: func(_ registry.Env, sec any) ([]registry.Source, error) {
			s := sec.(*Section)
			if s.Disabled || len(s.GPUs) == 0 {
				return nil, nil
			}
			return []registry.Source{New(s.Plant)}, nil
		},
	})
}
