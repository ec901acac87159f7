package registry

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/registry/keypath"
)

// List is a facility section that is a list of devices, each its own
// source named Prefix:NAME (sources.pdus, sources.tanks): every entry is
// validated, names must be unique, and a reload keeps the sources whose
// entries did not change.
type List[C any] struct {
	// Key is the section's key under sources: ("pdus").
	Key   string
	Order int
	// Noun names a device in errors ("PDU"); Prefix is the source name's
	// ("pdu" for pdu:rack1).
	Noun, Prefix string
	// Name is an entry's name; Validate checks an entry; New builds its
	// source.
	Name     func(*C) string
	Validate func(*C) error
	New      func(C) (Source, error)
}

// RegisterList registers l as a facility source kind.
func RegisterList[C any](l List[C]) {
	RegisterSource(SourceKind{
		Name:     l.Key,
		Order:    l.Order,
		Facility: true,
		New:      func() any { return &[]C{} },
		Validate: func(sec any) error {
			names := map[string]bool{}
			cs := *sec.(*[]C)
			for i := range cs {
				c, at := &cs[i], strconv.Itoa(i)
				if err := l.Validate(c); err != nil {
					return inList(err, at)
				}
				if names[l.Name(c)] {
					return keypath.New(fmt.Sprintf("a second %s named %q", l.Noun, l.Name(c)), at, "name")
				}
				names[l.Name(c)] = true
			}
			return nil
		},
		Build: func(_ Env, sec any) ([]Source, error) {
			var out []Source
			for i, c := range *sec.(*[]C) {
				s, err := l.New(c)
				if err != nil {
					for _, o := range out {
						if cl, ok := o.(io.Closer); ok {
							cl.Close()
						}
					}
					return nil, fmt.Errorf("sources.%s.%d: %w", l.Key, i, err)
				}
				out = append(out, s)
			}
			return out, nil
		},
		Part: func(sec any, source string) any {
			name, _ := strings.CutPrefix(source, l.Prefix+":")
			for _, c := range *sec.(*[]C) {
				if l.Name(&c) == name {
					return c
				}
			}
			return nil
		},
	})
}

// inList puts an entry's error under its index in the list.
func inList(err error, at string) error {
	var ke *keypath.Error
	if errors.As(err, &ke) {
		return keypath.New(ke.Msg, append([]string{at}, ke.Path...)...)
	}
	return keypath.New(err.Error(), at)
}
