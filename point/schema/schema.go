// Package schema is heatsink's data model as Go: the measurement, tag and
// field names of docs/data-model.md as constants, the table that says which
// tags and fields each measurement has, and the encoding and decoding of the
// points heatsink writes about itself and its jobs (event, iteration and
// alert), so that every writer and reader of those points agrees.
//
// docs/data-model.md stays the contract people read; this package's tests
// fail, naming the difference, when the two diverge. It lives beside point
// rather than in it because point is the wire form (types and line
// protocol) that every hot path imports, while this is the vocabulary.
package schema

import "slices"

// Measurement is one row of the data model's table: a measurement with the
// tags that identify its devices and the fields its sources write.
type Measurement struct {
	Name   string
	Tags   []string
	Fields []string
}

// HasTag reports whether the measurement's points can carry the tag. host,
// job and jobs are on every point whatever its measurement: the collector
// adds host, and a node agent adds job and jobs while Slurm jobs run.
func (m Measurement) HasTag(key string) bool {
	return key == TagHost || key == TagJob || key == TagJobs || slices.Contains(m.Tags, key)
}

// HasField reports whether a source writes the field.
func (m Measurement) HasField(name string) bool { return slices.Contains(m.Fields, name) }

// Measurements returns the table, keyed by measurement name. Each call
// returns a fresh copy, so a caller may change it.
func Measurements() map[string]Measurement {
	out := map[string]Measurement{}
	for _, m := range table() {
		out[m.Name] = m
	}
	return out
}

// Lookup returns the row of the measurement name.
func Lookup(name string) (Measurement, bool) {
	for _, m := range table() {
		if m.Name == name {
			return m, true
		}
	}
	return Measurement{}, false
}
