// Package datamodel reads the measurement table of docs/data-model.md into
// Go values, so code that must agree with the contract (the Grafana
// dashboard's queries, the Prometheus names) is checked against the
// document itself rather than against a copy that could drift from it.
package datamodel

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/heatsink-hpc/heatsink/docs"
)

// Measurement is one row of the table: a measurement with the tags that
// identify its devices and the fields its sources write.
type Measurement struct {
	Name   string
	Tags   []string
	Fields []string
}

// CommonTags are on every point whatever its measurement: the collector
// adds host, and a node agent adds job while a Slurm job runs (the prose
// above the table says so).
var CommonTags = []string{"host", "job"}

// HasTag reports whether the measurement's points can carry the tag.
func (m Measurement) HasTag(key string) bool {
	return slices.Contains(CommonTags, key) || slices.Contains(m.Tags, key)
}

// HasField reports whether a source writes the field.
func (m Measurement) HasField(name string) bool { return slices.Contains(m.Fields, name) }

var (
	backticked    = regexp.MustCompile("`([a-z][a-z0-9_]*)`")
	parenthesised = regexp.MustCompile(`\([^()]*\)`)
)

// Parse reads the table rows | `measurement` (note) | tags | fields |;
// names are in backticks, and notes in parentheses are dropped so that
// example values (`package-0`) and config keys are not taken for names.
func Parse(md string) (map[string]Measurement, error) {
	out := map[string]Measurement{}
	for i, line := range strings.Split(md, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		m := backticked.FindStringSubmatch(cells[1])
		if m == nil {
			return nil, fmt.Errorf("data-model.md:%d: no measurement name in %q", i+1, strings.TrimSpace(cells[1]))
		}
		if _, dup := out[m[1]]; dup {
			return nil, fmt.Errorf("data-model.md:%d: measurement %s is listed twice", i+1, m[1])
		}
		out[m[1]] = Measurement{Name: m[1], Tags: names(cells[2]), Fields: names(cells[3])}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("data-model.md: no measurement table")
	}
	return out, nil
}

// Measurements returns the table of the data model heatsink was built with.
func Measurements() map[string]Measurement {
	m, err := Parse(docs.DataModel)
	if err != nil {
		panic(err) // the embedded document is checked by this package's tests
	}
	return m
}

func names(cell string) []string {
	for {
		c := parenthesised.ReplaceAllString(cell, "")
		if c == cell {
			break
		}
		cell = c
	}
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}
