package tank

import "github.com/heatsink-hpc/heatsink/registry"

// sources.tanks is a list, one tank a source named tank:NAME.
func init() {
	registry.RegisterList(registry.List[Config]{
		Key: "tanks", Order: 110, Noun: "tank", Prefix: "tank",
		Name:     func(c *Config) string { return c.Name },
		Validate: (*Config).Validate,
		New: func(c Config) (registry.Source, error) {
			s, err := New(c)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
	})
}
