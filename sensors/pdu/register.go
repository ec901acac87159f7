package pdu

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/configs/keypath"
	"github.com/heatsink-hpc/heatsink/registry"
)

// sources.pdus is a list, one PDU a source named pdu:NAME.
func init() {
	registry.RegisterSource(registry.SourceKind{
		Name:     "pdus",
		Order:    100,
		Facility: true,
		New:      func() any { return &[]Config{} },
		Validate: func(sec any) error {
			names := map[string]bool{}
			cs := *sec.(*[]Config)
			for i := range cs {
				c, at := &cs[i], strconv.Itoa(i)
				if err := c.Validate(); err != nil {
					return inList(err, at)
				}
				if names[c.Name] {
					return keypath.New(fmt.Sprintf("a second PDU named %q", c.Name), at, "name")
				}
				names[c.Name] = true
			}
			return nil
		},
		Build: func(_ registry.Env, sec any) ([]registry.Source, error) {
			var out []registry.Source
			for i, c := range *sec.(*[]Config) {
				s, err := New(c)
				if err != nil {
					closeAll(out)
					return nil, fmt.Errorf("sources.pdus.%d: %w", i, err)
				}
				out = append(out, s)
			}
			return out, nil
		},
		Part: func(sec any, source string) any {
			name, _ := strings.CutPrefix(source, "pdu:")
			for _, c := range *sec.(*[]Config) {
				if c.Name == name {
					return c
				}
			}
			return nil
		},
	})
}

// inList puts a PDU's error under its index in the list.
func inList(err error, at string) error {
	var ke *keypath.Error
	if errors.As(err, &ke) {
		return keypath.New(ke.Msg, append([]string{at}, ke.Path...)...)
	}
	return keypath.New(err.Error(), at)
}

func closeAll(srcs []registry.Source) {
	for _, s := range srcs {
		s.(*Source).Close()
	}
}
