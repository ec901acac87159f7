package influx

import (
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
)

// SectionKey is where the sink's settings are in a configuration file.
const SectionKey = "sinks.influx"

func init() {
	registry.RegisterSection(registry.Section{
		Key:      SectionKey,
		New:      func() any { return &Config{} },
		Validate: func(sec any, _ time.Duration) error { return sec.(*Config).Validate() },
	})
}

// ConfigOf returns the sinks.influx section of c; the sink is on when its
// URL is set.
func ConfigOf(c *configs.Config) *Config { return c.Section(SectionKey).(*Config) }
