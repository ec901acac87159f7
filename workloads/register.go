package workloads

import (
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
)

// SectionKey is where the runner's settings are in a configuration file.
const SectionKey = "runner"

func init() {
	registry.RegisterSection(registry.Section{
		Key:      SectionKey,
		New:      func() any { return &RunnerConfig{} },
		Validate: func(sec any, _ time.Duration) error { return sec.(*RunnerConfig).Validate() },
	})
}

// RunnerConfigOf returns the runner section of c, its defaults filled in.
func RunnerConfigOf(c *configs.Config) *RunnerConfig {
	return c.Section(SectionKey).(*RunnerConfig)
}
