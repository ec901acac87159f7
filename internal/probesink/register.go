package probesink

import (
	"time"

	"github.com/heatsink-hpc/heatsink/registry"
	"github.com/heatsink-hpc/heatsink/registry/keypath"
)

// Section is sinks.probe; the sink is on when File is set.
type Section struct {
	File string `yaml:"file"`
	// Tag starts every line, so a reader can tell which configuration
	// wrote it.
	Tag string `yaml:"tag"`
}

func init() {
	registry.RegisterSink(registry.SinkKind{
		Name: "probe",
		New:  func() any { return &Section{Tag: "probe"} },
		Validate: func(sec any, _ time.Duration) error {
			if s := sec.(*Section); s.File != "" && s.Tag == "" {
				return keypath.New("empty: lines need a tag", "tag")
			}
			return nil
		},
		Enabled: func(sec any) bool { return sec.(*Section).File != "" },
		Build: func(_ registry.Env, sec any) (registry.Sink, error) {
			s := sec.(*Section)
			return Open(s.File, s.Tag)
		},
		Exclusive: true, // its lock
		Health:    func(s registry.Sink) registry.SinkHealth { return s.(*Sink).Health() },
	})
}
