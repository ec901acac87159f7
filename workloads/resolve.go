package workloads

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Layer is one source of parameter values: Source names it in errors and
// notes ("--set", "--tuned runs/tune/best.yaml", "space set"), Values are
// its keys, each given once (ParseSet refuses a key twice in one source).
type Layer struct {
	Source string
	Values map[string]string
}

// Resolve decodes w's parameters from layers, lowest precedence first:
// every source of values (--tuned's best.yaml, --set, the tuner's
// configuration and its space's set) goes through here, as one map, so
// one duplicate policy holds everywhere. A key given twice within one layer
// cannot happen (ParseSet refuses it, naming the argument: the user meant
// one of them, and we cannot know which); a key given by two layers is the
// later one's, with a note naming both, because overriding a tuned value
// for one run (--tuned DIR --set threads=1) is the point of giving both.
// Errors are the decoder's, naming the key, and the layer the value came
// from.
func Resolve(w Workload, layers ...Layer) (Values, []string, error) {
	merged := map[string]string{}
	from := map[string]string{}
	var notes []string
	for _, l := range layers {
		for _, k := range slices.Sorted(maps.Keys(l.Values)) {
			v := l.Values[k]
			if prev, ok := from[k]; ok && merged[k] != v {
				notes = append(notes, fmt.Sprintf("%s %s=%s overrides %s=%s from %s", l.Source, k, v, k, merged[k], prev))
			}
			merged[k], from[k] = v, l.Source
		}
	}
	v, err := w.Decode(merged)
	if err != nil {
		if len(layers) > 1 {
			err = fmt.Errorf("workload %s: %w (values from %s)", w.Name(), err, sources(layers))
		} else {
			err = fmt.Errorf("workload %s: %w", w.Name(), err)
		}
		return Values{}, notes, err
	}
	return v, notes, nil
}

func sources(layers []Layer) string {
	names := make([]string, len(layers))
	for i, l := range layers {
		names[i] = l.Source
	}
	return strings.Join(names, ", ")
}
