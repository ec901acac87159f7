// Package point is heatsink's data model: every reading is an InfluxDB point
// (measurement, tags, fields, timestamp), serialised as line protocol on disk
// and on the wire.
//
// Field names carry their unit as a suffix (temp_c, power_w, energy_j); a field
// a device does not support is left out, never written as zero.
package point

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
)

// Tag identifies a device: host, gpu, chip, sensor, pdu, tank...
type Tag struct {
	Key, Value string
}

// Field is one reading. Value holds a float, integer, unsigned, string or bool.
type Field struct {
	Key   string
	Value lineprotocol.Value
}

// Point is one timestamped set of readings of one device.
type Point struct {
	Measurement string
	Tags        []Tag
	Fields      []Field
	Time        time.Time
}

// New returns a point with the given measurement and time.
func New(measurement string, t time.Time) Point {
	return Point{Measurement: measurement, Time: t}
}

// AddTag appends a tag; empty values are skipped, as line protocol cannot hold them.
func (p *Point) AddTag(key, value string) *Point {
	if value != "" {
		p.Tags = append(p.Tags, Tag{key, value})
	}
	return p
}

// SetTag sets a tag, replacing an existing one of the same key. An empty
// value removes the tag, as AddTag skips one: line protocol cannot hold it,
// and a point carrying it could not be encoded.
func (p *Point) SetTag(key, value string) *Point {
	for i := range p.Tags {
		if p.Tags[i].Key == key {
			if value == "" {
				p.Tags = slices.Delete(p.Tags, i, i+1)
				return p
			}
			p.Tags[i].Value = value
			return p
		}
	}
	return p.AddTag(key, value)
}

// Tag returns the value of the tag key, or "".
func (p *Point) Tag(key string) string {
	for _, t := range p.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return ""
}

// AddFloat appends a float field. NaN and ±Inf cannot be stored in line
// protocol and mean "no reading", so they are skipped.
func (p *Point) AddFloat(key string, v float64) *Point {
	if fv, ok := lineprotocol.FloatValue(v); ok {
		p.Fields = append(p.Fields, Field{key, fv})
	}
	return p
}

// AddInt appends a signed integer field.
func (p *Point) AddInt(key string, v int64) *Point {
	p.Fields = append(p.Fields, Field{key, lineprotocol.IntValue(v)})
	return p
}

// AddUint appends an unsigned integer field (counters).
func (p *Point) AddUint(key string, v uint64) *Point {
	p.Fields = append(p.Fields, Field{key, lineprotocol.UintValue(v)})
	return p
}

// AddBool appends a boolean field.
func (p *Point) AddBool(key string, v bool) *Point {
	p.Fields = append(p.Fields, Field{key, lineprotocol.BoolValue(v)})
	return p
}

// AddString appends a string field; invalid UTF-8 is skipped.
func (p *Point) AddString(key, v string) *Point {
	if sv, ok := lineprotocol.StringValue(v); ok {
		p.Fields = append(p.Fields, Field{key, sv})
	}
	return p
}

// Field returns the field named key.
func (p *Point) Field(key string) (lineprotocol.Value, bool) {
	for _, f := range p.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return lineprotocol.Value{}, false
}

// Float returns the field named key as a float64, converting integer kinds.
// It reports false when the field is absent or not numeric.
func (p *Point) Float(key string) (float64, bool) {
	v, ok := p.Field(key)
	if !ok {
		return 0, false
	}
	return Float(v)
}

// Float converts a numeric or boolean value to float64.
func Float(v lineprotocol.Value) (float64, bool) {
	switch v.Kind() {
	case lineprotocol.Float:
		return v.FloatV(), true
	case lineprotocol.Int:
		return float64(v.IntV()), true
	case lineprotocol.Uint:
		return float64(v.UintV()), true
	case lineprotocol.Bool:
		if v.BoolV() {
			return 1, true
		}
		return 0, true
	}
	return math.NaN(), false
}

// SeriesKey returns measurement and sorted tags in line-protocol form, the
// identity InfluxDB gives a series.
func (p *Point) SeriesKey() string {
	return string(AppendSeriesKey(nil, p.Measurement, sortedTags(p.Tags)))
}

// AppendSeriesKey appends the series key of a measurement and its tags
// ("gpu,gpu=0,uuid=GPU-1") to dst and returns the extended buffer. The tags
// are written in the order given: sorted by key, they make the key InfluxDB
// gives the series. A loop over millions of points passes the same dst back
// to build its keys without allocating.
func AppendSeriesKey(dst []byte, measurement string, tags []Tag) []byte {
	dst = append(dst, measurement...)
	for _, t := range tags {
		dst = append(dst, ',')
		dst = append(dst, t.Key...)
		dst = append(dst, '=')
		dst = append(dst, t.Value...)
	}
	return dst
}

func sortedTags(tags []Tag) []Tag {
	if slices.IsSortedFunc(tags, cmpTag) {
		return tags
	}
	s := slices.Clone(tags)
	slices.SortFunc(s, cmpTag)
	return s
}

func cmpTag(a, b Tag) int { return strings.Compare(a.Key, b.Key) }

// String renders the point as one line of line protocol (without newline).
func (p Point) String() string {
	var e Encoder
	if err := e.Encode(&p); err != nil {
		return fmt.Sprintf("<invalid point %s: %v>", p.Measurement, err)
	}
	return strings.TrimSuffix(string(e.Bytes()), "\n")
}
