package pdu

import "github.com/heatsink-hpc/heatsink/registry"

// sources.pdus is a list, one PDU a source named pdu:NAME.
func init() {
	registry.RegisterList(registry.List[Config]{
		Key: "pdus", Order: 100, Noun: "PDU", Prefix: "pdu",
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
