package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/heatsink-hpc/heatsink/analysis"
	"github.com/heatsink-hpc/heatsink/collectors/influx"
	"github.com/heatsink-hpc/heatsink/configs"
	"github.com/heatsink-hpc/heatsink/point"
	"github.com/heatsink-hpc/heatsink/point/schema"
	"github.com/heatsink-hpc/heatsink/recordings/influxhistory"
)

// surveyAgainst is what --against names: an earlier survey's run
// directory, read at once, or "influx" ("influx:BUCKET"): the last survey
// of each GPU's UUID in the configured InfluxDB, read once the survey
// knows its GPUs.
type surveyAgainst struct {
	src    string
	dir    *analysis.Survey
	influx *influx.Config
}

func newSurveyAgainst(src string, cfg *configs.Config) (surveyAgainst, error) {
	a := surveyAgainst{src: src}
	switch {
	case src == "":
	case src == "influx" || strings.HasPrefix(src, "influx:"):
		ic := *influx.ConfigOf(cfg)
		if !ic.Enabled() {
			return a, fmt.Errorf("--against %s: no InfluxDB configured (sinks.influx.url in --config)", src)
		}
		if b, ok := strings.CutPrefix(src, "influx:"); ok {
			ic.Bucket = b
		}
		a.influx = &ic
	default:
		s, err := analysis.ReadSurvey(src)
		if err != nil {
			return a, fmt.Errorf("--against: %w", err)
		}
		a.dir = &s
	}
	return a, nil
}

// earlier returns the survey to judge the GPUs of uuids against, nil with
// the reason where there is none.
func (a surveyAgainst) earlier(ctx context.Context, uuids []string) (*analysis.Survey, string, error) {
	switch {
	case a.dir != nil:
		return a.dir, "", nil
	case a.influx == nil:
		return nil, "no earlier survey given (--against DIR or --against influx)", nil
	}
	var ps []point.Point
	for _, u := range uuids {
		err := influxhistory.QueryMeasurement(ctx, *a.influx, schema.SurveyGPU, map[string]string{schema.TagUUID: u}, func(p point.Point) { ps = append(ps, p) })
		if err != nil {
			return nil, "", fmt.Errorf("--against %s: %w", a.src, err)
		}
	}
	where := fmt.Sprintf("InfluxDB %s bucket %s", a.influx.URL, a.influx.Bucket)
	s, err := analysis.LastSurveys(ps, where)
	if s == nil && err == nil {
		return nil, fmt.Sprintf("no earlier survey of these GPUs' UUIDs in %s", where), nil
	}
	return s, "", err
}

// judgeSurvey analyses the survey's run with opts and judges it against the earlier one, writes
// survey.json, and where an InfluxDB is configured publishes each GPU as a
// survey_gpu point for the next survey's --against influx; a failure to
// publish is said, not fatal: the verdict stands.
func judgeSurvey(ctx context.Context, run *analysis.Run, opts analysis.Options, a surveyAgainst, cfg *configs.Config, out string) (analysis.Survey, error) {
	rep := analysis.Analyze(run, opts)
	rule := analysis.DefaultSurveyRule()
	var uuids []string
	for _, g := range analysis.JudgeSurvey(rep, nil, rule).GPUs {
		if g.UUID != "" {
			uuids = append(uuids, g.UUID)
		}
	}
	against, why, err := a.earlier(ctx, uuids)
	if err != nil {
		return analysis.Survey{}, err
	}
	s := analysis.JudgeSurveyRun(run, rep, against, rule)
	if why != "" {
		s.NotComputed["drift"] = why
	}
	if err := analysis.WriteSurvey(out, s); err != nil {
		return s, err
	}
	if err := publishSurvey(ctx, cfg, out, s); err != nil {
		slog.Error("survey not published to InfluxDB: the next --against influx will not find it", "err", err)
	}
	return s, nil
}

// publishSurvey writes s's GPUs as survey_gpu points to the configured
// InfluxDB, spooled under out/influx-spool (what cannot be sent by the
// sink's drain timeout stays there); without sinks.influx it does nothing.
func publishSurvey(ctx context.Context, cfg *configs.Config, out string, s analysis.Survey) error {
	ic := *influx.ConfigOf(cfg)
	if !ic.Enabled() || len(s.GPUs) == 0 {
		return nil
	}
	ps, err := analysis.SurveyPoints(s, time.Now())
	if err != nil {
		return err
	}
	ic.SpoolDir = filepath.Join(absDir(out), "influx-spool")
	sink, err := influx.Start(ctx, influx.Options{Config: ic, Logger: slog.Default()})
	if err != nil {
		return fmt.Errorf("publish survey %s: %w", s.RunID, err)
	}
	if err := sink.Write(ps); err != nil {
		sink.Close()
		return fmt.Errorf("publish survey %s: %w", s.RunID, err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("publish survey %s (spooled under %s): %w", s.RunID, ic.SpoolDir, err)
	}
	return nil
}
