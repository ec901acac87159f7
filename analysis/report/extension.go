package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/heatsink-hpc/heatsink/analysis"
)

// extensionSections are the registered analyses' parts of the report, in
// their order: what each found, or why it found nothing.
func extensionSections(rep *analysis.Report) []section {
	var out []section
	for _, e := range analysis.Extensions() {
		s := section{Title: e.Title}
		res, ok := rep.Analyses[e.Name]
		switch {
		case !ok && rep.NotComputed[e.Name] != "":
			s.Paras = append(s.Paras, "Not computed: "+rep.NotComputed[e.Name]+".")
		case !ok:
			continue // a report from a heatsink without it
		case e.Render != nil:
			es := e.Render(res)
			s.Paras, s.List = es.Paras, es.List
			if len(es.Head) > 0 {
				s.Table = &table{Head: es.Head, Rows: es.Rows}
			}
		default:
			s.List = jsonFields(res)
		}
		out = append(out, s)
	}
	return out
}

// jsonFields lists a result's JSON fields as name: value, for an
// extension that renders nothing of its own.
func jsonFields(res any) []string {
	b, err := json.Marshal(res)
	if err != nil {
		return []string{fmt.Sprintf("(cannot be shown: %v)", err)}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return []string{string(b)}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+": "+string(m[k]))
	}
	return out
}
