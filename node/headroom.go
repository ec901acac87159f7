package node

import (
	"log/slog"
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
	"github.com/heatsink-hpc/heatsink/slurm"
)

// HeadroomKey is where the thermal-headroom option is in a configuration
// file. The slurm package may not import the registry (docs/architecture.md's
// rooms), so its sink is registered here, beside the agent that runs it.
const HeadroomKey = "sinks.slurm_headroom"

func init() {
	registry.RegisterSink(registry.SinkKind{
		Name: "slurm_headroom",
		New: func() any {
			c := slurm.DefaultHeadroomConfig()
			return &c
		},
		Validate: func(sec any, _ time.Duration) error { return sec.(*slurm.HeadroomConfig).Validate() },
		Enabled:  func(sec any) bool { return sec.(*slurm.HeadroomConfig).Enabled },
		Build: func(_ registry.Env, sec any) (registry.Sink, error) {
			return slurm.StartHeadroom(slurm.Client{}, *sec.(*slurm.HeadroomConfig), slog.Default())
		},
		Health: func(s registry.Sink) registry.SinkHealth {
			out, err := s.(*slurm.HeadroomSink).Last()
			if err != nil {
				return registry.SinkHealth{Problem: err.Error()}
			}
			return registry.SinkHealth{OK: true, Problem: out.Why}
		},
	})
}

// HeadroomOf returns the sinks.slurm_headroom section of c.
func HeadroomOf(c *configs.Config) *slurm.HeadroomConfig {
	return c.Section(HeadroomKey).(*slurm.HeadroomConfig)
}
