package analysis

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf8"
)

// Decoding points.lp was two fifths of a report of a week: every line
// became a point.Point, with its tag and field slices and a
// lineprotocol.Value per field, only for add to look its group up and
// append its numbers. fast does the same for the lines that make up
// nearly all of a recording (a device already seen, its fields in the
// order of its last point, no escapes) straight from the line's bytes,
// without allocating, and leaves every other line to point.Reader.

// fastField is one numeric field of a line being decoded by fast: the
// field's position on the line and its value.
type fastField struct {
	at int
	v  float64
}

// fast appends the line b to its group if it can decode it exactly as
// point.Reader (nanosecond timestamps) and add would, and reports whether
// it did. It takes only a line whose text up to the first unescaped space
// (measurement and tags, escapes and order as written) add has already
// filed under a group (l.raw), whose numeric fields carry the keys at the
// positions of the group's previous point, and whose values and timestamp
// parse; anything else (a new device, a changed field list, an escaped
// field key, a malformed value) is declined, so the reader decodes the
// line and reports any error.
func (l *loader) fast(b []byte) bool {
	l.pending = nil
	l.seen += int64(len(b)) + 1
	sp := 0
	for sp < len(b) && b[sp] != ' ' {
		if b[sp] == '\\' {
			if sp+1 < len(b) && b[sp+1] == '\\' {
				return false // an escaped backslash: leave the escapes to the reader
			}
			sp++ // "\ " is a space inside the key, never its end
		}
		sp++
	}
	if sp == 0 || sp >= len(b) {
		return false
	}
	g, ok := l.raw[string(b[:sp])]
	if !ok {
		l.pending = b[:sp] // add files the group under this text
		return false
	}
	fields := l.fields[:0]
	i, at := sp+1, 0
	for {
		// Key: up to '=', matched against the key at this position.
		k := i
		for i < len(b) && b[i] != '=' {
			switch b[i] {
			case ' ', ',', '"', '\\':
				return false
			}
			i++
		}
		if i == k || i+1 >= len(b) {
			return false
		}
		key := b[k:i]
		i++
		if b[i] == '"' {
			// A string field: not a series, skipped as add skips it.
			end := bytes.IndexByte(b[i+1:], '"')
			if end < 0 || bytes.IndexByte(b[i+1:i+1+end], '\\') >= 0 || !utf8.Valid(b[i+1:i+1+end]) {
				return false
			}
			i += end + 2
		} else {
			v0 := i
			for i < len(b) && b[i] != ',' && b[i] != ' ' {
				i++
			}
			v, ok := fieldValue(b[v0:i])
			if !ok || at >= len(g.lastKeys) || g.lastKeys[at] != string(key) {
				return false
			}
			fields = append(fields, fastField{at: at, v: v})
		}
		at++
		if i >= len(b) {
			return false // no timestamp: the reader says so
		}
		if b[i] == ' ' {
			break
		}
		i++ // ','
	}
	if i+1 >= len(b) || b[i+1] == '+' { // line protocol's timestamps have no sign but '-'
		return false
	}
	ns, err := strconv.ParseInt(string(b[i+1:]), 10, 64)
	if err != nil {
		return false
	}
	l.fields = fields
	l.points++
	l.nfast++
	g.addTime(float64(ns-l.start)/1e9, l.want)
	n := len(g.times)
	for _, f := range fields {
		c := g.cols[g.lastCols[f.at]]
		if len(c.v) == n {
			c.v[n-1] = f.v // the same field twice in one point: the last wins
			continue
		}
		c.v = append(c.v, f.v)
	}
	g.fillNaN()
	return true
}

// fieldValue parses a field value that is not a string as line protocol
// does (float, integer with i, unsigned with u, boolean), and reports
// false for anything it would not accept or that is not a finite float.
func fieldValue(s []byte) (float64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	switch s[0] {
	case 't', 'T', 'f', 'F':
		switch string(s) {
		case "t", "T", "true", "True", "TRUE":
			return 1, true
		case "f", "F", "false", "False", "FALSE":
			return 0, true
		}
		return 0, false
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '.':
	default:
		return 0, false
	}
	switch s[len(s)-1] {
	case 'i':
		x, err := strconv.ParseInt(string(s[:len(s)-1]), 10, 64)
		return float64(x), err == nil
	case 'u':
		x, err := strconv.ParseUint(string(s[:len(s)-1]), 10, 64)
		return float64(x), err == nil
	}
	x, err := strconv.ParseFloat(string(s), 64)
	return x, err == nil && !math.IsInf(x, 0) && !math.IsNaN(x)
}
