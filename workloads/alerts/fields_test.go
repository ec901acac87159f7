package alerts

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestSchemaMatchesDataModel keeps the measurements rules may name in step
// with docs/data-model.md, the contract every source writes to.
func TestSchemaMatchesDataModel(t *testing.T) {
	b, err := os.ReadFile("../../docs/data-model.md")
	if err != nil {
		t.Fatal(err)
	}
	ticked := regexp.MustCompile("`([a-z][a-z0-9_]*)`")
	names := func(cell string) []string {
		var out []string
		for _, m := range ticked.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		return out
	}
	// Words in backticks in a fields cell that are values, not fields.
	values := map[string][]string{"alert": {"firing", "cleared"}}
	doc := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		m := names(cells[1])[0]
		doc[m] = true
		sch, ok := measurements[m]
		if !ok {
			t.Errorf("docs/data-model.md has measurement %s; add it to measurements in fields.go", m)
			continue
		}
		tags, fields := names(cells[2]), names(cells[3])
		for _, tag := range sch.tags {
			if !slices.Contains(tags, tag) {
				t.Errorf("%s: fields.go has tag %s, docs/data-model.md does not", m, tag)
			}
		}
		for f := range sch.fields {
			if !slices.Contains(fields, f) {
				t.Errorf("%s: fields.go has field %s, docs/data-model.md does not", m, f)
			}
		}
		if sch.openFields {
			continue
		}
		for _, f := range fields {
			if _, ok := sch.fields[f]; !ok && !slices.Contains(values[m], f) {
				t.Errorf("%s: docs/data-model.md has field %s; add it to fields.go", m, f)
			}
		}
	}
	for m := range measurements {
		if !doc[m] {
			t.Errorf("fields.go has measurement %s, docs/data-model.md does not", m)
		}
	}
}
