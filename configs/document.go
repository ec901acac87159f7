package configs

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/heatsink-hpc/heatsink/registry"
)

// A configuration file's shape is known only once every source and section
// has registered, so its Go type is built then: a struct of the core, of
// sources: and sinks: (their own keys, if any, and one field per registered section
// under them) and of the other registered sections, each field tagged with
// its key. Decoding into it with yaml.v3's KnownFields keeps the loader as
// strict as a static type would: a key nothing registered is refused with
// its file, line and path.

// newConfig returns a configuration whose sections hold their defaults.
func newConfig() *Config {
	type field struct {
		key string
		new func() any
	}
	var top, sources, sinks []field
	for _, k := range registry.SourceKinds() {
		sources = append(sources, field{"sources." + k.Name, k.New})
	}
	for _, s := range registry.Sections() {
		if strings.HasPrefix(s.Key, "sinks.") {
			sinks = append(sinks, field{s.Key, s.New})
		} else {
			top = append(top, field{s.Key, s.New})
		}
	}
	structOf := func(core reflect.Type, fs []field) reflect.Type {
		sf := []reflect.StructField{{Name: "Core", Type: core, Tag: `yaml:",inline"`}}
		for i, f := range fs {
			key := f.key[strings.LastIndex(f.key, ".")+1:]
			sf = append(sf, reflect.StructField{
				Name: "S" + strconv.Itoa(i), Type: reflect.TypeOf(f.new()).Elem(), Tag: reflect.StructTag(`yaml:"` + key + `"`)})
		}
		return reflect.StructOf(sf)
	}
	srcT := structOf(reflect.TypeFor[SourcesCore](), sources)
	// sinks: holds only the registered sinks' sections (its Core is empty).
	sinkT := structOf(reflect.TypeFor[struct{}](), sinks)
	rootF := []reflect.StructField{
		{Name: "Core", Type: reflect.TypeFor[Core](), Tag: `yaml:",inline"`},
		{Name: "Sources", Type: srcT, Tag: `yaml:"sources"`},
		{Name: "Sinks", Type: sinkT, Tag: `yaml:"sinks"`},
	}
	for i, f := range top {
		rootF = append(rootF, reflect.StructField{
			Name: "S" + strconv.Itoa(i), Type: reflect.TypeOf(f.new()).Elem(), Tag: reflect.StructTag(`yaml:"` + f.key + `"`)})
	}
	doc := reflect.New(reflect.StructOf(rootF))
	root := doc.Elem()
	c := &Config{
		Core:     root.Field(0).Addr().Interface().(*Core),
		Sources:  root.Field(1).Field(0).Addr().Interface().(*SourcesCore),
		doc:      doc,
		sections: map[string]any{},
	}
	// Each section starts as its New made it, so what the file leaves out
	// keeps its default.
	place := func(v reflect.Value, fs []field) {
		for i, f := range fs {
			fv := v.Field(i + 1)
			fv.Set(reflect.ValueOf(f.new()).Elem())
			c.sections[f.key] = fv.Addr().Interface()
		}
	}
	place(root.Field(1), sources)
	place(root.Field(2), sinks)
	for i, f := range top {
		fv := root.Field(3 + i)
		fv.Set(reflect.ValueOf(f.new()).Elem())
		c.sections[f.key] = fv.Addr().Interface()
	}
	return c
}
