package alerts

import (
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
)

// SectionKey is where the rules are in a configuration file.
const SectionKey = "alerts"

func init() {
	registry.RegisterSection(registry.Section{
		Key: SectionKey,
		New: func() any { return &Config{} },
		Validate: func(sec any, interval time.Duration) error {
			return sec.(*Config).Validate(interval)
		},
	})
}

// ConfigOf returns the alerts section of c: the rules, webhooks and commands.
func ConfigOf(c *configs.Config) *Config { return c.Section(SectionKey).(*Config) }
