package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/influxdata/line-protocol/v2/lineprotocol"
)

// EvaluationPoint encodes an evaluation's record as the tune_evaluation
// measurement of docs/data-model.md: the tune.json itself as the record
// field, so the database holds what the run directory holds.
func EvaluationPoint(r Record, run string, at time.Time) (point.Point, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return point.Point{}, fmt.Errorf("encode evaluation of run %s: %w", run, err)
	}
	p := point.New(schema.TuneEvaluation, at)
	p.AddTag(schema.TagRun, run).AddTag(schema.TagSpace, r.Space)
	p.AddString(schema.FieldRecord, string(b))
	return p, nil
}

// PointWriter takes points to store (the InfluxDB sink).
type PointWriter interface {
	Write([]point.Point) error
}

// Publisher is an evaluator that also writes each evaluation's record (the
// tune.json its inner evaluator wrote into the evaluation's run directory)
// to a point store, so later tuning runs find it there.
type Publisher struct {
	Evaluator
	W PointWriter
}

// Evaluate evaluates through the inner evaluator, then publishes.
func (p Publisher) Evaluate(ctx context.Context, t Task, c Config) (Result, error) {
	res, err := p.Evaluator.Evaluate(ctx, t, c)
	if res.Run == "" {
		return res, err
	}
	b, rerr := os.ReadFile(filepath.Join(res.Run, RecordFile))
	var rec Record
	if rerr == nil {
		rerr = json.Unmarshal(b, &rec)
	}
	if rerr != nil {
		return res, errors.Join(err, fmt.Errorf("publish evaluation %s: %w", res.Run, rerr))
	}
	pt, perr := EvaluationPoint(rec, filepath.Base(res.Run), time.Now())
	if perr == nil {
		perr = p.W.Write([]point.Point{pt})
	}
	if perr != nil {
		perr = fmt.Errorf("publish evaluation %s: %w", res.Run, perr)
	}
	return res, errors.Join(err, perr)
}

// PointQuery reads back every point of a measurement whose tags equal
// those given (recordings/influxhistory.QueryMeasurement on a configuration).
type PointQuery func(ctx context.Context, measurement string, tags map[string]string, fn func(point.Point)) error

// LoadInfluxSources reads the evaluations of earlier tuning runs stored as
// tune_evaluation points, as LoadSources reads their run directories: those
// of the space, with the objective spec given, that broke no constraint.
// where names the store in errors.
func LoadInfluxSources(ctx context.Context, q PointQuery, where string, s *Space, spec string) ([]Observation, error) {
	var obs []Observation
	var bad error
	err := q(ctx, schema.TuneEvaluation, map[string]string{schema.TagSpace: s.Name}, func(p point.Point) {
		if bad != nil {
			return
		}
		v, ok := p.Field(schema.FieldRecord)
		if ok {
			ok = v.Kind() == lineprotocol.String
		}
		if !ok {
			bad = fmt.Errorf("%s: tune_evaluation of run %s at %s: no string field %s", where, p.Tag(schema.TagRun), p.Time.Format(time.RFC3339Nano), schema.FieldRecord)
			return
		}
		var r Record
		if err := json.Unmarshal([]byte(v.StringV()), &r); err != nil {
			bad = fmt.Errorf("%s: tune_evaluation of run %s: %w", where, p.Tag(schema.TagRun), err)
			return
		}
		if r.Space != s.Name || r.Spec != spec || r.Violation != "" || r.Objective == nil {
			return
		}
		c, err := s.Parse(r.Values)
		if err != nil {
			bad = fmt.Errorf("%s: tune_evaluation of run %s: %w", where, p.Tag(schema.TagRun), err)
			return
		}
		obs = append(obs, Observation{Task: r.Task, Config: c, Objective: *r.Objective})
	})
	if err != nil {
		return nil, fmt.Errorf("sources %s: %w", where, err)
	}
	return obs, bad
}
