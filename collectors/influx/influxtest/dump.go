package influxtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
)

// Points returns every point stored in the database, read back through
// InfluxQL (`SELECT * ... GROUP BY *`), a path independent of the Flux
// export, so tests can compare what was written with what landed.
// Numbers come back from the JSON API without their type: integers as Int,
// others as Float; compare them with point.Float.
func (s *Server) Points(measurements ...string) ([]point.Point, error) {
	from := "/.*/"
	if len(measurements) > 0 {
		q := make([]string, len(measurements))
		for i, m := range measurements {
			q[i] = `"` + strings.ReplaceAll(m, `"`, `\"`) + `"`
		}
		from = strings.Join(q, ",")
	}
	b, err := s.query(s.Token, "SELECT * FROM "+from+" GROUP BY *")
	if err != nil {
		return nil, err
	}
	var r struct {
		Results []struct {
			Series []struct {
				Name    string            `json:"name"`
				Tags    map[string]string `json:"tags"`
				Columns []string          `json:"columns"`
				Values  [][]any           `json:"values"`
			} `json:"series"`
		} `json:"results"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decode query result: %w", err)
	}
	var out []point.Point
	for _, res := range r.Results {
		for _, ser := range res.Series {
			keys := make([]string, 0, len(ser.Tags))
			for k, v := range ser.Tags {
				if v != "" {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, row := range ser.Values {
				if len(row) != len(ser.Columns) {
					return nil, fmt.Errorf("series %s: row of %d values for %d columns", ser.Name, len(row), len(ser.Columns))
				}
				ns, err := row[0].(json.Number).Int64()
				if err != nil {
					return nil, fmt.Errorf("series %s: time %v: %w", ser.Name, row[0], err)
				}
				p := point.New(ser.Name, time.Unix(0, ns))
				for _, k := range keys {
					p.AddTag(k, ser.Tags[k])
				}
				for i := 1; i < len(row); i++ {
					switch v := row[i].(type) {
					case nil:
					case json.Number:
						if n, err := v.Int64(); err == nil && !strings.ContainsAny(string(v), ".eE") {
							p.AddInt(ser.Columns[i], n)
						} else if f, err := v.Float64(); err == nil {
							p.AddFloat(ser.Columns[i], f)
						}
					case string:
						p.AddString(ser.Columns[i], v)
					case bool:
						p.AddBool(ser.Columns[i], v)
					}
				}
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// Count returns how many points the database holds.
func (s *Server) Count() (int, error) {
	pts, err := s.Points()
	return len(pts), err
}

// AssertHolds fails t unless every written point is stored with the same
// field values. InfluxDB keeps the last point written for a series and
// timestamp, so the last one written wins here too. With exact, the
// database must hold nothing else.
func (s *Server) AssertHolds(t testing.TB, written []point.Point, exact bool) {
	t.Helper()
	got, err := s.Points()
	if err != nil {
		t.Fatal(err)
	}
	key := func(p *point.Point) string { return p.SeriesKey() + " " + fmt.Sprint(p.Time.UnixNano()) }
	stored := map[string]*point.Point{}
	for i := range got {
		stored[key(&got[i])] = &got[i]
	}
	last := map[string]*point.Point{}
	var order []string
	for i := range written {
		k := key(&written[i])
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = &written[i]
	}
	missing, wrong := 0, 0
	for _, k := range order {
		w := last[k]
		st, ok := stored[k]
		if !ok {
			if missing++; missing <= 5 {
				t.Errorf("point not in InfluxDB: %s", w)
			}
			continue
		}
		for _, f := range w.Fields {
			wv, numeric := point.Float(f.Value)
			var same bool
			if sv, ok := st.Float(f.Key); ok && numeric {
				same = sv == wv
			} else if v, ok := st.Field(f.Key); ok {
				same = v.String() == f.Value.String()
			}
			if !same {
				if wrong++; wrong <= 5 {
					v, _ := st.Field(f.Key)
					t.Errorf("%s: field %s is %v in InfluxDB, %v was written", k, f.Key, v, f.Value)
				}
			}
		}
	}
	if missing > 0 || wrong > 0 {
		t.Errorf("%d of %d distinct points missing, %d fields differ", missing, len(order), wrong)
	}
	if exact && len(stored) != len(order) {
		t.Errorf("InfluxDB holds %d points, %d distinct were written", len(stored), len(order))
	}
}
