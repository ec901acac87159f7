package collectors

import (
	"fmt"
	"os"
	"time"

	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/registry"
	"github.com/heatsink-hpc/heatsink/registry/keypath"
)

// StdoutFormat is the sinks.stdout section, a scalar: "" (off), "lp" or
// "json". The --stdout flag of collect and run sets it.
type StdoutFormat string

// Validate refuses a format NewStreamSink would not write.
func (f StdoutFormat) Validate() error {
	switch f {
	case "", "lp", "json":
		return nil
	}
	return keypath.New(fmt.Sprintf("%q is not one of lp, json", string(f)))
}

// The stdout sink is registered like any other sink, so the node builds
// and reloads it without naming it.
func init() {
	registry.RegisterSink(registry.SinkKind{
		Name:     "stdout",
		New:      func() any { return new(StdoutFormat) },
		Validate: func(sec any, _ time.Duration) error { return sec.(*StdoutFormat).Validate() },
		Enabled:  func(sec any) bool { return *sec.(*StdoutFormat) != "" },
		Build: func(_ registry.Env, sec any) (registry.Sink, error) {
			return NewStreamSink(os.Stdout, string(*sec.(*StdoutFormat)))
		},
	})
}

// StdoutOf returns the sinks.stdout section of c.
func StdoutOf(c *configs.Config) *StdoutFormat { return c.Section("sinks.stdout").(*StdoutFormat) }
