package analysis

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/influxdata/line-protocol/v2/lineprotocol"
)

// SurveyPoints encodes each GPU of s as a survey_gpu point stamped at
// (docs/data-model.md): its survey.json entry as the record field, tagged
// with the run, host, index, UUID and model, so a later survey finds the
// last one of each GPU in InfluxDB by UUID. A GPU without a UUID cannot
// be found again and is left out.
func SurveyPoints(s Survey, at time.Time) ([]point.Point, error) {
	var out []point.Point
	for _, g := range s.GPUs {
		if g.UUID == "" {
			continue
		}
		b, err := json.Marshal(g)
		if err != nil {
			return nil, fmt.Errorf("encode survey %s GPU %s: %w", s.RunID, g.Index, err)
		}
		p := point.New(schema.SurveyGPU, at)
		p.AddTag(schema.TagRun, s.RunID).AddTag(schema.TagHost, cmp.Or(g.Host, s.Host)).AddTag(schema.TagGPU, g.Index).
			AddTag(schema.TagUUID, g.UUID).AddTag(schema.TagModel, g.Model)
		p.AddString(schema.FieldRecord, string(b))
		out = append(out, p)
	}
	return out, nil
}

// LastSurveys reads survey_gpu points back (from where, for errors) and
// keeps the latest of each UUID: an earlier "survey" to judge drift
// against whose GPUs may come from different surveys; its RunID lists
// them. It returns nil when there is none.
func LastSurveys(ps []point.Point, where string) (*Survey, error) {
	last := map[string]point.Point{}
	for _, p := range ps {
		if p.Measurement != schema.SurveyGPU {
			continue
		}
		u := p.Tag(schema.TagUUID)
		if q, ok := last[u]; !ok || p.Time.After(q.Time) {
			last[u] = p
		}
	}
	if len(last) == 0 {
		return nil, nil
	}
	s := &Survey{Schema: SurveySchema}
	var runs []string
	for _, u := range slices.Sorted(func(yield func(string) bool) {
		for k := range last {
			if !yield(k) {
				return
			}
		}
	}) {
		p := last[u]
		v, ok := p.Field(schema.FieldRecord)
		if !ok || v.Kind() != lineprotocol.String {
			return nil, fmt.Errorf("%s: survey_gpu of run %s, GPU %s: no string field %s", where, p.Tag(schema.TagRun), u, schema.FieldRecord)
		}
		var g SurveyGPU
		if err := json.Unmarshal([]byte(v.StringV()), &g); err != nil {
			return nil, fmt.Errorf("%s: survey_gpu of run %s, GPU %s: %w", where, p.Tag(schema.TagRun), u, err)
		}
		if g.UUID != u {
			return nil, fmt.Errorf("%s: survey_gpu of run %s tagged %s holds GPU %q", where, p.Tag(schema.TagRun), u, g.UUID)
		}
		s.GPUs = append(s.GPUs, g)
		if r := p.Tag(schema.TagRun); !slices.Contains(runs, r) {
			runs = append(runs, r)
		}
	}
	s.RunID = strings.Join(runs, ",")
	return s, nil
}
