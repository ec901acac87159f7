package tank

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/configs/keypath"
	"github.com/heatsink-hpc/heatsink/registry"
)

// sources.tanks is a list, one tank a source named tank:NAME.
func init() {
	registry.RegisterSource(registry.SourceKind{
		Name:     "tanks",
		Order:    110,
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
					return keypath.New(fmt.Sprintf("a second tank named %q", c.Name), at, "name")
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
					return nil, fmt.Errorf("sources.tanks.%d: %w", i, err)
				}
				out = append(out, s)
			}
			return out, nil
		},
		Part: func(sec any, source string) any {
			name, _ := strings.CutPrefix(source, "tank:")
			for _, c := range *sec.(*[]Config) {
				if c.Name == name {
					return c
				}
			}
			return nil
		},
	})
}

// inList puts a tank's error under its index in the list.
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
